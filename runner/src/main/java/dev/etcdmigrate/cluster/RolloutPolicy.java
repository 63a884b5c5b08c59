package dev.etcdmigrate.cluster;

import java.time.Duration;

/**
 * The rollout's tunables, in one place.
 *
 * @param raftIndexBound how far another member's raft index may be behind the leader's for this one to restart
 * @param poll the interval between two reads of the cluster while the rules wait (no deadline: an operator may
 *     edit the other members hours later)
 * @param releasePatience how long a release, or the read of a record this runner noted as held, is tried while
 *     no member answers (a leader change, a quorum just back after a pod died)
 * @param releaseTry how long the one try to release takes at most, through every endpoint together, while this
 *     member is down and its vote may be what the others lack (one client request's time: a cluster with a quorum
 *     answers within it, and a member kept down longer than that costs the others their writes)
 */
public record RolloutPolicy(long raftIndexBound, Duration poll, Duration releasePatience, Duration releaseTry) {

    private static final Duration DEFAULT_RELEASE_TRY = Duration.ofSeconds(3);

    public static final RolloutPolicy DEFAULT =
            new RolloutPolicy(1000, Duration.ofMillis(500), Duration.ofSeconds(30), DEFAULT_RELEASE_TRY);

    public RolloutPolicy(long raftIndexBound, Duration poll, Duration releasePatience) {
        this(raftIndexBound, poll, releasePatience, DEFAULT_RELEASE_TRY);
    }

    /** Reads of a noted record within {@link #releasePatience}: a leader change passes meanwhile. */
    public int patientReads() {
        return (int) Math.max(1, releasePatience.toMillis() / Math.max(1, poll.toMillis()));
    }
}
