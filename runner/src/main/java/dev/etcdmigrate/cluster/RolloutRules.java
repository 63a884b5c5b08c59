package dev.etcdmigrate.cluster;

import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.cluster.ClusterView.Record;
import dev.etcdmigrate.cluster.ClusterView.Status;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.version.MinorLine;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The rules of docs/ha.md ("The rules"), each a pure function of what the cluster answered and what the runner
 * knows: no call, no clock, no file. {@link RolloutCoordinator} reads the cluster, asks a rule, and carries its
 * decision out. {@link Mutations} switches exist for the simulation only (test scope sets them): each breaks one
 * rule the way a plausible edit would, and the simulation must catch it.
 */
public final class RolloutRules {

    private RolloutRules() {}

    /** The leg a runner wants to restart its member for; {@code from == to} for a patch floor alone. */
    public record Leg(MinorLine from, MinorLine to) {
        public boolean upgrade() {
            return from.isOlderThan(to);
        }

        boolean names(Record record) {
            return record.value().from().equals(from) && record.value().to().equals(to);
        }

        @Override
        public String toString() {
            return from + " -> " + to;
        }
    }

    /** Who asks: its member's name, how many members --initial-cluster names, whether its member is down. */
    public record Self(String name, int expectedMembers, boolean memberDown) {}

    /** What a rule tells the coordinator to do. */
    public sealed interface Decision {
        /** Read the cluster again after a pause; {@code members} are the ones waited for. */
        record Wait(String why, List<String> members) implements Decision {}

        /** Create the record (noted as "taking" first). */
        record Take() implements Decision {}

        /** This runner's own record for this very leg (an earlier run took it, or the answer was lost). */
        record UseOwn(Record record) implements Decision {}

        /** Delete this record, comparing its revision, then read again. */
        record Release(Record record) implements Decision {}

        /** Another holder's restart is over (its member answers at or past the line the record names): delete it. */
        record TakeOver(Record record) implements Decision {}

        /** Every rule holds: stop the member (if it serves) and run the leg. */
        record Restart() implements Decision {}
    }

    /** Test-only switches, each breaking one rule (the simulation's mutants). Never set in production code. */
    public static final class Mutations {
        public static volatile boolean skipMargin;
        public static volatile boolean skipGate;
        public static volatile boolean takeOverWithoutHolderAnswering;
        public static volatile boolean noNoteBeforeCreate;
        public static volatile boolean deleteWithoutComparingRevision;
        public static volatile boolean releaseBeforeQuorumWrite;
        public static volatile boolean noAnswerIsFatal;
        public static volatile boolean enableWithoutCheckingJob;
        /** A holder is done only at exactly the record's line (one that went on past it is never taken over). */
        public static volatile boolean takeOverOnlyAtTheNamedLine;
        /** Releases through this member's own URL only (while that member is down, no release reaches the cluster). */
        public static volatile boolean releaseThroughOwnUrlOnly;
        /** Leg 1 of a member's plan runs at once even when other members answer. */
        public static volatile boolean firstLegAlwaysAtOnce;
        /**
         * The take-over reads the holder on the URL the member list shows, not where its record says it serves (the
         * rule before records named URLs: on one host a step's private etcd answered there).
         */
        public static volatile boolean holderOnListedUrl;
        /** A stale own record (another leg's) used as this leg's. */
        public static volatile boolean reuseOwnRecordOfAnotherLeg;
        /** The first leg runs at once whenever no member answers, whatever the data recorded. */
        public static volatile boolean atOnceWheneverNoneAnswers;
        /** The pre-fix start: a run that noted it holds the record reads it once (a 503 "leader changed" ends it). */
        public static volatile boolean heldRecordReadOnce;
        /** The gate opens whatever downgrade job the members report. */
        public static volatile boolean gateIgnoresJob;

        private Mutations() {}

        public static void reset() {
            skipMargin = skipGate = takeOverWithoutHolderAnswering = noNoteBeforeCreate = false;
            deleteWithoutComparingRevision = releaseBeforeQuorumWrite = noAnswerIsFatal = false;
            enableWithoutCheckingJob = takeOverOnlyAtTheNamedLine = releaseThroughOwnUrlOnly = false;
            firstLegAlwaysAtOnce = reuseOwnRecordOfAnotherLeg = atOnceWheneverNoneAnswers = heldRecordReadOnce = false;
            holderOnListedUrl = gateIgnoresJob = false;
        }
    }

