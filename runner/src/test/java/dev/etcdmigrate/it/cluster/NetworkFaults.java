package dev.etcdmigrate.it.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Predicate;

/**
 * Seeded network faults during one rollout on a {@link ClusterLab} with namespaces, one after the other, each from
 * a moment of the rollout (an event of one of its runners) for 5-20 s, then undone:
 * <ul>
 *   <li>{@link Kind#PEER_CUT_IN_LEG}: a runner's leg starts its private etcd rejoining: another member's peer
 *       traffic is cut (iptables in its namespace);
 *   <li>{@link Kind#PEER_CUT_RECORD_HELD}: a runner takes the restart record: another member's peer traffic is cut;
 *   <li>{@link Kind#CLIENT_CUT}: a runner serves between legs (it will ask the others before its next restart):
 *       its host's requests to the other members' client ports are dropped;
 *   <li>{@link Kind#SLOW_LINK}: a leg starts: one host's link is shaped to a low rate (tc tbf; netem is not
 *       available here).
 * </ul>
 * The cuts come one after the other in the order the rollout reaches their moments ({@link #CUTS}), each after the
 * one before is undone; the slowed link comes beside them, from the first leg. The victims, rates and durations come
 * from the seed, the moments from the rollout (the same seed replays the same choices at the same events). A fault
 * whose moment does not come before the rollout ends is not applied (reported). {@link #finish()} waits for the
 * faults in place to end (each is undone); the lab's close undoes anything left (the namespaces go).
 */
final class NetworkFaults {

    enum Kind {
        PEER_CUT_IN_LEG,
        PEER_CUT_RECORD_HELD,
        CLIENT_CUT,
        SLOW_LINK
    }

    /** A fault applied: to whom, from when to when (epoch millis), on what moment. */
    record Applied(Kind kind, Member member, String detail, String trigger, long fromMillis, long toMillis) {
        @Override
        public String toString() {
            return kind + " on " + member.name() + (detail.isEmpty() ? "" : " (" + detail + ")") + " for "
                    + (toMillis - fromMillis) + " ms, when " + trigger;
        }
    }

    private final ClusterLab lab;
    /** The seeded choices of each kind: how long, whom (an index into the candidates), how slow. */
    private record Choice(long millis, int pick, String rate) {}

    private final Map<Kind, Choice> choices = new java.util.EnumMap<>(Kind.class);
    /** The cuts in the order a rollout edited one member at a time reaches their moments. */
    static final List<Kind> CUTS = List.of(Kind.PEER_CUT_IN_LEG, Kind.CLIENT_CUT, Kind.PEER_CUT_RECORD_HELD);

    private final List<Applied> applied = Collections.synchronizedList(new ArrayList<>());
    private final Thread[] cuts;
    private volatile boolean stop;
    private volatile Throwable failure;

    NetworkFaults(ClusterLab lab, Random random) {
        this.lab = lab;
        for (Kind kind : Kind.values()) { // drawn here, in one order: the drivers' timing does not change them
            choices.put(
                    kind,
                    new Choice(
                            5_000 + random.nextInt(15_001),
                            random.nextInt(1 << 16),
                            List.of("256kbit", "512kbit", "1mbit").get(random.nextInt(3))));
        }
        this.cuts = new Thread[] {
            Thread.ofPlatform().name("network-faults-cuts").unstarted(() -> run(CUTS)),
            Thread.ofPlatform().name("network-faults-slow").unstarted(() -> run(List.of(Kind.SLOW_LINK)))
        };
    }

    void start() {
        for (Thread t : cuts) t.start();
    }

    /** Stops applying faults (the rollout is done), lets the ones in place end; rethrows a failure of the driver. */
    List<Applied> finish() throws Exception {
        stop = true;
        for (Thread t : cuts) t.join();
        if (failure instanceof Exception e) throw e;
        if (failure instanceof Error e) throw e;
        synchronized (applied) {
            return List.copyOf(applied);
        }
    }

    /** The kinds one after the other, each from its moment for its time; the seeded choices drawn in turn. */
    private void run(List<Kind> kinds) {
        try {
            for (Kind kind : kinds) {
                if (stop) return;
                Choice c = choices.get(kind);
                long millis = c.millis();
                int pick = c.pick();
                String rate = c.rate();
                Trigger t = switch (kind) {
                    case PEER_CUT_IN_LEG, SLOW_LINK ->
                        awaitEvent("etcd-started", e -> e.path("rejoining").asBoolean());
                    case PEER_CUT_RECORD_HELD -> awaitEvent("restart-record-taken", e -> true);
                    case CLIENT_CUT -> awaitEvent("member-serving", e -> true);
                };
                if (t == null) return; // the rollout ended first
                Member at = lab.memberOf(t.runner());
                List<Member> others = lab.members().stream()
                        .filter(m -> m.host() != at.host())
                        .toList();
                Member victim = switch (kind) {
                    case PEER_CUT_IN_LEG, PEER_CUT_RECORD_HELD -> others.get(pick % others.size());
                    case CLIENT_CUT -> at;
                    case SLOW_LINK -> lab.members().get(pick % lab.size());
                };
                String trigger = at.name() + "'s " + t.event();
                long from = System.currentTimeMillis();
                try (ClusterLab.Fault f = switch (kind) {
                    case PEER_CUT_IN_LEG, PEER_CUT_RECORD_HELD -> lab.cutPeerTraffic(victim);
                    case CLIENT_CUT -> lab.cutClientTraffic(victim);
                    case SLOW_LINK -> lab.slowLink(victim, rate);
                }) {
                    from = System.currentTimeMillis();
                    long end = from + millis;
                    // the fault's duration (not a synchronisation): not cut short when the rollout ends meanwhile
                    while (System.currentTimeMillis() < end)
                        Thread.sleep(Math.min(200, end - System.currentTimeMillis()));
                }
                applied.add(new Applied(
                        kind, victim, kind == Kind.SLOW_LINK ? rate : "", trigger, from, System.currentTimeMillis()));
            }
        } catch (Throwable e) {
            failure = e;
        }
    }

    private record Trigger(RunnerProcess runner, String event) {}

    /** The first such event of any runner after now; null once the rollout is done. */
    private Trigger awaitEvent(String name, Predicate<JsonNode> test) throws InterruptedException {
        Map<RunnerProcess, Long> seen = new IdentityHashMap<>();
        for (RunnerProcess r : lab.runners()) seen.put(r, count(r, name, test));
        while (!stop) {
            for (RunnerProcess r : lab.runners()) {
                if (count(r, name, test) > seen.getOrDefault(r, 0L)) return new Trigger(r, name);
            }
            Thread.sleep(50); // the poll interval; the wait ends with the rollout
        }
        return null;
    }

    private static long count(RunnerProcess r, String name, Predicate<JsonNode> test) {
        return r.events(name).stream().filter(test).count();
    }
}
