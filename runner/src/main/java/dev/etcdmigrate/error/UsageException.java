package dev.etcdmigrate.error;

/** Bad command line, environment, bin dir or data dir input: the message says what was wrong; nothing was touched. */
public non-sealed class UsageException extends MigrateException {
    public UsageException(String message) {
        super(message, null);
    }

    @Override
    public final ExitStatus status() {
        return ExitStatus.USAGE;
    }
}
