package dev.etcdmigrate.it.nemesis;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.it.cluster.ClusterLab;
import dev.etcdmigrate.it.cluster.ClusterLab.Ack;
import dev.etcdmigrate.it.cluster.ClusterLab.Fail;
import dev.etcdmigrate.it.nemesis.Nemesis.Fault;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * One rollout's history under the nemesis and its checks. The history: every fault the nemesis applied with its
 * span, every pod (re)start, every runner's rollout events (record taken, the leg's quorum write, released, serving,
 * exec) with their times, every write the writer tried with its outcome and endpoint. The checks judge the runners
 * against the nemesis's own knowledge of the network, never against what the members answered:
 * <ul>
 *   <li>{@link #stopsLeftAQuorum}: whenever a runner took the record (it stops its member next, or keeps it down for
 *       its leg), the other members not cut off by the nemesis (a two-way peer cut, a stall, a kill) and not down
 *       for a restart of their own were a quorum;
 *   <li>{@link #outagesMadeByTheNemesis}: no write was acknowledged for a while although a member that nothing had
 *       faulted failed a write: such an outage is the nemesis's only as long as the members it left connected, less
 *       the ones down in their own leg (from the record taken to the leg's quorum write) or in a restart of their
 *       pod, were no quorum (or a CPU load slowed every answer); longer than {@link #TOLERANCE_MILLIS} otherwise,
 *       it is the runners'.
 * </ul>
 */
final class NemesisHistory {

    /**
     * An outage the runners may cause beside the nemesis: a member's switch from its step's etcd to its serving one
     * and the election after it, slowed by a busy machine; a release that waits its patience (30 s) is more.
     */
    static final long TOLERANCE_MILLIS = 15_000;
    /** A fault that began this shortly before a runner's decision may have come after its last read. */
    static final long RACE_MILLIS = 2_000;
    /** The writer's request timeout: a failure is printed this long after its request went out. */
    static final long WRITE_TIMEOUT_MILLIS = 3_000;
    /**
     * The shortest gap between two acknowledged writes that counts as an outage: the writer goes round the members,
     * so one that is down or cut costs a timeout on the way, two of them (of five) two.
     */
    static final long SHORTEST_OUTAGE_MILLIS = 2 * WRITE_TIMEOUT_MILLIS + 1_000;

    /** A runner's event at its time, for the member on {@code host}. */
    record Moment(int host, String event, long atMillis, JsonNode json) {}

    /** One span of the member down for its own restart: its pod started (or its record taken) to its return. */
    record Down(int host, long fromMillis, long toMillis, String why) {}

    /** A write outage: no write acknowledged from one ack to the next, a healthy member's write failing inside. */
    record Outage(long fromMillis, long toMillis, long unexplainedMillis, String cause) {
        long millis() {
            return toMillis - fromMillis;
        }
    }

    private final int size;
    private final List<Fault> faults;
    private final List<Moment> moments;
    private final List<Down> downs;
    private final List<Ack> acks;
    private final List<Fail> fails;
    /** When no writer ran ({from, to} epoch millis): a stretch without acknowledged writes there is no outage. */
    private final List<long[]> quiet;

    NemesisHistory(
            int size,
            List<Fault> faults,
            List<Moment> moments,
            List<long[]> restarts,
            List<Ack> acks,
            List<Fail> fails,
            List<long[]> quiet,
            long untilMillis) {
        this.size = size;
        this.quiet = List.copyOf(quiet);
        this.faults = List.copyOf(faults);
        this.moments = moments.stream()
                .sorted(Comparator.comparingLong(Moment::atMillis))
                .toList();
        this.acks =
                acks.stream().sorted(Comparator.comparingLong(Ack::atMillis)).toList();
        this.fails =
                fails.stream().sorted(Comparator.comparingLong(Fail::atMillis)).toList();
        List<Down> d = new ArrayList<>();
        for (long[] r : restarts) {
            int host = (int) r[0];
            long back = firstAfter(host, r[1], Set.of("member-serving", "restart-record-taken", "exec"), untilMillis);
            d.add(new Down(host, r[1], back, "its pod (re)started"));
        }
        for (Moment m : this.moments) {
            if (!m.event().equals("restart-record-taken")) continue;
            // a leg counts again from its step's quorum write; a restart at the same line (the one that settles a
            // record its release left) runs no step, and counts again once it serves or execs the target
            long back = firstAfter(
                    m.host(), m.atMillis(), Set.of("etcd-accepted-write", "member-serving", "exec"), untilMillis);
            d.add(new Down(m.host(), m.atMillis(), back, "its leg"));
        }
        this.downs = List.copyOf(d);
    }

    /** Every rollout event of the runners' (the ones the checks read), with the member it is for. */
    static List<Moment> moments(ClusterLab lab) {
        Set<String> wanted = Set.of(
                "restart-record-taken",
                "restart-record-released",
                "restart-record-taken-over",
                "etcd-accepted-write",
                "etcd-started",
                "etcd-stopped",
                "member-serving",
                "exec");
        List<Moment> all = new ArrayList<>();
        for (RunnerProcess r : lab.runners()) {
            int host = lab.memberOf(r).host();
            for (JsonNode e : r.events()) {
                String name = e.path("event").asText();
                if (!wanted.contains(name) || !e.hasNonNull("time")) continue;
                all.add(new Moment(
                        host, name, Instant.parse(e.path("time").asText()).toEpochMilli(), e));
            }
        }
        return all;
    }

    private long firstAfter(int host, long after, Set<String> events, long otherwise) {
        return moments.stream()
                .filter(m -> m.host() == host && m.atMillis() > after && events.contains(m.event()))
                .mapToLong(Moment::atMillis)
                .findFirst()
                .orElse(otherwise);
    }

    private int quorum() {
        return size / 2 + 1;
    }

    /** The members cut off by the nemesis at {@code at} (faults begun at least {@code slack} before). */
    private Set<Integer> cutOff(long at, long slack) {
        return faults.stream()
                .filter(f -> f.kind().disconnects && f.activeAt(at, slack))
                .map(Fault::host)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    private Set<Integer> downForRestart(long at, long slack) {
        return downs.stream()
                .filter(d -> d.fromMillis() <= at - slack && at < d.toMillis())
                .map(Down::host)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /**
     * Every record taken (the runner stops its member next, or keeps it down for its leg) that left fewer than a
     * quorum of the other members connected and up, by the nemesis's knowledge: the violations, described.
     */
    List<String> stopsLeftAQuorum() {
        List<String> violations = new ArrayList<>();
        for (Moment m : moments) {
            if (!m.event().equals("restart-record-taken")) continue;
            Set<Integer> out = cutOff(m.atMillis(), RACE_MILLIS);
            out.addAll(downForRestart(m.atMillis(), RACE_MILLIS));
            out.remove(m.host());
            long connected = size - 1 - out.size();
            if (connected < quorum()) {
                violations.add("m" + m.host() + " took the record at " + Instant.ofEpochMilli(m.atMillis())
                        + " for its restart " + m.json().path("from").asText() + " -> "
                        + m.json().path("to").asText() + " while " + names(out) + " were cut off or down: "
                        + connected + " of the other members connected, a quorum is " + quorum() + " (faults "
                        + activeAt(m.atMillis()) + ")");
            }
        }
        return violations;
    }

    /** Every outage, longest first, with the time of it that neither the nemesis nor a restart explains. */
    List<Outage> outages() {
        List<Outage> found = new ArrayList<>();
        long coveredUntil = Long.MIN_VALUE;
        for (Fail f : fails) {
            if (f.atMillis() <= coveredUntil || !healthy(f)) continue;
            long from = acks.stream()
                    .mapToLong(Ack::atMillis)
                    .filter(t -> t < f.atMillis())
                    .max()
                    .orElse(f.atMillis() - WRITE_TIMEOUT_MILLIS);
            long to = acks.stream()
                    .mapToLong(Ack::atMillis)
                    .filter(t -> t > f.atMillis())
                    .min()
                    .orElse(f.atMillis());
            for (long[] q : quiet) {
                if (q[1] < f.atMillis() && q[1] > from) {
                    // the writer started again after its last acknowledgement: the outage begins with it
                    from = q[1];
                } else if (q[0] > from && q[0] < to) {
                    // up to the writer's pause: the write in flight when the writer was told to stop may fail after
                    // the pause began, and the writer tries nothing more until it starts again
                    to = Math.max(q[0], f.atMillis());
                }
            }
            coveredUntil = to;
            if (to - from < SHORTEST_OUTAGE_MILLIS) continue;
            long unexplained = 0;
            for (long t = from; t < to; t += 100) if (!explained(t)) unexplained += 100;
            found.add(new Outage(from, to, unexplained, cause(from, to)));
        }
        found.sort(Comparator.comparingLong(Outage::millis).reversed());
        return found;
    }

    /** The outages longer than the tolerance outside what the nemesis made: the violations, described. */
    List<String> outagesMadeByTheNemesis() {
        return outages().stream()
                .filter(o -> o.unexplainedMillis() > TOLERANCE_MILLIS)
                .map(o -> "no write acknowledged for " + o.millis() + " ms from "
                        + Instant.ofEpochMilli(o.fromMillis()) + ", " + o.unexplainedMillis()
                        + " ms of it with a quorum connected and up by the nemesis's knowledge: " + o.cause())
                .toList();
    }

    /** A failed write to a member nothing had faulted nor taken down around it. */
    private boolean healthy(Fail f) {
        long sent = f.atMillis() - WRITE_TIMEOUT_MILLIS;
        for (Fault x : faults) {
            boolean overlaps = x.fromMillis() <= f.atMillis() && x.toMillis() >= sent - RACE_MILLIS;
            if (overlaps && (x.host() == f.endpoint() || x.kind() == Nemesis.Kind.CPU_LOAD)) return false;
        }
        for (Down d : downs) {
            if (d.host() == f.endpoint() && d.fromMillis() <= f.atMillis() && d.toMillis() >= sent - RACE_MILLIS)
                return false;
        }
        return true;
    }

    /** Whether the nemesis (with the members down for their own restarts) left no quorum up at {@code t}. */
    private boolean explained(long t) {
        boolean loaded = faults.stream()
                .anyMatch(f -> f.kind() == Nemesis.Kind.CPU_LOAD
                        && f.fromMillis() <= t
                        && t <= f.toMillis() + WRITE_TIMEOUT_MILLIS);
        if (loaded) return true;
        Set<Integer> out = cutOff(t, 0);
        // a fault just undone: raft reconnects and elects within a write timeout or two
        faults.stream()
                .filter(f -> f.kind().disconnects && f.toMillis() <= t && t < f.toMillis() + 2 * WRITE_TIMEOUT_MILLIS)
                .forEach(f -> out.add(f.host()));
        out.addAll(downForRestart(t, 0));
        return size - out.size() < quorum();
    }

    private String cause(long from, long to) {
        List<String> parts = new ArrayList<>();
        for (Fault f : faults) if (f.fromMillis() <= to && f.toMillis() >= from) parts.add(f.toString());
        for (Down d : downs)
            if (d.fromMillis() <= to && d.toMillis() >= from) parts.add("m" + d.host() + " down for " + d.why());
        return parts.isEmpty() ? "nothing the nemesis did" : String.join("; ", parts);
    }

    private String activeAt(long at) {
        return faults.stream().filter(f -> f.activeAt(at, 0)).toList().toString();
    }

    private static String names(Set<Integer> hosts) {
        return hosts.stream().map(h -> "m" + h).toList().toString();
    }

    /** The record's own history: each take, release and take-over, in order (for the report). */
    List<String> recordHistory() {
        return moments.stream()
                .filter(m -> m.event().startsWith("restart-record"))
                .map(m -> Instant.ofEpochMilli(m.atMillis()) + " m" + m.host() + " " + m.event() + " "
                        + m.json().path("from").asText("")
                        + (m.json().has("to") ? "->" + m.json().path("to").asText() : "")
                        + " rev " + m.json().path("revision").asText())
                .toList();
    }
}
