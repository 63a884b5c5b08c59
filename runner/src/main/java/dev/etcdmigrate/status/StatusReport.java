package dev.etcdmigrate.status;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What {@code etcd-migrate status} found: one reading of a cluster mid-rollout or at rest. A value only; {@link
 * StatusReader} builds it, {@link StatusText} and {@link StatusJson} render it and read nothing themselves.
 */
public record StatusReport(
        State state,
        String summary,
        List<String> endpoints,
        Optional<String> target,
        Optional<String> clusterVersion,
        Optional<String> downgradeJob,
        List<MemberRow> members,
        Optional<RecordRow> record) {

    /** The exit status {@code status} ends with; the codes are {@code error.ExitStatus}'s. */
    public enum State {
        DONE,
        ROLLING,
        STUCK
    }

    /**
     * A member as the cluster lists it and as its own client URL answered; {@code waitsFor} is what the rollout's
     * own rules say it waits for before its next restart (empty when it is at the target or no target is known).
     */
    public record MemberRow(
            String name,
            boolean answers,
            String problem,
            Optional<String> etcdVersion,
            Optional<String> line,
            Optional<String> storageVersion,
            boolean leader,
            long raftIndex,
            long raftLag,
            Optional<String> nextLeg,
            Optional<String> waitsFor) {}

    /**
     * The restart record: who holds it, for which restart, since when; {@code stale} says why no runner will release
     * it (empty when a runner still may), and {@code removeCommand} is the exact command that removes it then;
     * {@code serves} the holder's client URLs the record names (where the take-over reads it; empty in a record of
     * the release before).
     */
    public record RecordRow(
            String holder,
            String from,
            String to,
            String since,
            Duration age,
            long modRevision,
            java.util.List<String> serves,
            Optional<String> stale,
            Optional<String> removeCommand) {}
}
