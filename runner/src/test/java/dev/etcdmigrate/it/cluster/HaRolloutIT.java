package dev.etcdmigrate.it.cluster;

import static dev.etcdmigrate.it.input.FlagTranslationIT.KUBEADM_133;
import static dev.etcdmigrate.it.input.FlagTranslationIT.KUBEADM_137;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.it.cluster.ClusterLab.Ack;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.cluster.ClusterLab.Sample;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rollouts across several minors on three or five "hosts" (network namespaces, {@link NetworkLab}; peer and client
 * TLS with client-cert auth): each member's runner gets the final target once and walks the minors itself,
 * serving between them and restarting only under the cluster's restart record (docs/ha.md). A writer on one more
 * host writes through every client URL; a sampler there asks every member's /version every 100 ms.
 * Afterwards: every acknowledged write on every member at its revision, the cluster version passed every
 * minor in order, never two members out of service at once (outside the common restart of an all-at-once
 * edit, and outside a killed member's own outage), no restart record left and nothing of the runner's in the
 * keyspace. Run with -Pha (needs root).
 */
class HaRolloutIT {

    private static final Duration DEADLINE = Duration.ofMinutes(6);
    /**
     * A member's time out of service over a 3.4 -> 3.7 rollout in any layout: three legs, each a restart of a few
     * seconds (15-17 s in all on separate hosts, loaded machine); a leg that waits for an answer no one gives
     * (30 s) exceeds it.
     */
    private static final Duration LAYOUT_OUT_OF_SERVICE = Duration.ofSeconds(40);
    /** A layout's rollout waits: about a minute when it works (60 s on the loaded machine), a stall fails sooner. */
    private static final Duration LAYOUT_DEADLINE = Duration.ofMinutes(3);

    private static final ObjectMapper JSON = new ObjectMapper();
    /**
     * .ci/run passes -Dha.all.at.once=false: ThreeNodeCheck runs the same two rollouts there (3.4 -> 3.7 and 3.7 ->
     * 3.5, every member edited at once) under three real kubelets, with the same checks (every acknowledged write on
     * every member, the cluster version's minors in order, never two out after the common restart).
     */
    static final String ALL_AT_ONCE_ELSEWHERE =
            "-Dha.all.at.once=false: ThreeNodeCheck's multi-minor rollouts cover it";

    /** Kills per rollout of the kill test: more kills than this take more rollouts, up and down in turn. */
    private static final int KILLS_PER_ROLLOUT = 4;
    /** The sampler's request timeout: a sample taken up to this long before a kill may already see it. */
    private static final long SAMPLE_TIMEOUT_MILLIS = 800;
    /** How the runner's own JSON lines start (LOG_FORMAT=json), as opposed to its children's output. */
    private static final String OWN_LINE = "\"source\":\"etcd-migrate\"";
    /**
     * How long after a kill another member may still go out by its runner's choice: the runner checked that every
     * member serves (before the kill) and then stops its own, a few requests later.
     */
    private static final long RACE_MILLIS = 2000;

    private ClusterLab lab;
    private final List<String> report = new ArrayList<>();
    private int size;
    private List<Member> members;

    private RunnerProcess[] serving;
    private ClusterLab.Sampler sampler;
    private ClusterLab.Writer writer;
    private final List<Ack> acked = new ArrayList<>();
    private java.util.Set<String> seedRetried = java.util.Set.of();
    /** The network faults applied in this test's rollouts. */
    private final List<NetworkFaults.Applied> appliedFaults = new ArrayList<>();
    /** The deadline of a rollout's waits (a layout's: shorter, so that a stalled one fails sooner). */
    private Duration rolloutDeadline = DEADLINE;
    /** Per member: its sampled time out of service in the last rollout. */
    private long[] lastDownMillis;
    /** The last rollout's time from the first edit to the cluster version at its target. */
    private long lastTotalMillis;
    /** Per host: its runner was started with .etcd-migrate/restart-record present (killed holding the record). */
    private boolean[] heldRecordAtStart;

    /** A pod killed at {@code atMillis}: its member is out by the kill's doing until it serves again. */
    record Kill(int host, long atMillis) {}

    @AfterEach
    void tearDown() throws Exception {
        if (lab != null) {
            for (RunnerProcess r : lab.runners()) {
                // a runner that ended by itself with an error: its diary, for the failure's reader
                if (!r.process().isAlive() && r.exitCode() != 0 && r.exitCode() != 137 && r.exitCode() != 143) {
                    List<String> lines = r.lines().stream()
                            .filter(l -> l.contains("[etcd-migrate]"))
                            .toList();
                    report.add("runner exited " + r.exitCode() + ":\n  "
                            + String.join("\n  ", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
                }
            }
            lab.close(); // clients, runners, then the namespaces with their iptables rules and qdiscs
        }
        report.forEach(System.out::println);
    }

    /**
     * One cluster for three scenarios in turn (a cluster's setup paid once): up 3.4 -> 3.7 one edit at a time, m0 as
     * kubeadm init leaves the first node (once its data exists, --initial-cluster names only m0; the runner takes
     * the three voters from raft's records: 3.4: the snapshot and the WAL; 3.5+: the db); down 3.7 -> 3.5 one edit
     * at a time; then the kill trials.
     *
     * <p>The kill trials: SIGKILL of a member's runner and its etcd (its pod dies; the kubelet starts it again with
     * the same target) at seeded random moments of rollouts edited one member at a time, 3.5 -> 3.7, then 3.7 -> 3.5,
     * in turn on the same cluster: each kill aims at a moment of its victim's walk (holding the restart record, its
     * member stopped before the next minor started, the next minor's etcd under the record, serving between minors)
     * and reports the one it hit. Every rollout converges, every acknowledged write is kept, no two members are out
     * at once but by a kill's own doing, no restart record is left. The seed is printed: -Dha.kill.seed=N replays
     * it; -Dha.kills=N sets the kills per direction (3 by default; -Pha-long: 10).
     */
    @Test
    void upThreeMinorsThenDownTwoOneEditAtATimeThenKilledRunnersConverge(@TempDir Path dir) throws Exception {
        begin(dir, 3, line("3.4"), true);
        round(line("3.4"), line("3.7"), Edits.ONE_AT_A_TIME, 0, null);
        List<JsonNode> taken = lab.runners().stream()
                .flatMap(r -> r.events("members-from-data").stream())
                .toList();
        assertTrue(!taken.isEmpty(), "m0's runner took the members from the data");
        for (JsonNode e : taken) assertEquals(3, e.path("members").asInt(), e.toString());
        report.add("kubeadm's first node: members from the data "
                + taken.stream()
                        .map(e -> e.path("readFrom").asText() + " at "
                                + e.path("index").asLong())
                        .toList());
        lab.kubeadmFirstNode(false); // the later rollouts as before: every member's flags name the three
        round(line("3.7"), line("3.5"), Edits.ONE_AT_A_TIME, 0, null);
        killTrials(line("3.5"), line("3.7"));
        end();
    }

    /** Every manifest edited at once, up 3.4 -> 3.7 and then down 3.7 -> 3.5 on the same cluster. */
    @Test
    @DisabledIfSystemProperty(named = "ha.all.at.once", matches = "false", disabledReason = ALL_AT_ONCE_ELSEWHERE)
    void upThreeMinorsThenDownTwoAllEditedAtOnce(@TempDir Path dir) throws Exception {
        begin(dir, 3, line("3.4"), false);
        round(line("3.4"), line("3.7"), Edits.ALL_AT_ONCE, 0, null);
        round(line("3.7"), line("3.5"), Edits.ALL_AT_ONCE, 0, null);
        end();
    }

    @Test
    void fiveMembersUpTwoMinorsOneEditAtATime(@TempDir Path dir) throws Exception {
        rollout(dir, 5, line("3.5"), line("3.7"), Edits.ONE_AT_A_TIME);
    }

    /**
     * Network faults under the protocol, on one cluster: 3.4 -> 3.7 and 3.7 -> 3.5 edited one member at a time,
     * each with seeded faults ({@link NetworkFaults}: a member's peer traffic cut during a leg and while a record is
     * held, a runner's client traffic to the others cut, a host's link slowed), each kind at least once. The checks
     * of every rollout hold: it converges, every acknowledged write on every member, never two members out of
     * service by a runner's choice (a slowed host that misses the sampler's timeout is not a runner's choice). The
     * seed is printed; -Dha.fault.seed=N replays it.
     */
    @Test
    void networkFaultsUpThreeMinorsThenDownTwo(@TempDir Path dir) throws Exception {
        long seed = Long.getLong("ha.fault.seed", System.currentTimeMillis());
        report.add("network faults: -Dha.fault.seed=" + seed);
        Random random = new Random(seed);
        begin(dir, 3, line("3.4"), false);
        round(line("3.4"), line("3.7"), Edits.FAULTS, 0, random);
        round(line("3.7"), line("3.5"), Edits.FAULTS, 0, random);
        for (NetworkFaults.Kind kind : NetworkFaults.Kind.values()) {
            assertTrue(
                    appliedFaults.stream().anyMatch(f -> f.kind() == kind),
                    kind + " was never applied (its moment never came while the two rollouts ran): " + appliedFaults);
        }
        end();
    }

    /**
     * The layouts operators use besides separate hosts with the same ports (the scenarios above): every member on
     * 127.0.0.1 with client and peer ports of its own, and host names in every URL (each namespace resolves them
     * through its own hosts file). 3.4 -> 3.7 edited one member at a time after it serves: besides the checks of
     * every rollout, each member is out of service about as long as on separate hosts (at most {@link
     * #LAYOUT_OUT_OF_SERVICE}; 15-17 s there) and no restart record is left. With host names, the rollout back
     * 3.7 -> 3.5 then runs with two members edited and the third down (stopped, not edited): the two serve at the
     * first leg's line and wait, naming the missing member, and nothing restarts; once the third is back (edited)
     * the rollout completes.
     */
    @Test
    void oneHostWithItsOwnPortsPerMemberUpThreeMinors(@TempDir Path dir) throws Exception {
        rolloutDeadline = LAYOUT_DEADLINE;
        begin(dir, 3, line("3.4"), false, ClusterLab.Layout.ONE_HOST);
        try {
            round(line("3.4"), line("3.7"), Edits.ONE_AT_A_TIME, 0, null);
        } finally {
            reportReleases();
        }
        assertOutOfServiceAsOnSeparateHosts();
        end();
    }

    /**
     * See {@link #oneHostWithItsOwnPortsPerMemberUpThreeMinors}. Every member's manifest also carries kubeadm 1.37's
     * etcd flags from the start, kept through both rollouts: 3.4 (the members' etcd before the
     * rollout) and 3.5 (served between the first two legs up, and the target down) know neither flag and get both in
     * their own spelling, each rename a flag-translated event; 3.6 and 3.7 take them as given. Without the translation
     * the runners refuse the chain before anything changes (3.5 rejects --feature-gates).
     */
    @Test
    void hostNamesInTheUrlsUpThreeMinorsThenTwoEditedWaitWhileTheThirdIsDown(@TempDir Path dir) throws Exception {
        rolloutDeadline = LAYOUT_DEADLINE;
        begin(dir, 3, line("3.4"), false, ClusterLab.Layout.HOSTNAMES, KUBEADM_137);
        try {
            round(line("3.4"), line("3.7"), Edits.ONE_AT_A_TIME, 0, null);
        } finally {
            reportReleases();
        }
        assertOutOfServiceAsOnSeparateHosts();
        assertKubeadm137FlagsServedAt35();
        round(line("3.7"), line("3.5"), Edits.THIRD_DOWN, 0, null);
        assertKubeadm137FlagsAtTheTarget35();
        end();
    }

    /** Up 3.4 -> 3.7 with kubeadm 1.37's flags: only 3.4 and 3.5 needed renames, and each member served 3.5 with them. */
    private void assertKubeadm137FlagsServedAt35() {
        for (RunnerProcess r : lab.runners()) {
            for (JsonNode e : r.events("flag-translated")) {
                assertTrue(
                        List.of(line("3.4").version(), line("3.5").version())
                                .contains(e.path("version").asText()),
                        "only 3.4 and 3.5 need other spellings: " + e);
            }
            for (JsonNode exec : r.events("exec")) assertExecFlags(exec);
        }
        List<JsonNode> servedAt35 = lab.runners().stream()
                .flatMap(r -> r.events("flag-translated").stream())
                .filter(e -> e.path("runs").asText().equals("serving"))
                .toList();
        assertEquals(
                List.of(
                        "3.5: --feature-gates=InitialCorruptCheck=true -> --experimental-initial-corrupt-check=true",
                        "3.5: --watch-progress-notify-interval=5s -> --experimental-watch-progress-notify-interval=5s"),
                servedAt35.stream().map(HaRolloutIT::rename).distinct().sorted().toList(),
                servedAt35.toString());
        assertEquals(
                size,
                java.util.Arrays.stream(serving)
                        .filter(r -> r.events("member-serving").stream()
                                .anyMatch(e -> e.path("version")
                                        .asText()
                                        .equals(line("3.5").version())))
                        .filter(r -> r.events("flag-translated").stream()
                                .anyMatch(e -> e.path("runs").asText().equals("serving")))
                        .count(),
                "each member's runner served 3.5 with the translated flags");
        report.add("kubeadm 1.37's flags: " + servedAt35.size() + " renames for the members serving 3.5");
    }

    /** Down 3.7 -> 3.5 keeping kubeadm 1.37's flags: 3.6 between the legs takes them, the exec'd 3.5 gets its own. */
    private void assertKubeadm137FlagsAtTheTarget35() {
        int execsAt35 = 0;
        for (RunnerProcess r : serving) {
            for (JsonNode e : r.events("flag-translated")) {
                assertEquals(line("3.5").version(), e.path("version").asText(), e.toString());
                assertEquals("target", e.path("runs").asText(), e.toString());
            }
            for (JsonNode exec : r.events("exec")) {
                assertExecFlags(exec);
                if (exec.path("binary").asText().endsWith("etcd-" + line("3.5").version())) execsAt35++;
            }
        }
        assertEquals(size, execsAt35, "every member exec'd 3.5 with the flags in its spelling");
    }

    /** An exec'd etcd got kubeadm's two flags in its line's spelling: 3.6+ as kubeadm writes them, 3.4-3.5 the others. */
    private static void assertExecFlags(JsonNode exec) {
        List<String> argv = new ArrayList<>();
        exec.path("argv").forEach(a -> argv.add(a.asText()));
        String binary = exec.path("binary").asText();
        String version = binary.substring(binary.lastIndexOf("etcd-") + 5);
        boolean old = version.startsWith("3.4.") || version.startsWith("3.5.");
        for (String flag : old ? KUBEADM_133 : KUBEADM_137)
            assertTrue(argv.contains(flag), binary + " exec'd without " + flag + ": " + argv);
        for (String flag : old ? KUBEADM_137 : KUBEADM_133)
            assertTrue(!argv.contains(flag), binary + " exec'd with " + flag + ": " + argv);
    }

    private static String rename(JsonNode e) {
        String v = e.path("version").asText();
        return v.substring(0, v.lastIndexOf('.')) + ": " + e.path("given").asText() + " -> "
                + e.path("as").asText();
    }

    /**
     * Each member's time out of service in the last rollout against the bound of the layouts, and each record its
     * runner took released by that runner (through any member that answers: its own is stopped meanwhile).
     */
    private void assertOutOfServiceAsOnSeparateHosts() {
        for (RunnerProcess r : serving) {
            String name = lab.memberOf(r).name();
            assertEquals(r.count("restart-record-taken"), releasedItself(r), name + "'s runner released each record");
        }
        for (Member m : members) {
            assertTrue(
                    lastDownMillis[m.host()] <= LAYOUT_OUT_OF_SERVICE.toMillis(),
                    lab.layout() + ": " + m.name() + " out of service " + lastDownMillis[m.host()] + " ms, over "
                            + LAYOUT_OUT_OF_SERVICE + " (separate hosts: 15-17 s in three legs)");
        }
    }

    private long releasedItself(RunnerProcess r) {
        String name = lab.memberOf(r).name();
        return r.events("restart-record-released").stream()
                .filter(e -> e.path("holder").asText().equals(name))
                .count();
    }

    /** What each runner of the last rollout did with its records, and its lines about releasing them. */
    private void reportReleases() {
        for (RunnerProcess r : serving) {
            String name = lab.memberOf(r).name();
            report.add(lab.layout() + ": " + name + "'s runner took " + r.count("restart-record-taken")
                    + " restart record(s), released " + releasedItself(r) + " itself");
            r.lines().stream()
                    .filter(l -> l.contains("[etcd-migrate]") && (l.contains("release") || l.contains("holds")))
                    .limit(12)
                    .forEach(l -> report.add("  " + name + ": " + l));
        }
    }

    /** One rollout's figures: first edit to the cluster version at the target, and each member's time out of service. */
    record Figures(long totalMillis, long[] outMillis) {}

    /**
     * Not a test: {@link RolloutBenchmark} (scripts/bench-rollout.sh) runs it. A 3.4 -> 3.7 rollout on three members
     * on separate hosts edited as {@code edits} says (one chained rollout, or nine one-minor rollouts), on a fresh
     * cluster in {@code dir}, with every check of a rollout; the fixture is closed afterwards.
     */
    Figures benchmark(Path dir, Edits edits) throws Exception {
        try {
            rollout(dir, 3, line("3.4"), line("3.7"), edits);
            return new Figures(lastTotalMillis, lastDownMillis.clone());
        } finally {
            tearDown();
        }
    }

    /** The kill trials on the cluster as it is (serving {@code low}), up and down in turn. */
    private void killTrials(Release low, Release high) throws Exception {
        long killSeed = Long.getLong("ha.kill.seed", System.currentTimeMillis());
        int kills = Integer.getInteger("ha.kills", 3);
        Random random = new Random(killSeed);
        report.add("kills: -Dha.kill.seed=" + killSeed + " -Dha.kills=" + kills + " (per direction)");
        Map<Moment, Integer> hit = new TreeMap<>();
        int[] done = new int[2]; // up, down
        for (boolean up = true; done[0] < kills || done[1] < kills; up = !up) {
            int n = Math.min(KILLS_PER_ROLLOUT, kills - done[up ? 0 : 1]);
            List<Moment> aimed = round(up ? low : high, up ? high : low, Edits.KILLS, n, random);
            aimed.forEach(m -> hit.merge(m, 1, Integer::sum));
            done[up ? 0 : 1] += n;
        }
        report.add("kills by the moment hit: " + hit);
    }

    enum Edits {
        KILLS,
        FAULTS,
        ONE_MINOR_ROLLOUTS,
        ONE_AT_A_TIME,
        ALL_AT_ONCE,
        THIRD_DOWN
    }

    /** Where a runner is in its walk, read from its events (and whether it started holding the record). */
    enum Moment {
        FIRST_LEG("its first leg, no record held"),
        SERVING("serving between minors, waiting for its turn"),
        RECORD_HELD("holding the restart record, its member still serving"),
        MEMBER_STOPPED("holding the record, its member stopped, the next minor not started"),
        NEXT_MINOR("holding the record, the next minor's etcd started"),
        RECORD_RELEASED("record released, about to serve the new minor"),
        AT_TARGET("exec'd at the target");

        final String description;

        Moment(String description) {
            this.description = description;
        }

        /** The moments a kill aims at: each is reached by every runner that still has a restart to take. */
        static final List<Moment> AIMS = List.of(RECORD_HELD, MEMBER_STOPPED, NEXT_MINOR, SERVING);

        static Moment of(List<String> events, boolean heldAtStart) {
            Moment at = start(heldAtStart);
            for (String e : events) at = at.after(e);
            return at;
        }

        /** A runner started holding the record (killed holding it) finishes that restart first. */
        static Moment start(boolean heldAtStart) {
            return heldAtStart ? MEMBER_STOPPED : FIRST_LEG;
        }

        Moment after(String event) {
            return switch (event) {
                case "member-serving" -> SERVING;
                case "restart-record-taken" -> RECORD_HELD;
                case "etcd-stopped" -> this == RECORD_HELD ? MEMBER_STOPPED : this;
                case "etcd-started" -> this == MEMBER_STOPPED ? NEXT_MINOR : this;
                case "restart-record-released" -> RECORD_RELEASED;
                case "exec" -> AT_TARGET;
                default -> this;
            };
        }
    }

    private void rollout(Path dir, int size, Release from, Release to, Edits edits) throws Exception {
        begin(dir, size, from, false);
        round(from, to, edits, 0, null);
        end();
    }

    /**
     * The fixture: {@code size} members serving {@code from} on hosts of their own, seed data, sampler, writer;
     * {@code kubeadmFirstNode}: m0's flags name only m0 once its data exists, as kubeadm init writes the first node's.
     */
    private void begin(Path dir, int size, Release from, boolean kubeadmFirstNode) throws Exception {
        begin(dir, size, from, kubeadmFirstNode, ClusterLab.Layout.SEPARATE_HOSTS);
    }

    private void begin(Path dir, int size, Release from, boolean kubeadmFirstNode, ClusterLab.Layout layout)
            throws Exception {
        begin(dir, size, from, kubeadmFirstNode, layout, List.of());
    }

    /** {@code etcdFlags}: more flags in every member's manifest, from the start. */
    private void begin(
            Path dir,
            int size,
            Release from,
            boolean kubeadmFirstNode,
            ClusterLab.Layout layout,
            List<String> etcdFlags)
            throws Exception {
        this.size = size;
        lab = ClusterLab.create(dir, size, layout, "ha-rollout-it");
        lab.kubeadmFirstNode(kubeadmFirstNode);
        lab.etcdFlags(etcdFlags);
        members = lab.members();
        serving = new RunnerProcess[size];
        heldRecordAtStart = new boolean[size];
        for (Member m : members) serving[m.host()] = lab.start(m, from);
        for (RunnerProcess r : serving) r.awaitEvent("exec", DEADLINE);
        ClusterLab.Writer seed = lab.writer("/registry/seed/", 100, Duration.ofSeconds(120));
        seed.awaitDone();
        acked.addAll(seed.acks());
        seedRetried = seed.failedKeys();

        sampler = lab.sampler();
        sampler.awaitFirst();
        writer = lab.writer("/registry/rollout/", 1_000_000, Duration.ofMinutes(30));
    }

    /**
     * One rollout {@code from} -> {@code to} edited as {@code edits} says ({@code kills} SIGKILLs with KILLS), to
     * every member serving the target, and its checks; returns the moments the kills hit.
     */
    private List<Moment> round(Release from, Release to, Edits edits, int kills, Random random) throws Exception {
        boolean allAtOnce = edits == Edits.ALL_AT_ONCE;
        List<Kill> killed = new ArrayList<>();
        List<Moment> hit = new ArrayList<>();
        List<NetworkFaults.Applied> applied = List.of();
        long started = System.currentTimeMillis();
        int writes = writer.acks().size();
        if (allAtOnce) {
            for (Member m : members) serving[m.host()].process().toHandle().destroy();
            for (Member m : members) serving[m.host()].awaitExit(Duration.ofSeconds(30));
            for (Member m : members) serving[m.host()] = lab.start(m, to);
        } else if (edits == Edits.ONE_MINOR_ROLLOUTS) {
            // the comparison: one rollout per minor, the way an operator does it without the runner's chain of legs
            for (Release hop : between(from, to)) {
                for (Member m : members) {
                    serving[m.host()].process().toHandle().destroy();
                    serving[m.host()].awaitExit(Duration.ofSeconds(30));
                    serving[m.host()] = lab.start(m, hop);
                    serving[m.host()].awaitEvent("exec", DEADLINE);
                    sampler.awaitVersion(m.host(), hop.version(), DEADLINE);
                }
                lab.awaitClusterVersion(hop.minorLine().toString(), DEADLINE);
            }
        } else if (edits == Edits.KILLS) {
            java.util.Arrays.fill(heldRecordAtStart, false);
            editOneAtATime(to);
            String direction = from.version() + " -> " + to.version();
            for (int k = 0; k < kills; k++) {
                Moment aim = Moment.AIMS.get(random.nextInt(Moment.AIMS.size()));
                // a member that can still reach the moment where there is one, else one on its way, else any
                List<Member> pool = members.stream().filter(m -> ahead(m, aim)).toList();
                if (pool.isEmpty())
                    pool = members.stream()
                            .filter(m -> ahead(m, Moment.SERVING))
                            .toList();
                if (pool.isEmpty()) pool = members;
                Member victim = pool.get(random.nextInt(pool.size()));
                RunnerProcess pod = serving[victim.host()];
                boolean heldAtStart = heldRecordAtStart[victim.host()];
                awaitMoment(pod, heldAtStart, aim);
                // a runner ends only by exec (its process becomes etcd) or by a kill: not by itself
                assertTrue(pod.process().isAlive(), victim.name() + "'s runner exited by itself:\n" + pod.output());
                // the moments that last a heartbeat are hit at once; the others at a seeded point inside them
                if (aim == Moment.SERVING || aim == Moment.NEXT_MINOR) Thread.sleep(random.nextInt(500));
                killed.add(new Kill(victim.host(), System.currentTimeMillis()));
                killPod(pod, victim);
                Moment at = Moment.of(eventNames(pod), heldAtStart);
                hit.add(at);
                report.add("kill (" + direction + ") " + victim.name() + ": aimed at " + aim + ", hit " + at + " ("
                        + at.description + ")");
                heldRecordAtStart[victim.host()] =
                        Files.exists(victim.data().resolve(".etcd-migrate").resolve("restart-record"));
                serving[victim.host()] = lab.start(victim, to);
                // one pod killed at a time: the next kill once this one's member serves again
                sampler.awaitServing(victim.host(), DEADLINE);
            }
        } else if (edits == Edits.ONE_AT_A_TIME) {
            editOneAtATime(to);
        } else if (edits == Edits.FAULTS) {
            NetworkFaults faults = new NetworkFaults(lab, random);
            faults.start();
            try {
                editOneAtATime(to);
                for (RunnerProcess r : serving) r.awaitEvent("exec", DEADLINE);
            } finally {
                applied = faults.finish();
            }
            String direction = from.version() + " -> " + to.version();
            report.add("faults (" + direction + "): " + applied.size() + " applied");
            applied.forEach(f -> report.add("  " + f));
            appliedFaults.addAll(applied);
        } else {
            Member third = members.getLast();
            List<Member> edited = members.subList(0, size - 1);
            for (Member m : edited) {
                serving[m.host()].process().toHandle().destroy();
                serving[m.host()].awaitExit(Duration.ofSeconds(30));
                serving[m.host()] = lab.start(m, to);
                sampler.awaitServing(m.host(), DEADLINE);
            }
            serving[third.host()].process().toHandle().destroy(); // down, not edited
            serving[third.host()].awaitExit(Duration.ofSeconds(30));
            // each edited member's first leg took the record while the third still answered: a first leg run at once
            // then would put the members more than one minor apart
            long[] before = new long[size];
            for (Member m : edited) before[m.host()] = serving[m.host()].count("restart-record-taken");
            for (Member m : edited) {
                awaitWaitingFor(serving[m.host()], third.name(), third.name() + " does not answer");
                assertEquals(
                        before[m.host()],
                        serving[m.host()].count("restart-record-taken"),
                        "nothing restarts meanwhile");
            }
            for (Member m : edited) {
                assertEquals(
                        before[m.host()],
                        serving[m.host()].count("restart-record-taken"),
                        "nothing restarted while it was down");
                assertTrue(serving[m.host()].process().isAlive(), m.name() + "'s runner serves and waits");
            }
            report.add("with " + third.name() + " down, "
                    + edited.stream().map(Member::name).toList() + " waited serving, naming it");
            serving[third.host()] = lab.start(third, to);
        }
        for (RunnerProcess r : serving) r.awaitEvent("exec", rolloutDeadline);
        for (Member m : members) sampler.awaitVersion(m.host(), to.version(), rolloutDeadline);
        lab.awaitClusterVersion(to.minorLine().toString(), rolloutDeadline);
        long took = System.currentTimeMillis() - started;
        // from the last sample before the first edit: the line the cluster version started from
        List<Sample> all = sampler.samples();
        int first = 0;
        while (first + 1 < all.size() && all.get(first + 1).atMillis() < started) first++;
        List<Sample> samples = all.subList(first, all.size());

        // the cluster version passed every minor in order
        List<String> passed = new ArrayList<>();
        for (Sample s : samples) {
            if (s.cluster().equals("-")) continue;
            String minor = s.cluster().substring(0, s.cluster().lastIndexOf('.'));
            if (passed.isEmpty() || !passed.getLast().equals(minor)) passed.add(minor);
        }
        List<String> expected = new ArrayList<>();
        int step = from.minorLine().minor() < to.minorLine().minor() ? 1 : -1;
        for (int minor = from.minorLine().minor(); ; minor += step) {
            expected.add("3." + minor);
            if (minor == to.minorLine().minor()) break;
        }
        assertEquals(expected, passed, "the cluster version passed every minor in order");

        // never two out of service at once, outside the common restart of an all-at-once edit, and outside a
        // killed member's outage (from its kill, which took it down without any runner's choice, to its serving)
        long commonRestartEnd = allAtOnce ? firstTimeAllServe(samples, started) : started;
        List<Sample> twoOrMore = samples.stream().filter(s -> s.down() > 1).toList();
        List<NetworkFaults.Applied> slowed = applied;
        List<Sample> twoDown = twoOrMore.stream()
                .filter(s ->
                        s.atMillis() > commonRestartEnd && !byAKill(s, killed, samples) && downByChoice(s, slowed) > 1)
                .toList();
        report.add("samples with two or more members out of service: " + twoOrMore.size()
                + (killed.isEmpty() ? "" : ", " + (twoOrMore.size() - twoDown.size()) + " of them in a kill's outage")
                + (applied.isEmpty()
                        ? ""
                        : ", " + (twoOrMore.size() - twoDown.size()) + " of them with a slowed host not answering"));
        String what = from.version() + " -> " + to.version() + " on " + size + " members, " + lab.layout() + " ("
                + edits.name().toLowerCase().replace('_', ' ') + ")";
        lastDownMillis = new long[size];
        for (Member m : members) {
            lastDownMillis[m.host()] = sampler.downMillis(m.host(), started);
            report.add(String.format(
                    "%s %s: out of service %d ms in all (sampled every 100 ms)",
                    what, m.name(), lastDownMillis[m.host()]));
        }
        lastTotalMillis = took;
        List<Ack> acks = writer.acks();
        report.add(String.format(
                "%s: %d ms from the first edit to the cluster version %s; writer acknowledged %d meanwhile, failed %d",
                what, took, to.minorLine(), acks.size() - writes, writer.failedSince(started)));
        // the figures above first, for a failure's reader too
        if (!twoDown.isEmpty()) {
            // what each runner decided around it, killed runners included: the samples alone do not tell a choice
            // from a slow answer
            report.add("runners' events around the first sample with two out of service:\n"
                    + lab.timeline(
                            twoDown.getFirst().atMillis() - 10_000,
                            twoDown.getLast().atMillis() + 2_000)
                    + "samples meanwhile:\n"
                    + samples.stream()
                            .filter(t -> t.atMillis() >= twoDown.getFirst().atMillis() - 10_000
                                    && t.atMillis() <= twoDown.getLast().atMillis() + 2_000)
                            .map(t -> java.time.Instant.ofEpochMilli(t.atMillis()) + " " + t.versions() + " cluster "
                                    + t.cluster())
                            .collect(java.util.stream.Collectors.joining("\n")));
        }
        assertTrue(
                twoDown.isEmpty(),
                () -> "two members out of service at once: "
                        + twoDown.stream().limit(5).toList() + " (of " + twoDown.size() + "; from "
                        + java.time.Instant.ofEpochMilli(twoDown.getFirst().atMillis()) + ")");
        for (Member m : members) {
            assertEquals(to.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
        }
        // a take for a leg names two lines; a take for one line (the target's) is rule 4's settling: the member's
        // release after its last leg reached no quorum while it was down, so it served the target to lend its vote,
        // and the stop of that served etcd before the exec is one more restart, under a record as every restart
        long minorsPerMember = expected.size() - 1;
        long legTakes = 0;
        long settlingTakes = 0;
        for (RunnerProcess r : serving) {
            long ownLegs = 0;
            long servedSinceLeg = 0; // since this process's last leg take, or its start (a run restarted at the target)
            long settled = 0;
            for (JsonNode e : r.events()) {
                String event = e.path("event").asText();
                if (event.equals("restart-record-taken")) {
                    if (!e.path("from").asText().equals(e.path("to").asText())) {
                        ownLegs++;
                        servedSinceLeg = 0;
                        settled = 0;
                        continue;
                    }
                    settled++;
                    settlingTakes++;
                    assertEquals(to.minorLine().toString(), e.path("to").asText(), "a settling take is at the target");
                    assertTrue(settled <= servedSinceLeg, "a settling take follows the member's serving: " + e);
                } else if (event.equals("member-serving")) {
                    servedSinceLeg++;
                }
            }
            legTakes += ownLegs;
            assertTrue(ownLegs <= minorsPerMember, "at most one take per leg of its own: " + ownLegs);
        }
        report.add(what + ": records taken for legs " + legTakes + ", for rule 4's settling " + settlingTakes);
        if (edits != Edits.KILLS) {
            // every leg's restart takes the record whenever another member answers (else members drift more than one
            // minor apart); a first leg runs at once, without one, only when no member answers (every member edited
            // at once, or its runner's client traffic cut)
            long legs = minorsPerMember * size;
            if (edits == Edits.ONE_AT_A_TIME || edits == Edits.THIRD_DOWN) {
                assertEquals(legs, legTakes, "one record per leg");
            } else {
                long least = edits == Edits.ONE_MINOR_ROLLOUTS ? 0 : legs - size;
                assertTrue(
                        legTakes >= least && legTakes <= legs,
                        "records taken for legs: " + legTakes + ", not in " + least + ".." + legs);
            }
        }
        return hit;
    }

    /** Writer and sampler stopped: every acknowledged write on every member at its revision; nothing else. */
    private void end() throws Exception {
        writer.stop();
        sampler.stop();
        acked.addAll(writer.acks());
        report.add("writer: acknowledged " + writer.acks().size() + ", failed " + writer.failed());
        // no record, no probe: nothing but the acknowledged writes; the one write in flight when the writer stopped
        // may have committed unacknowledged: its key is the next the writer would have written
        String inFlight = "/registry/rollout/" + writer.acks().size();
        java.util.Set<String> retried = new java.util.HashSet<>(writer.failedKeys());
        retried.addAll(seedRetried);
        lab.assertEveryAckOnEveryMember(acked, retried, inFlight::equals);
        report.add("every member holds the " + acked.size() + " acknowledged writes at their revisions");
    }

    /** The operator's way: each member's pod restarted with the new target once the one before serves. */
    private void editOneAtATime(Release to) throws Exception {
        for (Member m : members) {
            serving[m.host()].process().toHandle().destroy(); // the kubelet stops the old pod
            serving[m.host()].awaitExit(Duration.ofSeconds(30));
            serving[m.host()] = lab.start(m, to);
            sampler.awaitServing(m.host(), rolloutDeadline); // the operator edits the next member once this one serves
        }
    }

    /**
     * Whether the member's runner can still reach the moment: the record moments need a restart under the record
     * ahead (it serves and waits, or it walks its first leg of several); serving needs it on its way.
     */
    private boolean ahead(Member m, Moment aim) {
        RunnerProcess pod = serving[m.host()];
        boolean held = heldRecordAtStart[m.host()];
        Moment at = Moment.of(eventNames(pod), held);
        int legs = pod.events("rollout-chain-planned").stream()
                .mapToInt(e -> e.path("legs").asInt())
                .findFirst()
                .orElse(1);
        // each serving between legs is followed by a restart under the record
        boolean servingAhead = pod.count("member-serving") < legs - 1 && at != Moment.AT_TARGET;
        boolean recordAhead = servingAhead || at == Moment.SERVING;
        return switch (aim) {
            case SERVING, RECORD_HELD -> recordAhead;
            case MEMBER_STOPPED -> recordAhead || at == Moment.RECORD_HELD || (held && at == Moment.MEMBER_STOPPED);
            case NEXT_MINOR -> recordAhead || at == Moment.RECORD_HELD || at == Moment.MEMBER_STOPPED;
            default -> false;
        };
    }

    /**
     * Whether the sample's members out of service are out by kills: at least one was killed and has not served
     * again yet (a sample begun up to the sampler's timeout before the kill may already see it), and every other
     * one is such a victim too or went out no later than {@link #RACE_MILLIS} after the latest of those kills (its
     * runner saw every member serve just before the kill). A member that went out later, while a killed one was
     * still out, went out by its runner's choice: that fails the test.
     */
    private static boolean byAKill(Sample s, List<Kill> killed, List<Sample> samples) {
        List<Kill> outages = killed.stream()
                .filter(k -> s.versions().get(k.host()).equals("-")
                        && s.atMillis() >= k.atMillis() - SAMPLE_TIMEOUT_MILLIS
                        && s.atMillis() < servesAgain(k, samples))
                .toList();
        if (outages.isEmpty()) return false;
        long lastKill = outages.stream().mapToLong(Kill::atMillis).max().orElseThrow();
        for (int h = 0; h < s.versions().size(); h++) {
            int host = h;
            if (!s.versions().get(h).equals("-") || outages.stream().anyMatch(k -> k.host() == host)) continue;
            long wentOut = samples.stream()
                    .filter(t -> t.atMillis() < s.atMillis()
                            && !t.versions().get(host).equals("-"))
                    .mapToLong(Sample::atMillis)
                    .max()
                    .orElse(Long.MIN_VALUE);
            if (wentOut > lastKill + RACE_MILLIS) return false;
        }
        return true;
    }

    /**
     * The members out of service in the sample, but for one whose link was slowed at the time (its /version answer
     * may miss the sampler's 800 ms; its runner chose nothing), from the slowing to {@link #RACE_MILLIS} after.
     */
    private static long downByChoice(Sample s, List<NetworkFaults.Applied> faults) {
        long down = 0;
        for (int h = 0; h < s.versions().size(); h++) {
            int host = h;
            boolean slowed = faults.stream()
                    .anyMatch(f -> f.kind() == NetworkFaults.Kind.SLOW_LINK
                            && f.member().host() == host
                            && s.atMillis() >= f.fromMillis() - SAMPLE_TIMEOUT_MILLIS
                            && s.atMillis() <= f.toMillis() + RACE_MILLIS);
            if (s.versions().get(h).equals("-") && !slowed) down++;
        }
        return down;
    }

    private static long servesAgain(Kill k, List<Sample> samples) {
        return samples.stream()
                .filter(t -> t.atMillis() > k.atMillis()
                        && !t.versions().get(k.host()).equals("-"))
                .mapToLong(Sample::atMillis)
                .findFirst()
                .orElse(Long.MAX_VALUE);
    }

    /** Until the runner is at the moment (or has exec'd, or a minute passed: the kill then hits what it hits). */
    private static void awaitMoment(RunnerProcess pod, boolean heldAtStart, Moment aim) throws InterruptedException {
        long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        int seen = 0;
        Moment at = Moment.start(heldAtStart);
        // line by line as they come (a moment may last only the runner's copy of its member dir): only the
        // runner's own lines are parsed, not its etcd's
        while (System.nanoTime() < end) {
            List<String> fresh = pod.linesFrom(seen);
            seen += fresh.size();
            for (String line : fresh) {
                if (!line.contains(OWN_LINE)) continue;
                try {
                    at = at.after(JSON.readTree(line).path("event").asText());
                } catch (java.io.IOException notJson) {
                    continue;
                }
                if (at == aim || at == Moment.AT_TARGET) return;
            }
            if (!pod.process().isAlive()) return;
            pod.rememberDescendants(); // its etcd and tools, killed with it
            pod.awaitLines(seen, Duration.ofMillis(50)); // a new line, or the poll interval of a bounded wait
        }
    }

    private static List<String> eventNames(RunnerProcess pod) {
        return pod.events().stream()
                .map(e -> e.path("event").asText())
                .filter(e -> !e.equals("child-output"))
                .toList();
    }

    /**
     * SIGKILL to the runner first (it reports nothing after it), then to its etcd and anything else on its data
     * dir (a child started while the runner was being killed); returns when none is left and its output is read.
     */
    private static void killPod(RunnerProcess pod, Member m) throws Exception {
        pod.process().destroyForcibly(); // at once: the moment is its last event
        pod.killHard(); // its etcd and tools, as remembered while it lived
        pod.awaitExit(Duration.ofSeconds(30));
        ProcessHandle.allProcesses()
                .filter(p -> p.info()
                        .arguments()
                        .map(a -> String.join(" ", a).contains(m.data().toString()))
                        .orElse(false))
                .forEach(ProcessHandle::destroyForcibly);
        awaitGone(m);
    }

    /** Until no process of the killed pod holds the member's data dir (the kernel reaped its etcd too). */
    private static void awaitGone(Member m) throws Exception {
        Poll.untilTrue(
                DEADLINE,
                Duration.ofMillis(100),
                "every process of " + m.name() + " gone after its kill",
                () -> ProcessHandle.allProcesses()
                        .noneMatch(p -> p.info()
                                .arguments()
                                .map(a -> String.join(" ", a).contains(m.data().toString()))
                                .orElse(false)));
    }

    /** Polls the runner's output until a rollout-waiting event names the member. */
    private static void awaitWaitingFor(RunnerProcess runner, String member, String why) throws InterruptedException {
        Poll.untilTrue(DEADLINE, Duration.ofMillis(200), "a rollout-waiting naming " + member, () -> {
            for (JsonNode e : runner.events("rollout-waiting")) {
                if (!e.path("why").asText().contains(why)) continue;
                for (JsonNode m : e.path("members")) if (m.asText().equals(member)) return true;
            }
            return false;
        });
    }

    private static long firstTimeAllServe(List<Sample> samples, long after) {
        boolean sawDown = false;
        for (Sample s : samples) {
            if (s.atMillis() < after) continue;
            if (s.down() > 0) sawDown = true;
            if (sawDown && s.down() == 0) return s.atMillis();
        }
        return Long.MAX_VALUE;
    }

    /** The bundled release of each line after {@code from}'s up to {@code to}'s, in order. */
    private static List<Release> between(Release from, Release to) {
        List<Release> hops = new ArrayList<>();
        int step = from.minorLine().minor() < to.minorLine().minor() ? 1 : -1;
        for (int minor = from.minorLine().minor() + step; ; minor += step) {
            hops.add(line("3." + minor));
            if (minor == to.minorLine().minor()) return hops;
        }
    }

    private static Release line(String minor) {
        return ClusterLab.line(minor);
    }
}
