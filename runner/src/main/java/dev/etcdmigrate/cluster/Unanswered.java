package dev.etcdmigrate.cluster;

import java.io.IOException;

/** No member answered the first read of one pass of the rules ({@link RolloutCoordinator}): nothing was decided. */
final class Unanswered extends Exception {
    final IOException cause;

    Unanswered(IOException cause) {
        super(cause.getMessage(), cause, false, false);
        this.cause = cause;
    }
}
