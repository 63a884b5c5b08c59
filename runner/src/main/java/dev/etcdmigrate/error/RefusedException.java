package dev.etcdmigrate.error;

/** The runner will not do it (an unsupported transition, data that contradicts what the node claims); nothing was touched. */
public non-sealed class RefusedException extends MigrateException {
    public RefusedException(String message) {
        super(message, null);
    }

    @Override
    public final ExitStatus status() {
        return ExitStatus.REFUSED;
    }
}