    /**
     * Rule 1, the gate: every member the cluster lists answers and runs the leg's lines (this member excepted while
     * it is down: its pod was restarted, not by the runner), the cluster lists as many members as expected, no
     * downgrade job to another line runs, for an upgrade this member's storage version is the leg's start, and the
     * cluster version is one of the leg's lines. Empty when open.
     */
    public static Optional<Decision.Wait> gate(
            Leg leg, Self self, List<Member> members, Optional<MinorLine> clusterVersion) {
        if (Mutations.skipGate) return Optional.empty();
        List<String> behind = lagging(leg, self, members);
        if (!behind.isEmpty()) {
            return wait(
                    "members not yet on " + leg.from() + " or " + leg.to() + ": " + describe(members, behind), behind);
        }
        if (members.size() < self.expectedMembers()) {
            return wait(
                    "the cluster lists " + members.size() + " of " + self.expectedMembers() + " members", List.of());
        }
        for (Member m : Mutations.gateIgnoresJob ? List.<Member>of() : members) {
            Optional<MinorLine> job = m.status().flatMap(Status::downgradeTarget);
            if (job.isPresent() && !job.get().equals(leg.to())) {
                return wait(
                        "a downgrade job to " + job.get() + " is still running (member " + m.name()
                                + " reports it): the leader ends it once every member runs " + job.get(),
                        List.of());
            }
        }
        if (leg.upgrade()) {
            // the next line opens only data whose storage version is this line's: etcd writes it after the cluster
            // version moved (lines that report one)
            Optional<MinorLine> storage = members.stream()
                    .filter(m -> m.name().equals(self.name()))
                    .flatMap(m -> m.status().stream())
                    .flatMap(s -> s.storage().stream())
                    .findFirst();
            if (storage.isPresent() && !storage.get().equals(leg.from())) {
                return wait("this member's storage version is " + storage.get() + ", not yet " + leg.from(), List.of());
            }
        }
        if (clusterVersion.isEmpty()
                || !(clusterVersion.get().equals(leg.from())
                        || clusterVersion.get().equals(leg.to()))) {
            return wait(
                    "the cluster version is "
                            + clusterVersion.map(MinorLine::toString).orElse("unknown") + ", not yet " + leg.from(),
                    List.of());
        }
        return Optional.empty();
    }

    /**
     * Rule 2, the record: none exists (take it); this runner's own for this leg (use it); its own for another leg
     * (a restart that is over: release it); another holder's whose restart is over (take it over); or wait.
     * {@code holder}: what the other holder answered where the take-over reads it ({@link #holderAnswer}).
     */
    public static Decision take(Leg leg, Self self, Optional<Record> existing, Optional<Status> holder) {
        if (existing.isEmpty()) return new Decision.Take();
        Record record = existing.get();
        if (record.value().holder().equals(self.name())) {
            if (leg.names(record) || Mutations.reuseOwnRecordOfAnotherLeg) return new Decision.UseOwn(record);
            return new Decision.Release(record); // its restart is over: this run's data is past it
        }
        if (holderDone(record, holder)) return new Decision.TakeOver(record);
        return new Decision.Wait(
                "member " + record.value().holder() + " holds the restart record for its restart "
                        + record.value().from() + " -> " + record.value().to(),
                List.of(record.value().holder()));
    }

    /**
     * Take-over: the holder answers at the line the record names or past it in the record's direction (it went on to
     * the next leg or exec'd the target without releasing: it will never answer at the named line again). A holder
     * that answers at the record's start has not restarted yet, or not come back: never taken over. The answer
     * counts only from where the holder's member serves: the URLs its record names ({@link #readsHolderWhereItServes};
     * a URL the member list shows may be another etcd's, e.g. a step's private etcd on one host, which answers at the
     * record's {@code to} while the restart is not over). {@code holder}: that answer ({@link
     * #holderAnswer}), empty when it does not answer there.
     */
    public static boolean holderDone(Record record, Optional<Status> holder) {
        RecordValue v = record.value();
        if (Mutations.takeOverWithoutHolderAnswering) {
            return holder.isEmpty() || !holder.get().line().equals(v.from());
        }
        // a restart on one line (a patch floor, rule 4's settling) answers at its line before it stops too: only its
        // holder releases it, or two members would go at once
        if (v.from().equals(v.to())) return false;
        return holder.map(Status::line)
                .filter(line ->
                        Mutations.takeOverOnlyAtTheNamedLine ? line.equals(v.to()) : reached(v.from(), v.to(), line))
                .isPresent();
    }

    /**
     * The record's holder as the take-over reads it ({@link #holderDone}): on the URLs the record names (where its
     * member serves, the operator's own client URLs), else (a record of the release before, which names none) what
     * the member list's URL for it answered. A record of one line is never taken over: nothing is read.
     */
    public static Optional<Status> holderAnswer(ClusterView cluster, Record record, List<Member> members)
            throws InterruptedException, MigrateException {
        RecordValue v = record.value();
        if (v.from().equals(v.to()) && !Mutations.takeOverWithoutHolderAnswering) return Optional.empty();
        if (readsHolderWhereItServes(v)) return cluster.statusAt(v.holder(), v.serves());
        return listedAnswer(v.holder(), members);
    }

