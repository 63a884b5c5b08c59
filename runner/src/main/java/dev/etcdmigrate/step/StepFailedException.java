package dev.etcdmigrate.step;

/** A step could not complete; the message says what failed and what state the data dir is in. */
public final class StepFailedException extends dev.etcdmigrate.error.FailedException {
    public StepFailedException(String message) {
        super(message);
    }

    public StepFailedException(String message, Throwable cause) {
        super(message, cause);
    }
}
