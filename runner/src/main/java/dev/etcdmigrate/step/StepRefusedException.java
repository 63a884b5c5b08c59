package dev.etcdmigrate.step;

import dev.etcdmigrate.error.RefusedException;

/**
 * A step found, on a copy, that the data cannot be carried (e.g. keys etcd2 cannot hold): refused with
 * the data dir as it was, exit 3.
 */
public final class StepRefusedException extends RefusedException {
    public StepRefusedException(String message) {
        super(message);
    }
}