    /**
     * Whether the take-over reads the holder on the URLs its record names: yes when it names any (this release writes
     * them); a record of the release before names none, and is read on the member list's URL as that release did.
     */
    public static boolean readsHolderWhereItServes(RecordValue value) {
        return !value.serves().isEmpty() && !Mutations.holderOnListedUrl;
    }

    /** What the member list's URL for {@code holder} answered (the take-over's reading before records named URLs). */
    public static Optional<Status> listedAnswer(String holder, List<Member> members) {
        return members.stream()
                .filter(m -> m.name().equals(holder))
                .flatMap(m -> m.status().stream())
                .findFirst();
    }

    /** Whether {@code line} is {@code to} or beyond it, seen from {@code from} (a leg of two lines: see holderDone). */
    static boolean reached(MinorLine from, MinorLine to, MinorLine line) {
        if (line.equals(to)) return true;
        return from.isOlderThan(to) ? to.isOlderThan(line) : line.isOlderThan(to);
    }

    /**
     * Rule 3, the quorum margin: why each other member may not see this one go (missing, not answering, or more
     * than {@code raftIndexBound} entries behind the leader's raft index). Empty: this member may go.
     */
    public static List<String> margin(Self self, List<Member> members, long raftIndexBound) {
        List<String> problems = new ArrayList<>();
        if (Mutations.skipMargin) return problems;
        long leaderIndex = members.stream()
                .flatMap(m -> m.status().stream())
                .mapToLong(Status::raftIndex)
                .max()
                .orElse(0);
        long others =
                members.stream().filter(m -> !m.name().equals(self.name())).count();
        if (others < self.expectedMembers() - 1) {
            problems.add(
                    "(missing): the cluster lists " + members.size() + " of " + self.expectedMembers() + " members");
        }
        for (Member m : members) {
            if (m.name().equals(self.name())) continue;
            if (m.status().isEmpty()) {
                problems.add(m.name() + ": does not answer (" + m.problem() + ")");
            } else if (leaderIndex - m.status().get().raftIndex() > raftIndexBound) {
                problems.add(m.name() + ": " + (leaderIndex - m.status().get().raftIndex())
                        + " raft entries behind (bound " + raftIndexBound + ")");
            }
        }
        return problems;
    }

    /** The members named by {@link #margin}'s problems. */
    public static List<String> named(List<String> problems) {
        return problems.stream().map(p -> p.split(":", 2)[0]).toList();
    }

    /**
     * Rule 4, release, at the start of a run: what to do with the record this runner noted. A record of its own
     * names the restart it began; if that is the run's first leg, the leg is finished under it, else (the data is
     * past it) it is released now. Empty: nothing to finish.
     */
    public static Optional<Decision> resume(Leg firstLeg, Optional<Record> own) {
        if (own.isEmpty()) return Optional.empty();
        if (firstLeg != null && firstLeg.names(own.get())) return Optional.of(new Decision.UseOwn(own.get()));
        return Optional.of(new Decision.Release(own.get()));
    }

    /**
     * The first leg with no member answering (every manifest edited at once, or every member restarting): it runs
     * at once, without the record, only when this member's data says the cluster stood at the leg's start when its
     * etcd last ran: the cluster version it recorded is the leg's {@code from} (or it records none, as before) and it
     * records no downgrade job in progress. Otherwise it was started again between legs: an
     * upgrade leg would join a cluster two minors apart (the cluster version recorded is older), and a downgrade leg
     * would wait inside its step for a job that ends only once the members waiting for this one to answer move
     * (both found by the simulation with every member down). It serves its data's line and waits instead.
     */
    public static boolean atOnce(Leg leg, Optional<MinorLine> recordedClusterVersion, boolean recordedJob) {
        if (Mutations.atOnceWheneverNoneAnswers) return true;
        if (recordedJob) return false;
        return recordedClusterVersion.isEmpty() || recordedClusterVersion.get().equals(leg.from());
    }

    /** Members that do not answer, or answer at a line other than the leg's; this member while down is not counted. */
    static List<String> lagging(Leg leg, Self self, List<Member> members) {
        List<String> names = new ArrayList<>();
        for (Member m : members) {
            if (self.memberDown() && m.name().equals(self.name())) continue;
            if (m.status().isEmpty()
                    || !(m.status().get().line().equals(leg.from())
                            || m.status().get().line().equals(leg.to()))) {
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

    private static Optional<Decision.Wait> wait(String why, List<String> members) {
        return Optional.of(new Decision.Wait(why, members));
    }
}
