package dev.etcdmigrate.cluster;

/** The record holds a value this runner cannot read: someone else's key, never overwritten. */
public final class RecordUnreadableException extends dev.etcdmigrate.error.RefusedException {
    public RecordUnreadableException(String message) {
        super(message);
    }
}
