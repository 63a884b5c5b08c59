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

    /** Every member the cluster lists, each with what its own client URL answered (Maintenance/Status) or why not. */
    List<Member> members() throws IOException, InterruptedException, MigrateException;

    /** The cluster version a reachable member reports (empty: none reachable or not yet decided). */
    Optional<MinorLine> clusterVersion() throws IOException, InterruptedException, MigrateException;

    /** The restart record, if one exists; a value that is not a {@link RecordValue} is a refusal (someone else's key). */
    Optional<Record> record() throws IOException, InterruptedException, MigrateException;

    /** Creates the record where none exists (create revision 0); empty when another runner's record is there. */
    Optional<Record> create(RecordValue value) throws IOException, InterruptedException, MigrateException;

    /** Deletes the record if it is still this one (its mod revision); false when it changed or went. */
    boolean delete(Record record) throws IOException, InterruptedException, MigrateException;

    /** Whether the record is still this one (a transaction on its mod revision, so a quorum answers). */
    boolean holds(Record record) throws IOException, InterruptedException, MigrateException;

    /**
     * What the member named {@code member} answers (Maintenance/Status) on the first of {@code urls} that answers as
     * that member (an answer whose member ID is not the one the member list gives that name is another etcd's, and
     * does not count). Empty when none does: no failure, since "it does not answer" is an answer to the rules.
     */
    Optional<Status> statusAt(String member, List<String> urls) throws InterruptedException, MigrateException;

    /** A member as the cluster lists it; {@code status} empty when its client URL did not answer ({@code problem} says why). */
    record Member(String name, Optional<Status> status, String problem) {
        public static Member up(String name, Status status) {
            return new Member(name, Optional.of(status), "");
        }

        public static Member down(String name, String problem) {
            return new Member(name, Optional.empty(), problem);
        }
    }

    /**
     * A member's own answer: the etcd it runs, its raft index, whether it leads, and (3.6+) its storage version
     * and the downgrade job it knows of.
     */
    record Status(
            EtcdVersion server,
            long raftIndex,
            boolean leader,
            Optional<MinorLine> storage,
            Optional<MinorLine> downgradeTarget) {
        public MinorLine line() {
            return server.line();
        }
    }

    /** The record as stored: its value and the revision that last wrote it. */
    record Record(RecordValue value, long modRevision) {}
}
