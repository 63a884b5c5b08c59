package dev.etcdmigrate.cluster;

import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.cluster.ClusterView.Record;
import dev.etcdmigrate.cluster.ClusterView.Status;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.version.MinorLine;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The rules of docs/ha.md ("The rules"), each a pure function of what the cluster answered and what the runner
 * knows: no call, no clock, no file. {@link RolloutCoordinator} reads the cluster, asks a rule ({@link RuleSet}: these
 * functions, clause by clause, in every run), and carries its decision out. Each rule is composed of clauses that are
 * functions of their own, so a test can supply a rule set without one clause (a mutant) and check the simulation
 * catches it.
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

    /**
     * Rule 1, the gate: every member the cluster lists answers and runs the leg's lines (this member excepted while
     * it is down: its pod was restarted, not by the runner), the cluster lists as many members as expected, no
     * downgrade job to another line runs, for an upgrade this member's storage version is the leg's start, and the
     * cluster version is one of the leg's lines. Empty when open.
     */
    public static Optional<Decision.Wait> gate(
            Leg leg, Self self, List<Member> members, Optional<MinorLine> clusterVersion) {
        return gateLines(leg, self, members)
                .or(() -> gateMemberCount(self, members))
                .or(() -> gateDowngradeJob(leg, members))
                .or(() -> gateStorage(leg, self, members))
                .or(() -> gateClusterVersion(leg, clusterVersion));
    }

    /** Gate clause: every member answers and runs the leg's lines (this member excepted while it is down). */
    public static Optional<Decision.Wait> gateLines(Leg leg, Self self, List<Member> members) {
        List<String> behind = lagging(leg, self, members);
        if (behind.isEmpty()) return Optional.empty();
        return wait("members not yet on " + leg.from() + " or " + leg.to() + ": " + describe(members, behind), behind);
    }

    /** Gate clause: the cluster lists as many members as --initial-cluster names. */
    public static Optional<Decision.Wait> gateMemberCount(Self self, List<Member> members) {
        if (members.size() >= self.expectedMembers()) return Optional.empty();
        return wait("the cluster lists " + members.size() + " of " + self.expectedMembers() + " members", List.of());
    }

    /** Gate clause: no downgrade job to a line other than the leg's {@code to} runs. */
    public static Optional<Decision.Wait> gateDowngradeJob(Leg leg, List<Member> members) {
        for (Member m : members) {
            Optional<MinorLine> job = m.status().flatMap(Status::downgradeTarget);
            if (job.isPresent() && !job.get().equals(leg.to())) {
                return wait(
                        "a downgrade job to " + job.get() + " is still running (member " + m.name()
                                + " reports it): the leader ends it once every member runs " + job.get(),
                        List.of());
            }
        }
        return Optional.empty();
    }

    /**
     * Gate clause: for an upgrade, this member's storage version (lines that report one) is the leg's start: the next
     * line opens only data whose storage version is this line's, which etcd writes after the cluster version moved.
     */
    public static Optional<Decision.Wait> gateStorage(Leg leg, Self self, List<Member> members) {
        if (!leg.upgrade()) return Optional.empty();
        Optional<MinorLine> storage = members.stream()
                .filter(m -> m.name().equals(self.name()))
                .flatMap(m -> m.status().stream())
                .flatMap(s -> s.storage().stream())
                .findFirst();
        if (storage.isEmpty() || storage.get().equals(leg.from())) return Optional.empty();
        return wait("this member's storage version is " + storage.get() + ", not yet " + leg.from(), List.of());
    }

    /** Gate clause: the cluster version is one of the leg's lines. */
    public static Optional<Decision.Wait> gateClusterVersion(Leg leg, Optional<MinorLine> clusterVersion) {
        if (clusterVersion.isPresent()
                && (clusterVersion.get().equals(leg.from())
                        || clusterVersion.get().equals(leg.to()))) {
            return Optional.empty();
        }
        return wait(
                "the cluster version is "
                        + clusterVersion.map(MinorLine::toString).orElse("unknown") + ", not yet " + leg.from(),
                List.of());
    }

    /**
     * Rule 2, the record: none exists (take it); this runner's own for this leg (use it); its own for another leg
     * (a restart that is over: release it); another holder's whose restart is over (take it over); or wait.
     * {@code holder}: what the other holder answered where the take-over reads it ({@link #holderAnswer}).
     */
    public static Decision take(Leg leg, Self self, Optional<Record> existing, Optional<Status> holder) {
        return take(leg, self, existing, existing.isPresent() && holderDone(existing.get(), holder));
    }

    /** {@link #take(Leg, Self, Optional, Optional)} with the take-over's verdict on another holder already made. */
    public static Decision take(Leg leg, Self self, Optional<Record> existing, boolean holderDone) {
        if (existing.isEmpty()) return new Decision.Take();
        Record record = existing.get();
        if (record.value().holder().equals(self.name())) {
            if (leg.names(record)) return new Decision.UseOwn(record);
            return new Decision.Release(record); // its restart is over: this run's data is past it
        }
        if (holderDone) return new Decision.TakeOver(record);
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
        // a restart on one line (a patch floor, rule 4's settling) answers at its line before it stops too: only its
        // holder releases it, or two members would go at once
        if (v.from().equals(v.to())) return false;
        return holder.map(Status::line)
                .filter(line -> reached(v.from(), v.to(), line))
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
        if (v.from().equals(v.to())) return Optional.empty();
        if (readsHolderWhereItServes(v)) return cluster.statusAt(v.holder(), v.serves());
        return listedAnswer(v.holder(), members);
    }

    /**
     * Whether the take-over reads the holder on the URLs its record names: yes when it names any (this release writes
     * them); a record of the release before names none, and is read on the member list's URL as that release did.
     */
    public static boolean readsHolderWhereItServes(RecordValue value) {
        return !value.serves().isEmpty();
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
     * Rule 3, the quorum margin, on raft's own answers (docs/ha.md, "The quorum margin"): why the other members might
     * not keep a quorum without this one. Each other member must be listed, a voter, answer its Status with no error
     * (etcd lists "no leader" and every alarm there), follow the leader a majority follows, have applied within
     * {@code raftIndexBound} entries of that leader's commit index read in the same pass, and serve a linearizable
     * read through its own client URL ({@code reads}: by name, empty when served, else why not). The leader must not
     * be this member: a read through another member then travels through it, and proves nothing about the others
     * without it ({@link #handOver} moves it first). Empty: this member may go.
     */
    public static List<String> margin(
            Self self, List<Member> members, Map<String, Optional<String>> reads, long raftIndexBound) {
        List<String> problems = new ArrayList<>();
        problems.addAll(marginMemberCount(self, members));
        problems.addAll(marginLeader(self, members));
        problems.addAll(marginAnswers(self, members));
        problems.addAll(marginVoters(self, members));
        problems.addAll(marginErrors(self, members));
        problems.addAll(marginFollowers(self, members));
        problems.addAll(marginRaftLag(self, members, raftIndexBound));
        problems.addAll(marginReads(self, members, reads));
        return problems;
    }

    /** Margin clause: the cluster lists every member --initial-cluster names besides this one. */
    public static List<String> marginMemberCount(Self self, List<Member> members) {
        long others =
                members.stream().filter(m -> !m.name().equals(self.name())).count();
        if (others >= self.expectedMembers() - 1) return List.of();
        return List.of("(missing): the cluster lists " + members.size() + " of " + self.expectedMembers() + " members");
    }

    /** Margin clause: a majority follows one leader, and it is not this member. */
    public static List<String> marginLeader(Self self, List<Member> members) {
        long leaderId = majorityLeader(members);
        if (leaderId == 0) return List.of("(leader): no leader is followed by a majority of the members");
        boolean leads = members.stream().anyMatch(m -> m.name().equals(self.name()) && m.id() == leaderId);
        if (leads) return List.of(SELF_LEADS + "; its leadership moves to another member first");
        return List.of();
    }

    /** Margin clause: every other member answers its Status. */
    public static List<String> marginAnswers(Self self, List<Member> members) {
        return others(self, members)
                .filter(m -> m.status().isEmpty())
                .map(m -> m.name() + ": does not answer (" + m.problem() + ")")
                .toList();
    }

    /** Margin clause: every other member is a voter. */
    public static List<String> marginVoters(Self self, List<Member> members) {
        return others(self, members)
                .filter(m -> m.learner() || m.status().map(Status::learner).orElse(false))
                .map(m -> m.name() + ": is a learner (no vote)")
                .toList();
    }

    /** Margin clause: no other member reports an error (no leader, an alarm). */
    public static List<String> marginErrors(Self self, List<Member> members) {
        return others(self, members)
                .filter(m ->
                        m.status().isPresent() && !m.status().get().errors().isEmpty())
                .map(m -> m.name() + ": reports "
                        + String.join(", ", m.status().get().errors()))
                .toList();
    }

    /** Margin clause: every other member follows the majority's leader. */
    public static List<String> marginFollowers(Self self, List<Member> members) {
        long leaderId = majorityLeader(members);
        return others(self, members)
                .filter(m -> m.status().isPresent() && m.status().get().leaderId() != leaderId)
                .map(m -> m.name() + ": follows "
                        + (m.status().get().leaderId() == 0
                                ? "no leader"
                                : "leader " + Long.toHexString(m.status().get().leaderId()))
                        + ", not the majority's " + Long.toHexString(leaderId))
                .toList();
    }

    /**
     * Margin clause: every other member applied within {@code raftIndexBound} entries of the commit index of the
     * leader the majority follows (read in the same pass; the highest commit index any member reports when the
     * leader's own answer is missing).
     */
    public static List<String> marginRaftLag(Self self, List<Member> members, long raftIndexBound) {
        long leaderId = majorityLeader(members);
        long leaderCommit = members.stream()
                .flatMap(m -> m.status().stream())
                .filter(s -> leaderId != 0 && s.memberId() == leaderId)
                .mapToLong(Status::raftIndex)
                .max()
                .orElseGet(() -> members.stream()
                        .flatMap(m -> m.status().stream())
                        .mapToLong(Status::raftIndex)
                        .max()
                        .orElse(0));
        return others(self, members)
                .filter(m -> m.status().isPresent()
                        && leaderCommit - m.status().get().raftAppliedIndex() > raftIndexBound)
                .map(m -> m.name() + ": applied "
                        + (leaderCommit - m.status().get().raftAppliedIndex())
                        + " raft entries behind the leader's commit index (bound " + raftIndexBound + ")")
                .toList();
    }

    /** Margin clause: a linearizable read was served through every other member that answers ({@code reads}). */
    public static List<String> marginReads(Self self, List<Member> members, Map<String, Optional<String>> reads) {
        return others(self, members)
                .filter(m -> m.status().isPresent())
                .filter(m ->
                        reads.getOrDefault(m.name(), Optional.of("not read")).isPresent())
                .map(m -> m.name() + ": serves no linearizable read ("
                        + reads.getOrDefault(m.name(), Optional.of("not read")).orElseThrow() + ")")
                .toList();
    }

    private static java.util.stream.Stream<Member> others(Self self, List<Member> members) {
        return members.stream().filter(m -> !m.name().equals(self.name()));
    }

    /**
     * Rule 3 as {@code status} reports it (no read is sent through the members): every clause but the linearizable
     * reads and this member's own leadership (its runner moves it first).
     */
    public static List<String> margin(Self self, List<Member> members, long raftIndexBound) {
        Map<String, Optional<String>> served = new HashMap<>();
        members.forEach(m -> served.put(m.name(), Optional.empty()));
        // a member that leads moves its leadership itself before it stops: nothing it waits for
        return margin(self, members, served, raftIndexBound).stream()
                .filter(p -> !p.startsWith(SELF_LEADS))
                .toList();
    }

    private static final String SELF_LEADS = "(leader): this member leads";

    /** The leader a majority of the listed members follow (by their own Status); 0 when none has a majority. */
    public static long majorityLeader(List<Member> members) {
        Map<Long, Integer> votes = new HashMap<>();
        for (Member m : members) {
            m.status().filter(s -> s.leaderId() != 0).ifPresent(s -> votes.merge(s.leaderId(), 1, Integer::sum));
        }
        return votes.entrySet().stream()
                .filter(e -> e.getValue() * 2 > members.size())
                .map(Map.Entry::getKey)
                .findFirst()
                .orElse(0L);
    }

    /**
     * Where this member's leadership may go before it stops (rule 3): the other voters that answer with no error and
     * follow this member, the most applied first (then by name). Empty when this member does not lead. A move to one
     * of them can still fail (it may not be heard: its Status cannot tell), so the caller tries them in turn.
     */
    public static List<String> handOver(Self self, List<Member> members) {
        Optional<Member> me =
                members.stream().filter(m -> m.name().equals(self.name())).findFirst();
        long leaderId = majorityLeader(members);
        if (me.isEmpty() || leaderId == 0 || me.get().id() != leaderId) return List.of();
        return members.stream()
                .filter(m -> !m.name().equals(self.name()) && !m.learner())
                .filter(m -> m.status().isPresent()
                        && !m.status().get().learner()
                        && m.status().get().errors().isEmpty()
                        && m.status().get().leaderId() == leaderId)
                .sorted(java.util.Comparator.comparingLong(
                                (Member m) -> -m.status().get().raftAppliedIndex())
                        .thenComparing(Member::name))
                .map(Member::name)
                .toList();
    }

    /** The members named by {@link #margin}'s problems. */
    public static List<String> named(List<String> problems) {
        return problems.stream().map(p -> p.split(":", 2)[0]).distinct().toList();
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
