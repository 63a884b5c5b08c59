package dev.etcdmigrate.cluster;

import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.cluster.ClusterView.Record;
import dev.etcdmigrate.cluster.ClusterView.Status;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.event.RolloutEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The rules by which the runners of a cluster's members restart their members one at a time, decided through
 * the cluster itself (docs/ha.md, "The restart record"):
 * <ol>
 *   <li><b>gate</b>: a member serving at line L restarts for L -> L' only when every member the cluster lists
 *       runs L or L' (nobody is behind), the cluster version is L or L', and no downgrade job to another line
 *       runs;
 *   <li><b>record</b>: it then creates the restart record (a transaction: only where no record exists), or
 *       finds its own from an earlier run of its runner;
 *   <li><b>quorum margin</b>: holding the record, it checks that every other member answers on its client URL
 *       and is within {@code raftIndexBound} entries of the leader, then that it still holds the record; only
 *       then may it stop its member;
 *   <li><b>release</b>: once its member runs L' and took a quorum write, it deletes the record (a transaction on
 *       its revision). A holder that cannot (crashed, or exec'd the target) is released by any other runner
 *       once the holder's member answers at the line the record names.
 * </ol>
 * Nothing here stops a member: the caller does, after {@link #beforeRestart} returned.
 */
public final class RolloutCoordinator {

    /** The record's key: outside Kubernetes' /registry, and the only key a rollout writes. */
    public static final String RECORD_KEY = "/etcd-migrate/rollout/restart";

    /** Waits one poll interval (tests advance their fake cluster here). */
    public interface Pause {
        void await() throws IOException, InterruptedException, MigrateException;
    }

    /**
     * Where the runner notes durably whether it may hold the record, so that a run killed at any moment knows on
     * restart: before creating it (the creation may commit and the answer be lost with the process), the record
     * once it holds it, and nothing once it holds none.
     */
    public interface RecordNote {
        void mayHold() throws IOException;

        void holds(Record record) throws IOException;

        void holdsNone() throws IOException;
    }

    private final ClusterView cluster;
    private final String self;
    private final int expectedMembers;
    private final long raftIndexBound;
    private final Log log;
    private final Pause pause;
    private final RecordNote note;
    private final Clock clock;
    private String lastWaiting = "";
    /** The record revision this coordinator last noted as held. */
    private long notedRevision;

    /**
     * @param expectedMembers how many members --initial-cluster names: fewer listed or answering is a missing member
     * @param raftIndexBound how far behind the leader's raft index another member may be and still count as caught up
     */
    public RolloutCoordinator(
            ClusterView cluster,
            String self,
            int expectedMembers,
            long raftIndexBound,
            Log log,
            Pause pause,
            RecordNote note,
            Clock clock) {
        this.cluster = cluster;
        this.self = self;
        this.expectedMembers = expectedMembers;
        this.raftIndexBound = raftIndexBound;
        this.log = log;
        this.pause = pause;
        this.note = note;
        this.clock = clock;
    }

    /**
     * Waits, while this member serves at {@code from}, until the cluster lets it restart for {@code from -> to}
     * and it holds the restart record with every other member healthy; returns the record to release later.
     * Waits as long as it takes (an operator may edit the other members hours later); a signal ends it.
     */
    public Record beforeRestart(MinorLine from, MinorLine to)
            throws IOException, InterruptedException, MigrateException {
        String leg = from + " -> " + to;
        while (true) {
            try {
                Optional<Record> held = attempt(from, to, leg);
                if (held.isPresent()) return held.get();
            } catch (IOException unreachable) {
                // no member answers yet (all restarting together, this one still starting) or the answer was lost:
                // nothing was decided, every rule reads the cluster again on the next pass
                waiting(leg, "no member of the cluster answers (" + unreachable.getMessage() + ")", List.of());
            }
        }
    }

    /**
     * One pass of the rules: the record held with every other member fit, or empty to read the cluster again
     * (after a pause where the cluster must move first).
     */
    private Optional<Record> attempt(MinorLine from, MinorLine to, String leg)
            throws IOException, InterruptedException, MigrateException {
        List<Member> members = cluster.members();
        Optional<String> closed = gateClosed(from, to, members);
        if (closed.isPresent()) {
            waiting(leg, closed.get(), lagging(from, to, members));
            return Optional.empty();
        }
        Optional<Record> existing = cluster.record();
        Record held;
        if (existing.isPresent() && existing.get().value().holder().equals(self)) {
            held = existing.get(); // an earlier run of this runner took it and was stopped (or this one's answer lost)
            noteHolds(held);
        } else if (existing.isPresent()) {
            Record other = existing.get();
            if (holderDone(other, members)) {
                if (cluster.delete(other)) {
                    log.emit(new RolloutEvent.RestartRecordTakenOver(
                            other.value().holder(), other.value().to().toString(), other.modRevision()));
                }
                return Optional.empty();
            }
            waiting(
                    leg,
                    "member " + other.value().holder() + " holds the restart record for its restart "
                            + other.value().from() + " -> " + other.value().to(),
                    List.of(other.value().holder()));
            return Optional.empty();
        } else {
            note.mayHold();
            Optional<Record> created = cluster.create(new RecordValue(self, from, to, clock.instant()));
            if (created.isEmpty()) {
                noteNone();
                return Optional.empty(); // another runner was quicker: read again
            }
            held = created.get();
            noteHolds(held);
        }
        List<String> problems = othersUnfit(cluster.members());
        if (!problems.isEmpty()) {
            // keep the record: while another member is out, nobody may restart theirs
            waiting(
                    leg,
                    "holding the restart record until every other member serves: " + String.join("; ", problems),
                    problems.stream().map(p -> p.split(":", 2)[0]).toList());
            return Optional.empty();
        }
        if (!cluster.holds(held)) {
            noteNone();
            return Optional.empty(); // taken over (this member looked done to a peer): start again
        }
        log.emit(new RolloutEvent.RestartRecordTaken(self, from.toString(), to.toString(), held.modRevision()));
        lastWaiting = "";
        return Optional.of(held);
    }

    /** Notes the record held, once per revision (a wait passes here every poll while it holds it). */
    private void noteHolds(Record held) throws IOException {
        if (held.modRevision() == notedRevision) return;
        note.holds(held);
        notedRevision = held.modRevision();
    }

    private void noteNone() throws IOException {
        note.holdsNone();
        notedRevision = 0;
    }

    /** After this member runs the new line and took a quorum write: the next member may restart. */
    public void release(Record record) throws IOException, InterruptedException, MigrateException {
        boolean deleted = cluster.delete(record);
        log.emit(new RolloutEvent.RestartRecordReleased(
                self, record.value().to().toString(), record.modRevision(), deleted));
    }

    /**
     * This runner's own record from an earlier run that was stopped while it held it (the member was stopped
     * for its restart): the leg that restart began is the one this run finishes, and then releases it.
     */
    public Optional<Record> ownRecord() throws IOException, InterruptedException, MigrateException {
        return cluster.record().filter(r -> r.value().holder().equals(self));
    }

    /**
     * {@link #ownRecord()}, read again after a pause when no member answers (a leader change, a quorum just back
     * after a pod died), at most {@code attempts} reads: a transient error must not end a runner that holds the
     * record (it would exit with its member stopped until the kubelet's back-off restarts it).
     */
    public Optional<Record> ownRecord(int attempts) throws IOException, InterruptedException, MigrateException {
        for (int read = 1; ; read++) {
            try {
                return ownRecord();
            } catch (IOException unreachable) {
                if (read >= attempts) throw unreachable;
                pause.await();
            }
        }
    }

    /** Why the cluster does not allow {@code from -> to} yet; empty when it does. */
    Optional<String> gateClosed(MinorLine from, MinorLine to, List<Member> members)
            throws IOException, InterruptedException, MigrateException {
        List<String> behind = lagging(from, to, members);
        if (!behind.isEmpty()) {
            return Optional.of("members not yet on " + from + " or " + to + ": " + describe(members, behind));
        }
        if (members.size() < expectedMembers) {
            return Optional.of("the cluster lists " + members.size() + " of " + expectedMembers + " members");
        }
        for (Member m : members) {
            Optional<MinorLine> job = m.status().flatMap(Status::downgradeTarget);
            if (job.isPresent() && !job.get().equals(to)) {
                return Optional.of("a downgrade job to " + job.get() + " is still running (member " + m.name()
                        + " reports it): the leader ends it once every member runs " + job.get());
            }
        }
        if (from.isOlderThan(to)) {
            // the next line opens only data whose storage version is this line's: etcd writes it after the cluster
            // version moved (lines that report one)
            Optional<MinorLine> storage = members.stream()
                    .filter(m -> m.name().equals(self))
                    .flatMap(m -> m.status().stream())
                    .flatMap(s -> s.storage().stream())
                    .findFirst();
            if (storage.isPresent() && !storage.get().equals(from)) {
                return Optional.of("this member's storage version is " + storage.get() + ", not yet " + from);
            }
        }
        Optional<MinorLine> version = cluster.clusterVersion();
        if (version.isEmpty() || !(version.get().equals(from) || version.get().equals(to))) {
            return Optional.of("the cluster version is "
                    + version.map(MinorLine::toString).orElse("unknown") + ", not yet " + from);
        }
        return Optional.empty();
    }

    /** Members that do not answer, or answer at a line other than {@code from} and {@code to}. */
    private static List<String> lagging(MinorLine from, MinorLine to, List<Member> members) {
        List<String> names = new ArrayList<>();
        for (Member m : members) {
            if (m.status().isEmpty()
                    || !(m.status().get().line().equals(from)
                            || m.status().get().line().equals(to))) {
                names.add(m.name());
            }
        }
        return names;
    }

    private static String describe(List<Member> members, List<String> names) {
        List<String> parts = new ArrayList<>();
        for (Member m : members) {
            if (!names.contains(m.name())) continue;
            parts.add(m.name() + " "
                    + m.status().map(s -> "runs " + s.server()).orElse("does not answer (" + m.problem() + ")"));
        }
        return String.join(", ", parts);
    }

    /** The record's holder is not this runner and its member answers at the line the record names: its restart is over. */
    private boolean holderDone(Record record, List<Member> members) {
        return members.stream()
                .filter(m -> m.name().equals(record.value().holder()))
                .anyMatch(m -> m.status().isPresent()
                        && m.status().get().line().equals(record.value().to()));
    }

    /** Why each other member may not see this one go: missing, not answering, or behind the leader's raft index. */
    List<String> othersUnfit(List<Member> members) {
        List<String> problems = new ArrayList<>();
        long leaderIndex = members.stream()
                .flatMap(m -> m.status().stream())
                .mapToLong(Status::raftIndex)
                .max()
                .orElse(0);
        long others = members.stream().filter(m -> !m.name().equals(self)).count();
        if (others < expectedMembers - 1) {
            problems.add("(missing): the cluster lists " + members.size() + " of " + expectedMembers + " members");
        }
        for (Member m : members) {
            if (m.name().equals(self)) continue;
            if (m.status().isEmpty()) {
                problems.add(m.name() + ": does not answer (" + m.problem() + ")");
            } else if (leaderIndex - m.status().get().raftIndex() > raftIndexBound) {
                problems.add(m.name() + ": " + (leaderIndex - m.status().get().raftIndex())
                        + " raft entries behind (bound " + raftIndexBound + ")");
            }
        }
        return problems;
    }

    private void waiting(String leg, String why, List<String> members)
            throws IOException, InterruptedException, MigrateException {
        if (!why.equals(lastWaiting)) {
            log.emit(new RolloutEvent.RolloutWaiting(self, leg, why, members));
            lastWaiting = why;
        }
        pause.await();
    }

    /** The record holds a value this runner cannot read: someone else's key, never overwritten. */
    public static final class RecordUnreadableException extends dev.etcdmigrate.error.RefusedException {
        public RecordUnreadableException(String message) {
            super(message);
        }
    }
}
