package dev.etcdmigrate.it.nemesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.cluster.RecordValue;
import dev.etcdmigrate.cluster.RolloutCoordinator;
import dev.etcdmigrate.it.cluster.ClusterLab;
import dev.etcdmigrate.it.cluster.ClusterLab.Ack;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.nemesis.Nemesis.Kind;
import dev.etcdmigrate.it.nemesis.Nemesis.Pods;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The rollout under a nemesis on real etcd (docs/ha.md, "The nemesis"): members with peer and client TLS in network
 * namespaces of their own ({@link ClusterLab}), each member's pod a real runner edited to the final target one member
 * at a time, a writer and a sampler on a host of their own, and faults from {@link Nemesis} at the runners' own
 * moments (a record taken, a leg's etcd started, its quorum write, a release, a member serving). Every rollout is
 * judged on its history ({@link NemesisHistory}): whenever a runner took the record, the other members connected and
 * up by the nemesis's knowledge were a quorum; no write outage but where the nemesis made it; every acknowledged write
 * on every member at its revision and nothing else in the keyspace (no record left); every member at the target
 * once the faults are healed. Needs root; -Pha runs it, -Pnemesis-long runs the seeded rollouts at length.
 */
class NemesisIT {

    private static final Duration DEADLINE = Duration.ofMinutes(8);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String OWN_LINE = "\"source\":\"etcd-migrate\"";
    /** The moments the seeded faults come at: each a runner's event. */
    private static final List<String> MOMENTS = List.of(
            "restart-record-taken", "etcd-started", "etcd-accepted-write", "restart-record-released", "member-serving");

    private ClusterLab lab;
    private Nemesis nemesis;
    private Pods pods;
    private ClusterLab.Sampler sampler;
    private ClusterLab.Writer writer;
    /** The writers of the cluster so far, the current one last (a test may pause writing: a fresh one then). */
    private final List<ClusterLab.Writer> writers = new ArrayList<>();
    /** When no writer ran ({from, to} epoch millis; to MAX while paused). */
    private final List<long[]> quiet = new ArrayList<>();

    private final List<Ack> acked = new ArrayList<>();
    private final Set<String> retried = new HashSet<>();
    private final List<String> report = new ArrayList<>();
    /** The longest outage seen so far and its cause, over the whole test. */
    private NemesisHistory.Outage longest;

    @AfterEach
    void tearDown() throws Exception {
        closeCluster();
        report.forEach(System.out::println);
    }

    private void closeCluster() throws Exception {
        if (pods != null) {
            pods.close();
            report.addAll(pods.exited());
        }
        if (pods != null && lab != null) {
            for (Member m : lab.members()) {
                RunnerProcess pod = pods.current(m.host());
                // a pod that never reached its target: its diary, for the failure's reader
                if (pod != null && pod.count("exec") == 0) {
                    report.add(m.name() + "'s runner, not at its target:\n" + Pods.tail(pod));
                }
            }
        }
        pods = null;
        try {
            if (nemesis != null) nemesis.close(); // SIGCONT and rules removed before anything waits on a member
        } finally {
            nemesis = null;
            if (lab != null) lab.close(); // clients, runners, then the namespaces with their rules
            lab = null;
        }
    }

    /**
     * Finding 1 of the rollout's attackers: a member cut from its peers answers Status, the member list and /version
     * locally, with its raft index frozen. Three members serve 3.6; m0 is edited to 3.7 and waits, serving, on a
     * record m2 holds (the nemesis wrote it, as a runner would); m1's peer traffic is cut (m1 answers without a
     * leader); the record goes. m0's runner must not take m1 for a member of the quorum: stopping m0 would leave m2
     * alone with m1 cut off. It holds the record and waits for m1; once m1 is healed the rollout completes.
     */
    @Test
    void aMemberCutFromItsPeersIsNoMarginForAStop(@TempDir Path dir) throws Exception {
        begin(dir, 3, line("3.6"));
        long started = System.currentTimeMillis();
        Member m0 = lab.members().get(0);
        Member m1 = lab.members().get(1);
        Member m2 = lab.members().get(2);
        putRecord(
                m2,
                new RecordValue(
                        m2.name(),
                        line("3.6").minorLine(),
                        line("3.7").minorLine(),
                        Instant.now(),
                        List.of(m2.clientUrl())));
        pods.edit(m0, line("3.7"));
        RunnerProcess runner = pods.current(0);
        runner.awaitEvent("rollout-waiting", e -> names(e).contains(m2.name()), DEADLINE);
        sampler.awaitServing(0, DEADLINE);
        long deleted;
        // no writes while m1 is cut: its raft index stays within any bound of the others', as it does for minutes
        // at Kubernetes' write rate, so only raft's own view of m1 can tell that it is cut off
        stopWriter();
        try (Nemesis.Applied cut = nemesis.peerCut(m1, "m0 serving 3.6, waiting on m2's record")) {
            Poll.untilTrue(Duration.ofSeconds(30), Duration.ofMillis(200), "m1 without a leader", () -> {
                return Nemesis.leaderless(lab, m1);
            });
            deleteRecord(m2);
            deleted = System.currentTimeMillis();
            report.add("m1 cut " + (deleted - cut.since()) + " ms before m2's record went");
            // the fault's time: m0's runner reads the cluster every half second meanwhile
            awaitEventOrTime(runner, "restart-record-taken", Duration.ofSeconds(20));
        }
        startWriter();
        report.add("m1's peer traffic cut; m0's runner took the record "
                + runner.events("restart-record-taken").size() + " time(s) meanwhile; it waited: "
                + runner.events("rollout-waiting").stream()
                        .map(e -> e.path("why").asText())
                        .distinct()
                        .toList());
        editOneAtATime(List.of(m1, m2), line("3.7"));
        converge(line("3.7"));
        check(started, "3.6 -> 3.7, m1 cut from its peers");
        assertTrue(
                runner.events("rollout-waiting").stream()
                        .anyMatch(e -> time(e) >= deleted && names(e).contains(m1.name())),
                "m0's runner waited naming m1 while m1 was cut off: " + runner.events("rollout-waiting"));
        end();
    }

    /**
     * Finding 2: two of five members cut from their peers while a leg runs, after its step's etcd rejoined: the three
     * connected (the leg's etcd among them) are a quorum, the step takes its quorum write, and the leg's member still
     * counts. Its runner must not keep it down waiting for a release the other two connected members alone cannot
     * commit: the cluster would take no write for the release's patience. Five members serve 3.6, m0 is edited to
     * 3.7, m3 and m4 are cut when its leg's etcd starts rejoining, for 45 s; then the others are edited.
     */
    @Test
    void twoOfFiveCutDuringALegKeepNoMemberDown(@TempDir Path dir) throws Exception {
        begin(dir, 5, line("3.6"));
        long started = System.currentTimeMillis();
        List<Member> members = lab.members();
        pods.edit(members.get(0), line("3.7"));
        RunnerProcess runner = pods.current(0);
        runner.awaitEvent("etcd-started", e -> e.path("rejoining").asBoolean(), DEADLINE);
        try (Nemesis.Applied m3 = nemesis.peerCut(members.get(3), "m0's leg etcd started rejoining");
                Nemesis.Applied m4 = nemesis.peerCut(members.get(4), "m0's leg etcd started rejoining")) {
            // the fault's time: longer than a release's patience (30 s)
            awaitEventOrTime(runner, "never-an-event", Duration.ofSeconds(45));
        }
        editOneAtATime(members.subList(1, 5), line("3.7"));
        converge(line("3.7"));
        check(started, "3.6 -> 3.7 on five members, m3 and m4 cut during m0's leg");
        end();
    }

    /**
     * Finding 3: a member without a leader answers the member list locally while the record's linearizable read
     * fails. Three members serve 3.6 and m1 is cut from its peers; then m0's pod is edited to 3.7, so m0 is down and
     * m2 is alone: no quorum. m0's runner must not wait down for the record (its member's vote is what the quorum
     * lacks): it serves its data's line, m0 and m2 take writes again while m1 is still cut, and it takes no record
     * while m1 is cut off. Once m1 is healed the rollout completes.
     */
    @Test
    void aMemberWithoutALeaderKeepsNoRestartedMemberDown(@TempDir Path dir) throws Exception {
        begin(dir, 3, line("3.6"));
        long started = System.currentTimeMillis();
        Member m0 = lab.members().get(0);
        Member m1 = lab.members().get(1);
        RunnerProcess runner;
        long healed;
        try (Nemesis.Applied cut = nemesis.peerCut(m1, "before m0's pod is edited")) {
            Poll.untilTrue(Duration.ofSeconds(30), Duration.ofMillis(200), "m1 without a leader", () -> {
                return Nemesis.leaderless(lab, m1);
            });
            pods.edit(m0, line("3.7"));
            runner = pods.current(0);
            long edited = System.currentTimeMillis();
            // m0 is down for its edit: it serves again only if its runner serves while the record cannot be read
            sampler.awaitServing(0, Duration.ofSeconds(60));
            long serving = System.currentTimeMillis();
            Poll.untilTrue(
                    Duration.ofSeconds(30),
                    Duration.ofMillis(200),
                    "a write acknowledged while m1 is cut, after m0 serves again",
                    () -> writer.acks().stream().anyMatch(a -> a.atMillis() > serving));
            report.add("m1 cut; m0 edited, serving again " + (serving - edited) + " ms later; writes taken with m1"
                    + " still cut");
            healed = System.currentTimeMillis();
        }
        assertTrue(
                runner.events("restart-record-taken").stream().noneMatch(e -> time(e) < healed),
                "m0's runner took the record while m1 was cut off: " + runner.events("restart-record-taken"));
        editOneAtATime(List.of(m1, lab.members().get(2)), line("3.7"));
        converge(line("3.7"));
        check(started, "3.6 -> 3.7, m1 without a leader when m0 was edited");
        end();
    }

    /**
     * Finding 5: a restarted runner that reaches etcds which do not answer in time (stalled, or slowed by load past the
     * client's timeout) must read them as a failed read, never as "no member of the cluster runs", whose first leg
     * runs at once: an etcd is there, so another member may be out by its runner's choice, and a leg at once would
     * make two out. Three members serve 3.6; m1 and m2 are stalled (their ports take connections, their etcds answer
     * nothing), and m0's pod is edited to 3.7. m0's runner must start no leg while they are silent: it serves its
     * data's line and reads again. Once they answer, the rollout completes.
     */
    @Test
    void aRestartedRunnerThatReachesNoAnswerRunsNoLegAtOnce(@TempDir Path dir) throws Exception {
        begin(dir, 3, line("3.6"));
        long started = System.currentTimeMillis();
        Member m0 = lab.members().get(0);
        Member m1 = lab.members().get(1);
        Member m2 = lab.members().get(2);
        RunnerProcess restarted;
        long silentFrom;
        long silentTo;
        try (Nemesis.Applied s1 = nemesis.stall(m1, "before m0's pod is edited");
                Nemesis.Applied s2 = nemesis.stall(m2, "before m0's pod is edited")) {
            silentFrom = System.currentTimeMillis();
            pods.edit(m0, line("3.7"));
            restarted = pods.current(0);
            // the fault's time: m0's runner's first reads of the cluster, each waiting out the silence
            awaitEventOrTime(restarted, "never-an-event", Duration.ofSeconds(20));
            silentTo = System.currentTimeMillis();
        }
        // a leg is its plan's steps (serving its data's line while it waits is none)
        List<JsonNode> legs = restarted.events("step-started").stream()
                .filter(e -> time(e) <= silentTo)
                .toList();
        report.add("m1 and m2 silent for " + (silentTo - silentFrom) + " ms; m0's steps started meanwhile: "
                + legs.stream().map(e -> e.path("time").asText()).toList() + "; m0 served its data's line "
                + restarted.events("member-serving").stream()
                        .filter(e -> time(e) <= silentTo)
                        .count()
                + " time(s) meanwhile");
        report.addAll(diary(restarted, silentFrom, silentTo));
        assertTrue(legs.isEmpty(), "m0's runner ran a leg while the others were silent: " + legs);
        editOneAtATime(List.of(m1, m2), line("3.7"));
        converge(line("3.7"));
        check(started, "3.6 -> 3.7, m0 restarted while m1 and m2 were silent");
        end();
    }

    /**
     * The nemesis's own knowledge, on real etcd: a member that cannot open connections to its peers is still connected
     * (raft's streams it would dial are silent, its peers reach it through the ones they dial and their pipeline), so
     * it counts for the quorum. Three members serve 3.6; m2 is stalled, so m0 and m1 are the quorum; m0's outgoing peer
     * dials are cut for longer than the outage the checks allow, then its peers' dials to it. Writes must go on: an
     * outage here would be the fault disconnecting more than the history says, and every rollout check built on that
     * knowledge would misjudge.
     */
    @Test
    void aMemberThatCannotDialItsPeersStillCountsForTheQuorum(@TempDir Path dir) throws Exception {
        begin(dir, 3, line("3.6"));
        long started = System.currentTimeMillis();
        Member m0 = lab.members().get(0);
        Member m2 = lab.members().get(2);
        try (Nemesis.Applied stalled = nemesis.stall(m2, "the quorum left to m0 and m1")) {
            Poll.untilTrue(
                    Duration.ofSeconds(30),
                    Duration.ofMillis(200),
                    "a write acknowledged with m2 stalled",
                    () -> writer.acks().stream().anyMatch(a -> a.atMillis() > stalled.since() + 2_000));
            // the fault's time: longer than an outage the checks let pass unexplained
            Duration held = Duration.ofMillis(NemesisHistory.TOLERANCE_MILLIS + 10_000);
            try (Nemesis.Applied cut = nemesis.peerDialOutCut(m0, "m2 stalled")) {
                awaitEventOrTime(lab.runners().getFirst(), "never-an-event", held);
            }
            try (Nemesis.Applied cut = nemesis.peerDialInCut(m0, "m2 stalled, m0's dials healed")) {
                awaitEventOrTime(lab.runners().getFirst(), "never-an-event", held);
            }
        }
        check(started, "3.6 serving, m2 stalled, m0's peer dials cut one way, then the other");
        end();
    }

    /**
     * The seeded nemesis: rollouts 3.4 -> 3.7, 3.7 -> 3.5, 3.5 -> 3.7, 3.7 -> 3.5 on one cluster, then a fresh one,
     * three members and five in turn (-Dnemesis.rollouts, 2 by default: the first two on three members), each with 2-4
     * faults of every kind drawn from the rollout's seed, each at a runner's moment. The seed is printed:
     * -Dnemesis.seed=N with the same -Dnemesis.rollouts replays the choices (the moments come from the rollout).
     * -Dnemesis.minutes bounds the time: no rollout starts after it; -Dnemesis.kinds=KILL,STALL draws only those.
     */
    @Test
    void seededRollouts(@TempDir Path dir) throws Exception {
        long seed = Long.getLong("nemesis.seed", System.currentTimeMillis());
        int rollouts = Integer.getInteger("nemesis.rollouts", 2);
        long until = System.currentTimeMillis()
                + Duration.ofMinutes(Long.getLong("nemesis.minutes", 600)).toMillis();
        report.add("nemesis: -Dnemesis.seed=" + seed + " -Dnemesis.rollouts=" + rollouts);
        Random master = new Random(seed);
        long began = System.currentTimeMillis();
        Map<Kind, Integer> injected = new EnumMap<>(Kind.class);
        int done = 0;
        long acknowledged = 0; // of the clusters ended
        List<String> violations = new ArrayList<>();
        Release[][] legs = {
            {line("3.4"), line("3.7")},
            {line("3.7"), line("3.5")},
            {line("3.5"), line("3.7")},
            {line("3.7"), line("3.5")}
        };
        try {
            for (int i = 0; i < rollouts && System.currentTimeMillis() < until; i++) {
                int phase = i % legs.length;
                long rolloutSeed = master.nextLong();
                if (phase == 0) {
                    if (lab != null) acknowledged += endCluster();
                    int size = (i / legs.length) % 2 == 0 ? 3 : 5;
                    begin(dir.resolve("c" + i), size, legs[0][0]);
                }
                Release from = legs[phase][0];
                Release to = legs[phase][1];
                String what = "rollout " + i + " (" + from.version() + " -> " + to.version() + " on " + lab.size()
                        + " members, seed " + rolloutSeed + ")";
                long started = System.currentTimeMillis();
                List<Nemesis.Fault> faults = seededRollout(to, new Random(rolloutSeed), what);
                faults.forEach(f -> injected.merge(f.kind(), 1, Integer::sum));
                // the next rollouts run on: a long run reports every violation it meets, not only the first
                violations.addAll(violations(started, what));
                done++;
            }
            if (lab != null) acknowledged += endCluster();
        } finally {
            report.add(String.format(
                    "nemesis: %d rollouts in %d s, %d violation(s), faults injected %s (%d), acknowledged writes %d,"
                            + " longest outage %s",
                    done,
                    (System.currentTimeMillis() - began) / 1000,
                    violations.size(),
                    injected,
                    injected.values().stream().mapToInt(Integer::intValue).sum(),
                    acknowledged,
                    longest == null ? "none" : longest.millis() + " ms (" + longest.cause() + ")"));
        }
        assertTrue(done > 0, "no rollout ran within -Dnemesis.minutes");
        assertTrue(violations.isEmpty(), violations.size() + " violation(s):\n" + String.join("\n", violations));
    }

    /** One rollout edited one member at a time, under seeded faults until every pod exec'd; returns the faults. */
    private List<Nemesis.Fault> seededRollout(Release to, Random random, String what) throws Exception {
        nemesis.clearHistory();
        int count = 2 + random.nextInt(3);
        List<Nemesis.Choice> choices = new ArrayList<>();
        for (int k = 0; k < count; k++) choices.add(Nemesis.Choice.draw(random, kinds(), MOMENTS));
        AtomicBoolean over = new AtomicBoolean();
        Throwable[] failure = new Throwable[1];
        Thread driver = Thread.ofPlatform().name("nemesis").start(() -> {
            try {
                for (Nemesis.Choice c : choices) {
                    if (over.get()) return;
                    inject(c, over);
                }
            } catch (Throwable t) {
                failure[0] = t;
            }
        });
        try {
            editOneAtATime(lab.members(), to);
            pods.awaitExec(DEADLINE);
        } finally {
            over.set(true);
            driver.join(Duration.ofMinutes(3).toMillis());
            if (driver.isAlive()) {
                driver.interrupt();
                driver.join();
            }
            report.add(what + ": " + nemesis.history().size() + " of " + count + " faults applied");
            nemesis.history().forEach(f -> report.add("  " + f));
        }
        if (failure[0] instanceof Exception e) throw e;
        if (failure[0] instanceof Error e) throw e;
        converge(to);
        return nemesis.history();
    }

    /** One seeded fault at its moment (none if the rollout ends first), held for its time, then undone. */
    private void inject(Nemesis.Choice c, AtomicBoolean over) throws Exception {
        Moment at = awaitMoment(c.moment(), over);
        if (at == null) return;
        Thread.sleep(c.delayMillis()); // a seeded point after the moment, not a synchronisation
        Member trigger = lab.memberOf(at.runner());
        List<Member> members = lab.members();
        String why = trigger.name() + "'s " + c.moment();
        Member victim = members.get(c.pick() % members.size());
        if (c.kind() == Kind.KILL) {
            Member killed = trigger; // its pod at the moment it reached
            try (Nemesis.Applied kill = nemesis.kill(pods, killed, why)) {
                sampler.awaitServing(killed.host(), DEADLINE);
            }
            return;
        }
        if (c.kind() == Kind.REPLACED) {
            List<Member> others =
                    members.stream().filter(m -> !m.equals(victim)).toList();
            try (Nemesis.Applied replaced = nemesis.replace(pods, victim, others, why)) {
                sampler.awaitServing(victim.host(), DEADLINE);
            }
            return;
        }
        List<Nemesis.Applied> applied = new ArrayList<>();
        try {
            switch (c.kind()) {
                case PEER_CUT -> {
                    // on five members, two at once now and then: still a minority
                    int victims = members.size() >= 5 && c.pick() % 2 == 0 ? 2 : 1;
                    for (int v = 0; v < victims; v++) {
                        applied.add(nemesis.peerCut(members.get((c.pick() + v) % members.size()), why));
                    }
                }
                case PEER_DIAL_OUT_CUT -> applied.add(nemesis.peerDialOutCut(victim, why));
                case PEER_DIAL_IN_CUT -> applied.add(nemesis.peerDialInCut(victim, why));
                case CLIENT_CUT -> applied.add(nemesis.clientCut(victim, why));
                case STALL -> applied.add(nemesis.stall(victim, why));
                case CPU_LOAD -> applied.add(nemesis.cpuLoad(victim, 2, Duration.ofMillis(c.millis()), why));
                case CERT_EXPIRED -> applied.add(nemesis.expireCertificate(victim, Duration.ofSeconds(3), why));
                case KILL, REPLACED -> throw new IllegalStateException("above");
            }
            long end = System.currentTimeMillis() + c.millis();
            // the fault's duration (not a synchronisation): not cut short when the rollout ends meanwhile
            while (System.currentTimeMillis() < end) Thread.sleep(Math.min(200, end - System.currentTimeMillis()));
        } finally {
            for (Nemesis.Applied a : applied) a.close();
        }
        if (c.kind() == Kind.CERT_EXPIRED) {
            // renewed: the pod restarted, as kubeadm's renewal asks (the runner reads its TLS files once, at start;
            // etcd at each handshake)
            pods.edit(victim, pods.target(victim.host()));
            sampler.awaitServing(victim.host(), DEADLINE);
        }
    }

    /**
     * The kinds of fault drawn: every kind but {@link Kind#REPLACED}, or the ones -Dnemesis.kinds names (KILL,STALL,
     * ...). A replaced member is drawn only when named: its first run did not converge (docs/ha.md, "The nemesis").
     */
    private static List<Kind> kinds() {
        String named = System.getProperty("nemesis.kinds", "");
        if (named.isBlank()) {
            return java.util.Arrays.stream(Kind.values())
                    .filter(k -> k != Kind.REPLACED)
                    .toList();
        }
        return java.util.Arrays.stream(named.split(","))
                .map(String::trim)
                .map(Kind::valueOf)
                .toList();
    }

    private record Moment(RunnerProcess runner, JsonNode event) {}

    /** The next event of that name of any runner after now (a leg's etcd: only a rejoining one); null once over. */
    private Moment awaitMoment(String name, AtomicBoolean over) throws InterruptedException {
        Map<RunnerProcess, Integer> seen = new IdentityHashMap<>();
        for (RunnerProcess r : lab.runners()) seen.put(r, r.lineCount());
        while (!over.get()) {
            for (RunnerProcess r : lab.runners()) {
                int from = seen.getOrDefault(r, 0);
                List<String> fresh = r.linesFrom(from);
                seen.put(r, from + fresh.size());
                for (String line : fresh) {
                    if (!line.contains(OWN_LINE) || !line.contains("\"" + name + "\"")) continue;
                    try {
                        JsonNode e = JSON.readTree(line);
                        if (!e.path("event").asText().equals(name)) continue;
                        if (name.equals("etcd-started") && !e.path("rejoining").asBoolean()) continue;
                        return new Moment(r, e);
                    } catch (java.io.IOException notJson) {
                        // a child's line that mentions the name
                    }
                }
            }
            Thread.sleep(100); // the poll interval; the wait ends with the rollout
        }
        return null;
    }

    // ---- the cluster

    private void begin(Path dir, int size, Release from) throws Exception {
        Files.createDirectories(dir);
        lab = ClusterLab.create(dir, size, ClusterLab.Layout.SEPARATE_HOSTS, "nemesis-it");
        nemesis = new Nemesis(lab);
        pods = new Pods(lab);
        for (Member m : lab.members()) pods.edit(m, from);
        pods.awaitExec(DEADLINE);
        ClusterLab.Writer seed = lab.writer("/registry/seed/", 50, Duration.ofSeconds(120));
        seed.awaitDone();
        acked.clear();
        retried.clear();
        acked.addAll(seed.acks());
        retried.addAll(seed.failedKeys());
        sampler = lab.sampler();
        sampler.awaitFirst();
        writers.clear();
        quiet.clear();
        startWriter();
        report.add(size + " members serving " + from.version() + " ("
                + lab.network().names().getFirst() + ")");
    }

    private void startWriter() throws Exception {
        if (!quiet.isEmpty() && quiet.getLast()[1] == Long.MAX_VALUE) quiet.getLast()[1] = System.currentTimeMillis();
        writer = lab.writer("/registry/rollout" + writers.size() + "/", 1_000_000, Duration.ofMinutes(120));
        writers.add(writer);
    }

    /** The writer stopped (it stops at the end of its stdin), its acknowledged writes kept for the end's check. */
    private void stopWriter() throws Exception {
        quiet.add(new long[] {System.currentTimeMillis(), Long.MAX_VALUE});
        writer.stop();
    }

    /** The operator's way: each member's manifest edited once the one before serves again. */
    private void editOneAtATime(List<Member> members, Release to) throws Exception {
        for (Member m : members) {
            pods.edit(m, to);
            sampler.awaitServing(m.host(), DEADLINE);
        }
    }

    /** Once healed: every pod exec'd the target, every member serves it, the cluster version is its line. */
    private void converge(Release to) throws Exception {
        pods.awaitExec(DEADLINE);
        for (Member m : lab.members()) sampler.awaitVersion(m.host(), to.version(), DEADLINE);
        lab.awaitClusterVersion(to.minorLine().toString(), DEADLINE);
        for (Member m : lab.members()) {
            assertEquals(to.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
        }
    }

    /** The rollout's history since {@code started}, reported and checked: fails on any violation. */
    private void check(long started, String what) {
        List<String> violations = violations(started, what);
        assertTrue(violations.isEmpty(), String.join("\n", violations));
    }

    /** The rollout's history since {@code started}, reported; its violations of the checks, described. */
    private List<String> violations(long started, String what) {
        long now = System.currentTimeMillis();
        List<NemesisHistory.Moment> moments = NemesisHistory.moments(lab).stream()
                .filter(m -> m.atMillis() >= started)
                .toList();
        List<long[]> restarts =
                pods.restarts().stream().filter(r -> r[1] >= started).toList();
        NemesisHistory history = new NemesisHistory(
                lab.size(),
                nemesis.history().stream().filter(f -> f.toMillis() >= started).toList(),
                moments,
                restarts,
                writers.stream()
                        .flatMap(w -> w.acks().stream())
                        .filter(a -> a.atMillis() >= started)
                        .toList(),
                writers.stream()
                        .flatMap(w -> w.fails().stream())
                        .filter(f -> f.atMillis() >= started)
                        .toList(),
                quiet,
                now);
        List<NemesisHistory.Outage> outages = history.outages();
        report.add(what + ": " + (now - started) + " ms, " + outages.size() + " write outage(s)"
                + (outages.isEmpty()
                        ? ""
                        : ", the longest " + outages.getFirst().millis() + " ms ("
                                + outages.getFirst().unexplainedMillis() + " ms not the nemesis's): "
                                + outages.getFirst().cause()));
        report.add("  the record: " + history.recordHistory());
        if (!outages.isEmpty() && (longest == null || outages.getFirst().millis() > longest.millis())) {
            longest = outages.getFirst();
        }
        List<String> stops = history.stopsLeftAQuorum();
        List<String> made = history.outagesMadeByTheNemesis();
        List<String> violations = new ArrayList<>();
        if (!stops.isEmpty())
            violations.add(what + ": a runner's stop left no connected quorum:\n  " + String.join("\n  ", stops));
        if (!made.isEmpty())
            violations.add(what + ": write outages the nemesis did not make:\n  " + String.join("\n  ", made));
        report.addAll(violations);
        for (NemesisHistory.Outage o : outages) {
            if (o.unexplainedMillis() > NemesisHistory.TOLERANCE_MILLIS) report.addAll(diary(o));
        }
        return violations;
    }

    /**
     * What every runner reported from shortly before an outage to its end (event, time, and the fields that say why:
     * the wait's reason and members, a failure's reason), so a report says what the runners did meanwhile.
     */
    private List<String> diary(NemesisHistory.Outage o) {
        List<String> lines = new ArrayList<>();
        lines.add("  the runners' events from " + Instant.ofEpochMilli(o.fromMillis() - 5_000) + " to "
                + Instant.ofEpochMilli(o.toMillis()) + ":");
        for (RunnerProcess r : lab.runners()) lines.addAll(diary(r, o.fromMillis() - 5_000, o.toMillis()));
        return lines;
    }

    /** One runner's events from {@code from} to {@code to}, each with the fields that say why. */
    private List<String> diary(RunnerProcess r, long from, long to) {
        List<String> lines = new ArrayList<>();
        String m = "m" + lab.memberOf(r).host();
        for (JsonNode e : r.events()) {
            if (!e.hasNonNull("time")) continue;
            long t = time(e);
            if (t < from || t > to) continue;
            StringBuilder b = new StringBuilder("    " + e.path("time").asText() + " " + m + " "
                    + e.path("event").asText());
            for (String field : List.of("why", "reason", "members", "from", "to", "version", "rejoining")) {
                if (e.has(field)) b.append(" ").append(field).append("=").append(e.get(field));
            }
            lines.add(b.toString());
        }
        return lines;
    }

    /** Writer and sampler stopped: every acknowledged write on every member at its revision; nothing else. */
    private void end() throws Exception {
        endCluster();
    }

    /** {@link #end()}, then the cluster closed; returns the writes acknowledged in it. */
    private long endCluster() throws Exception {
        writer.stop();
        sampler.stop();
        // the one write in flight when a writer stopped may have committed unacknowledged: the next key it would write
        Set<String> inFlight = new HashSet<>();
        long failed = 0;
        for (int w = 0; w < writers.size(); w++) {
            ClusterLab.Writer each = writers.get(w);
            acked.addAll(each.acks());
            retried.addAll(each.failedKeys());
            inFlight.add("/registry/rollout" + w + "/" + each.acks().size());
            failed += each.failed();
        }
        lab.assertEveryAckOnEveryMember(acked, retried, inFlight::contains);
        report.add("every member holds the " + acked.size() + " acknowledged writes at their revisions; writes failed "
                + failed);
        long acknowledged = acked.size();
        closeCluster();
        return acknowledged;
    }

    // ---- helpers

    /** Until the runner reports the event, or the time is up (the time a fault is held). */
    private static void awaitEventOrTime(RunnerProcess runner, String event, Duration time)
            throws InterruptedException {
        long end = System.nanoTime() + time.toNanos();
        int seen = 0;
        while (System.nanoTime() < end) {
            if (runner.count(event) > 0) return;
            int lines = runner.lineCount();
            runner.awaitLines(Math.max(seen, lines), Duration.ofMillis(200));
            seen = lines;
        }
    }

    private void putRecord(Member through, RecordValue value) throws Exception {
        String body =
                "{\"key\":\"" + b64(RolloutCoordinator.RECORD_KEY) + "\",\"value\":\"" + b64(value.toJson()) + "\"}";
        lab.request("post", through.clientUrl(), "/v3/kv/put", body);
    }

    private void deleteRecord(Member through) throws Exception {
        lab.request(
                "post",
                through.clientUrl(),
                "/v3/kv/deleterange",
                "{\"key\":\"" + b64(RolloutCoordinator.RECORD_KEY) + "\"}");
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static List<String> names(JsonNode waiting) {
        List<String> names = new ArrayList<>();
        waiting.path("members").forEach(n -> names.add(n.asText()));
        return names;
    }

    private static long time(JsonNode event) {
        return Instant.parse(event.path("time").asText()).toEpochMilli();
    }

    private static Release line(String minor) {
        return ClusterLab.line(minor);
    }
}
