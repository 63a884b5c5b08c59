package dev.etcdmigrate.status;

import dev.etcdmigrate.cluster.ClusterView;
import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.cluster.ClusterView.Record;
import dev.etcdmigrate.cluster.ClusterView.Status;
import dev.etcdmigrate.cluster.RolloutPolicy;
import dev.etcdmigrate.cluster.RolloutRules;
import dev.etcdmigrate.cluster.RolloutRules.Decision;
import dev.etcdmigrate.cluster.RolloutRules.Leg;
import dev.etcdmigrate.cluster.RolloutRules.Self;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.status.StatusReport.MemberRow;
import dev.etcdmigrate.status.StatusReport.RecordRow;
import dev.etcdmigrate.status.StatusReport.State;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads a cluster once and judges it with the rollout's own rules ({@link RolloutRules}: the gate, the record,
 * take-over), so what {@code status} says a member waits for is what that member's runner waits for.
 */
public final class StatusReader {

    private final ClusterView cluster;
    private final Optional<MinorLine> target;
    private final Duration stuckAfter;
    /** The command that removes a stale record of a given mod revision (with the endpoints and TLS status used). */
    private final Function<Long, String> removeCommand;

    public StatusReader(
            ClusterView cluster,
            Optional<MinorLine> target,
            Duration stuckAfter,
            Function<Long, String> removeCommand) {
        this.cluster = cluster;
        this.target = target;
        this.stuckAfter = stuckAfter;
        this.removeCommand = removeCommand;
    }

    public StatusReport read(List<String> endpoints, Instant now)
            throws IOException, InterruptedException, MigrateException {
        List<Member> members = cluster.members();
        Optional<MinorLine> clusterVersion = cluster.clusterVersion();
        Optional<Record> record = cluster.record();
        // the holder where the take-over reads it (the URLs its record names), once for every member's verdict
        Optional<Status> holder =
                record.isPresent() ? RolloutRules.holderAnswer(cluster, record.get(), members) : Optional.empty();
        return judge(endpoints, members, clusterVersion, record, holder, now);
    }

    /**
     * The pure half of {@link #read}: the report from what the cluster answered; {@code holder} is what the record's
     * holder answered where the take-over reads it ({@link RolloutRules#holderAnswer}).
     */
    StatusReport judge(
            List<String> endpoints,
            List<Member> members,
            Optional<MinorLine> clusterVersion,
            Optional<Record> record,
            Optional<Status> holder,
            Instant now) {
        long leaderIndex = members.stream()
                .flatMap(m -> m.status().stream())
                .mapToLong(Status::raftIndex)
                .max()
                .orElse(0);
        Optional<MinorLine> job = members.stream()
                .flatMap(m -> m.status().stream())
                .flatMap(s -> s.downgradeTarget().stream())
                .findFirst();
        List<MemberRow> rows = new ArrayList<>();
        for (Member m : members) {
            Optional<Leg> next = m.status().flatMap(s -> nextLeg(s.line()));
            Optional<String> waits = next.map(leg -> waitsFor(leg, m.name(), members, clusterVersion, record, holder));
            rows.add(new MemberRow(
                    m.name(),
                    m.status().isPresent(),
                    m.problem(),
                    m.status().map(s -> s.server().toString()),
                    m.status().map(s -> s.line().toString()),
                    m.status().flatMap(Status::storage).map(MinorLine::toString),
                    m.status().map(Status::leader).orElse(false),
                    m.status().map(Status::raftIndex).orElse(0L),
                    m.status().map(s -> leaderIndex - s.raftIndex()).orElse(0L),
                    next.map(Leg::toString),
                    waits));
        }
        Optional<RecordRow> recordRow = record.map(r -> recordRow(r, members, holder, now));

        State state;
        String summary;
        Optional<String> stale = recordRow.flatMap(RecordRow::stale);
        boolean recordTooOld = recordRow.isPresent() && recordRow.get().age().compareTo(stuckAfter) > 0;
        boolean allAnswer = members.stream().allMatch(m -> m.status().isPresent());
        List<String> lines = members.stream()
                .flatMap(m -> m.status().stream())
                .map(s -> s.line().toString())
                .distinct()
                .toList();
        boolean atTarget = target.map(t -> lines.equals(List.of(t.toString()))).orElse(lines.size() == 1);
        if (stale.isPresent()) {
            state = State.STUCK;
            summary = "stuck: the restart record is stale (" + stale.get() + ")";
        } else if (recordTooOld) {
            state = State.STUCK;
            summary = "stuck: member " + recordRow.get().holder() + " has held the restart record for "
                    + recordRow.get().age().toSeconds() + " s (more than " + stuckAfter.toSeconds() + " s)";
        } else if (allAnswer
                && atTarget
                && record.isEmpty()
                && job.isEmpty()
                && clusterVersion.map(v -> lines.equals(List.of(v.toString()))).orElse(false)) {
            state = State.DONE;
            summary = "done: every member runs " + lines.getFirst() + ", the cluster version is " + lines.getFirst()
                    + ", no restart record, no downgrade job";
        } else {
            state = State.ROLLING;
            List<String> why = new ArrayList<>();
            members.stream().filter(m -> m.status().isEmpty()).forEach(m -> why.add(m.name() + " does not answer"));
            if (!atTarget) why.add("members run " + String.join(", ", lines));
            record.ifPresent(r -> why.add(r.value().holder() + " holds the restart record"));
            job.ifPresent(j -> why.add("a downgrade job to " + j + " runs"));
            if (why.isEmpty())
                why.add("the cluster version is "
                        + clusterVersion.map(Object::toString).orElse("unknown"));
            summary = "rolling: " + String.join("; ", why);
        }
        return new StatusReport(
                state,
                summary,
                endpoints,
                target.map(MinorLine::toString),
                clusterVersion.map(MinorLine::toString),
                job.map(MinorLine::toString),
                rows,
                recordRow,
                Optional.empty());
    }

