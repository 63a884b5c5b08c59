package dev.etcdmigrate.error;

/** Work failed part-way; the message says what failed and what state the data dir is in. */
public non-sealed class FailedException extends MigrateException {
    public FailedException(String message) {
        super(message, null);
    }

    public FailedException(String message, Throwable cause) {
        super(message, cause);
    }

    @Override
    public final ExitStatus status() {
        return ExitStatus.FAILED;
    }
}
