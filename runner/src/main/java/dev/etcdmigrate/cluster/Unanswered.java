package dev.etcdmigrate.cluster;

import java.io.IOException;

/**
 * No etcd of the cluster was there for the first read of one pass of the rules ({@link RolloutCoordinator}): every
 * endpoint refused or could not be reached (not {@link ClusterView.EtcdReached}). Nothing was decided.
 */
final class Unanswered extends Exception {
    final IOException cause;

    Unanswered(IOException cause) {
        super(cause.getMessage(), cause, false, false);
        this.cause = cause;
    }
}
