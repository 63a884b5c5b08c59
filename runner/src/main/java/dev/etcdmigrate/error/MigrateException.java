package dev.etcdmigrate.error;

/**
 * The one root of what ends a run early, each kind with its exit code: {@link UsageException} (2: bad
 * input, nothing changed), {@link RefusedException} (3: the data or the transition is refused, nothing
 * changed) and {@link FailedException} (1: something failed while working; the message says what the
 * data dir holds now). {@code Main} maps this one type to the exit code.
 */
public abstract sealed class MigrateException extends Exception permits UsageException, RefusedException, FailedException {

    public static final int OK = 0;
    public static final int FAILED = 1;
    public static final int USAGE = 2;
    public static final int REFUSED = 3;

    MigrateException(String message, Throwable cause) {
        super(message, cause);
    }

    public abstract int exitCode();
}