    /** The next leg of a member on {@code line} toward the target: one minor at a time, as a runner walks it. */
    private Optional<Leg> nextLeg(MinorLine line) {
        if (target.isEmpty() || target.get().equals(line)) return Optional.empty();
        MinorLine to = target.get();
        MinorLine next = line.isOlderThan(to)
                ? new MinorLine(line.major(), line.minor() + 1)
                : new MinorLine(line.major(), line.minor() - 1);
        return Optional.of(new Leg(line, next));
    }

    /** What the runner of {@code name} waits for before it restarts its member for {@code leg}, by its own rules. */
    private static String waitsFor(
            Leg leg,
            String name,
            List<Member> members,
            Optional<MinorLine> clusterVersion,
            Optional<Record> record,
            Optional<Status> holder) {
        Self self = new Self(name, members.size(), false);
        Optional<Decision.Wait> gate = RolloutRules.gate(leg, self, members, clusterVersion);
        if (gate.isPresent()) return gate.get().why();
        Decision take = RolloutRules.take(leg, self, record, holder);
        return switch (take) {
            case Decision.Wait w -> w.why();
            case Decision.UseOwn own -> "nothing: it holds the restart record for this restart";
            case Decision.TakeOver over ->
                "nothing: it may take over member " + over.record().value().holder()
                        + "'s record, whose restart is over";
            case Decision.Release release -> "nothing: it releases its record of an earlier restart first";
            default -> {
                List<String> margin = RolloutRules.margin(self, members, RolloutPolicy.DEFAULT.raftIndexBound());
                yield margin.isEmpty()
                        ? "nothing: the gate is open and no record is held (its runner may restart it now)"
                        : "the quorum margin: " + String.join("; ", margin);
            }
        };
    }

    private RecordRow recordRow(Record r, List<Member> members, Optional<Status> holder, Instant now) {
        Optional<String> stale = Optional.empty();
        boolean listed =
                members.stream().anyMatch(m -> m.name().equals(r.value().holder()));
        if (!listed) {
            stale = Optional.of("its holder " + r.value().holder() + " is not a member of the cluster");
        } else if (RolloutRules.holderDone(r, holder)) {
            String line = holder.map(s -> s.line().toString()).orElse("?");
            stale = Optional.of("its holder " + r.value().holder() + " serves " + line + ", past the restart "
                    + r.value().from() + " -> " + r.value().to() + " it names; a waiting runner takes it over, and"
                    + " with none waiting it stays");
        }
        return new RecordRow(
                r.value().holder(),
                r.value().from().toString(),
                r.value().to().toString(),
                r.value().at().toString(),
                Duration.between(r.value().at(), now).isNegative()
                        ? Duration.ZERO
                        : Duration.between(r.value().at(), now),
                r.modRevision(),
                r.value().serves(),
                stale,
                stale.map(s -> removeCommand.apply(r.modRevision())));
    }
}
