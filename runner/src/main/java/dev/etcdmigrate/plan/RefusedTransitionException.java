package dev.etcdmigrate.plan;

/** The planner will not carry the data from its version to the target; nothing was touched. */
public final class RefusedTransitionException extends dev.etcdmigrate.error.RefusedException {
    public RefusedTransitionException(String message) {
        super(message);
    }
}
