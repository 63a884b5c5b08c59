package dev.etcdmigrate.error;

/**
 * The one root of what ends a run early, each kind with its exit code: {@link UsageException} (2: bad
 * input, nothing changed), {@link RefusedException} (3: the data or the transition is refused, nothing
 * changed) and {@link FailedException} (1: something failed while working; the message says what the
 * data dir holds now). {@code Main} maps this one type to the exit code.
 */
public abstract sealed class MigrateException extends Exception
        permits UsageException, RefusedException, FailedException {

    MigrateException(String message, Throwable cause) {
        super(message, cause);
    }

    /** Which of the exit statuses (see {@link ExitStatus}) this kind of ending is. */
    public abstract ExitStatus status();

    public final int exitCode() {
        return status().code();
    }
}
