package dev.etcdmigrate.provision;

/** A release could not be provisioned; nothing of it was left in the bin dir. */
public final class ProvisionException extends dev.etcdmigrate.error.FailedException {
    public ProvisionException(String message) {
        super(message);
    }

    public ProvisionException(String message, Throwable cause) {
        super(message, cause);
    }
}
