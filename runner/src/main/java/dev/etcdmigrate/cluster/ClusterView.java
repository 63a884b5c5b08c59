package dev.etcdmigrate.cluster;

import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * What the rollout's coordination asks of the cluster, and nothing else: the port between the rules
 * ({@link RolloutCoordinator}) and etcd's client API. Every write is a transaction that compares the
 * record's revision, so two runners never both believe they hold it.
 */
public interface ClusterView {

    /**
     * Every member the cluster lists, each with what its own client URL answered (Maintenance/Status) or why not.
     * When no endpoint gives the list: {@link EtcdReached} if one reached an etcd, else a plain {@link IOException}.
     */
    List<Member> members() throws IOException, InterruptedException, MigrateException;

    /** The cluster version a reachable member reports (empty: none reachable or not yet decided). */
    Optional<MinorLine> clusterVersion() throws IOException, InterruptedException, MigrateException;

    /** The restart record, if one exists; a value that is not a {@link RecordValue} is a refusal (someone else's key). */
    Optional<Record> record() throws IOException, InterruptedException, MigrateException;

    /** Creates the record where none exists (create revision 0); empty when another runner's record is there. */
    Optional<Record> create(RecordValue value) throws IOException, InterruptedException, MigrateException;

    /** Deletes the record if it is still this one (its mod revision); false when it changed or went. */
    boolean delete(Record record) throws IOException, InterruptedException, MigrateException;

    /**
     * This view with every call on the record (read, create, delete, holds) answered within {@code budget} in all,
     * however many endpoints it walks: the one try a runner makes while its own member is down, whose vote the others
     * may lack, must not hold that member down for a timeout per endpoint.
     */
    default ClusterView within(java.time.Duration budget) {
        return this;
    }

    /** Whether the record is still this one (a transaction on its mod revision, so a quorum answers). */
    boolean holds(Record record) throws IOException, InterruptedException, MigrateException;

    /**
     * What the member named {@code member} answers (Maintenance/Status) on the first of {@code urls} that answers as
     * that member (an answer whose member ID is not the one the member list gives that name is another etcd's, and
     * does not count). Empty when none does: no failure, since "it does not answer" is an answer to the rules.
     */
    Optional<Status> statusAt(String member, List<String> urls) throws InterruptedException, MigrateException;

    /**
     * A linearizable read (of the record's key) served through the client URL the member list gives {@code member},
     * answered as that member: etcd serves it only after the leader confirmed its leadership with a quorum and the
     * member applied the leader's commit index, so it proves the member both reaches the leader and hears from it.
     * Empty when it was served; else why not (no failure: "it is not connected" is an answer to the rules).
     */
    Optional<String> linearizableThrough(String member) throws InterruptedException, MigrateException;

    /**
     * Asks the current leader to hand its leadership to the member named {@code to} (etcd's MoveLeader): the margin
     * proves the other members connected through a leader other than the member about to stop.
     */
    void moveLeader(String to) throws IOException, InterruptedException, MigrateException;

    /**
     * A member as the cluster lists it: its ID, whether it is a learner (a non-voting member), and {@code status}
     * empty when its client URL did not answer ({@code problem} says why).
     */
    record Member(String name, long id, boolean learner, Optional<Status> status, String problem) {
        public static Member up(String name, Status status) {
            return new Member(name, status.memberId(), status.learner(), Optional.of(status), "");
        }

        public static Member up(String name, long id, boolean learner, Status status) {
            return new Member(name, id, learner, Optional.of(status), "");
        }

        public static Member down(String name, String problem) {
            return new Member(name, 0, false, Optional.empty(), problem);
        }

        public static Member down(String name, long id, boolean learner, String problem) {
            return new Member(name, id, learner, Optional.empty(), problem);
        }
    }

    /**
     * A member's own answer (Maintenance/Status, answered locally, without a quorum): the etcd it runs, its ID, the
     * leader it follows (0: none: it hears from no leader), the raft term, its commit index ({@code raftIndex}) and
     * applied index, whether it is a learner, the errors it reports (etcd lists "no leader" and every alarm it
     * knows, e.g. NOSPACE, CORRUPT), its db size and (3.6+) its storage version and the downgrade job it knows of.
     */
    record Status(
            EtcdVersion server,
            long memberId,
            long leaderId,
            long raftTerm,
            long raftIndex,
            long raftAppliedIndex,
            boolean learner,
            List<String> errors,
            long dbSize,
            Optional<MinorLine> storage,
            Optional<MinorLine> downgradeTarget) {
        public Status {
            errors = List.copyOf(errors);
        }

        /**
         * An answer with only what older tests and lines give: a voter at {@code raftIndex} applied, following itself
         * when {@code leader} (else leader {@code 1}), no errors.
         */
        public static Status of(
                EtcdVersion server,
                long raftIndex,
                boolean leader,
                Optional<MinorLine> storage,
                Optional<MinorLine> downgradeTarget) {
            long id = leader ? 1 : 2;
            return new Status(server, id, 1, 2, raftIndex, raftIndex, false, List.of(), 0, storage, downgradeTarget);
        }

        public MinorLine line() {
            return server.line();
        }

        /** Whether it leads (the leader it follows is itself). */
        public boolean leader() {
            return leaderId != 0 && leaderId == memberId;
        }
    }

    /** The record as stored: its value and the revision that last wrote it. */
    record Record(RecordValue value, long modRevision) {}

    /**
     * No endpoint gave what was asked, but at least one reached an etcd: it answered with an error (a 503 "leader
     * changed", no leader) or took the request and did not answer in time (a member under load, a request waiting
     * for a quorum). An etcd is there, so a member may be out by its runner's choice: the rules read this as a
     * failed read while members answer, never as "no member of the cluster runs". A plain {@link IOException}
     * from a walk of every endpoint means nothing was there (refused, no route, no such host, no connection in
     * time).
     */
    final class EtcdReached extends IOException {
        public EtcdReached(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
