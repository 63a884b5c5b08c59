package dev.etcdmigrate.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
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

    private NetworkLab lab;
    private TestCertificates certificates;
    private TestCertificates.Pem writerPem;
    private final List<RunnerProcess> runners = new ArrayList<>();
    private final List<Process> clients = new ArrayList<>();
    private final List<String> report = new ArrayList<>();
    private int size;
    private List<Member> members;
    private String initialCluster;
    /** m0's flags name only m0 once its data exists, as kubeadm init writes the first node's. */
    private boolean kubeadmFirstNode;
    /** More etcd flags after --, e.g. the ones kubeadm writes ({@link #KUBEADM_137}). */
    private List<String> etcdFlags = List.of();

    /** kubeadm 1.34+'s etcd flags for etcd 3.6+ (v1.37.2 writes them for every etcd): 3.4 and 3.5 reject both. */
    static final List<String> KUBEADM_137 =
            List.of("--feature-gates=InitialCorruptCheck=true", "--watch-progress-notify-interval=5s");
    /** The same two in 3.4's and 3.5's spelling. */
    static final List<String> KUBEADM_133 =
            List.of("--experimental-initial-corrupt-check=true", "--experimental-watch-progress-notify-interval=5s");

    private String endpoints;
    private RunnerProcess[] serving;
    private SamplerRun sampler;
    private WriterRun writer;
    private final List<Ack> acked = new ArrayList<>();
    /** Per host: its runner was started with .etcd-migrate/restart-record present (killed holding the record). */
    private boolean[] heldRecordAtStart;

    record Member(int host, String name, Path data, TestCertificates.Pem pem, String address) {
        String peerUrl() {
            return "https://" + address + ":2380";
        }

        String clientUrl() {
            return "https://" + address + ":2379";
        }
    }

    record Ack(int endpoint, String key, long revision, long atMillis) {}

    /** One sample: when, each member's etcd version ("-": out of service), the cluster version. */
    record Sample(long atMillis, List<String> versions, String cluster) {
        long down() {
            return versions.stream().filter(v -> v.equals("-")).count();
        }
    }

    /** A pod killed at {@code atMillis}: its member is out by the kill's doing until it serves again. */
    record Kill(int host, long atMillis) {}

    @AfterEach
    void tearDown() throws Exception {
        for (Process p : clients) p.destroyForcibly().waitFor();
        for (RunnerProcess r : runners) {
            // a runner that ended by itself with an error: its diary, for the failure's reader
            if (!r.process().isAlive() && r.exitCode() != 0 && r.exitCode() != 137 && r.exitCode() != 143) {
                List<String> lines = r.lines().stream()
                        .filter(l -> l.contains("[etcd-migrate]"))
                        .toList();
                report.add("runner exited " + r.exitCode() + ":\n  "
                        + String.join("\n  ", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
            }
            r.close();
        }
        if (lab != null) lab.close();
        report.forEach(System.out::println);
    }

    @Test
    void threeMembersUpThreeMinorsOneEditAtATime(@TempDir Path dir) throws Exception {
        // m0 as kubeadm init leaves the first node: once its data exists, --initial-cluster names only m0; the
        // runner takes the three voters from raft's records (3.4: the snapshot and the WAL; 3.5+: the db)
        kubeadmFirstNode = true;
        rollout(dir, 3, line("3.4"), line("3.7"), Edits.ONE_AT_A_TIME);
        List<JsonNode> taken = runners.stream()
                .flatMap(r -> r.events("members-from-data").stream())
                .toList();
        assertTrue(!taken.isEmpty(), "m0's runner took the members from the data");
        for (JsonNode e : taken) assertEquals(3, e.path("members").asInt(), e.toString());
        report.add("kubeadm's first node: members from the data "
                + taken.stream()
                        .map(e -> e.path("readFrom").asText() + " at "
                                + e.path("index").asLong())
                        .toList());
    }

    /**
     * Issue 40, point 6: kubeadm 1.37's etcd flags on every member from the start (3.4) to the target (3.7). 3.4 (the
     * members' etcd before the rollout) and 3.5 (which each member serves between legs) know neither flag: each gets
     * both in its own spelling, each rename a flag-translated event; 3.6 and 3.7 take them as given. Without the
     * translation the runners refuse the chain before anything changes (3.5 rejects --feature-gates).
     */
    @Test
    void threeMembersUpThreeMinorsWithKubeadm137Flags(@TempDir Path dir) throws Exception {
        etcdFlags = KUBEADM_137;
        rollout(dir, 3, line("3.4"), line("3.7"), Edits.ONE_AT_A_TIME);
        for (RunnerProcess r : runners) {
            for (JsonNode e : r.events("flag-translated")) {
                assertTrue(
                        List.of(line("3.4").version(), line("3.5").version())
                                .contains(e.path("version").asText()),
                        "only 3.4 and 3.5 need other spellings: " + e);
            }
            for (JsonNode exec : r.events("exec")) assertExecFlags(exec);
        }
        // every member served 3.5 between its first and second leg, with both flags in 3.5's spelling
        List<JsonNode> serving = runners.stream()
                .flatMap(r -> r.events("flag-translated").stream())
                .filter(e -> e.path("runs").asText().equals("serving"))
                .toList();
        assertEquals(
                List.of(
                        "3.5: --feature-gates=InitialCorruptCheck=true -> --experimental-initial-corrupt-check=true",
                        "3.5: --watch-progress-notify-interval=5s -> --experimental-watch-progress-notify-interval=5s"),
                serving.stream().map(HaRolloutIT::rename).distinct().sorted().toList(),
                serving.toString());
        assertEquals(
                size,
                runners.stream()
                        .filter(r -> r.events("member-serving").stream()
                                .anyMatch(e -> e.path("version")
                                        .asText()
                                        .equals(line("3.5").version())))
                        .filter(r -> r.events("flag-translated").stream()
                                .anyMatch(e -> e.path("runs").asText().equals("serving")))
                        .count(),
                "each member's runner served 3.5 with the translated flags");
        report.add("kubeadm 1.37's flags: " + serving.size() + " renames for the members serving 3.5");
    }

    /**
     * Issue 40, point 6: a rollback 3.7 -> 3.5 where the operator changed only the target and kept kubeadm 1.37's
     * flags: 3.6 (served between the two downgrade legs) takes them as given, 3.5 (the target, exec'd) gets them in its
     * own spelling.
     */
    @Test
    void threeMembersDownTwoMinorsKeepingKubeadm137Flags(@TempDir Path dir) throws Exception {
        etcdFlags = KUBEADM_137;
        rollout(dir, 3, line("3.7"), line("3.5"), Edits.ONE_AT_A_TIME);
        int execsAt35 = 0;
        for (RunnerProcess r : runners) {
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

    @Test
    @DisabledIfSystemProperty(named = "ha.all.at.once", matches = "false", disabledReason = ALL_AT_ONCE_ELSEWHERE)
    void threeMembersUpThreeMinorsAllEditedAtOnce(@TempDir Path dir) throws Exception {
        rollout(dir, 3, line("3.4"), line("3.7"), Edits.ALL_AT_ONCE);
    }

    @Test
    void threeMembersDownTwoMinorsOneEditAtATime(@TempDir Path dir) throws Exception {
        rollout(dir, 3, line("3.7"), line("3.5"), Edits.ONE_AT_A_TIME);
    }

    @Test
    @DisabledIfSystemProperty(named = "ha.all.at.once", matches = "false", disabledReason = ALL_AT_ONCE_ELSEWHERE)
    void threeMembersDownTwoMinorsAllEditedAtOnce(@TempDir Path dir) throws Exception {
        rollout(dir, 3, line("3.7"), line("3.5"), Edits.ALL_AT_ONCE);
    }

    @Test
    void fiveMembersUpTwoMinorsOneEditAtATime(@TempDir Path dir) throws Exception {
        rollout(dir, 5, line("3.5"), line("3.7"), Edits.ONE_AT_A_TIME);
    }

    /**
     * Two members edited, the third down (stopped, not edited): the two serve at the first leg's line and wait,
     * naming the missing member, and nothing restarts; once the third is back (edited) the rollout completes.
     */
    @Test
    void twoEditedWaitServingWhileTheThirdIsDownThenItCompletes(@TempDir Path dir) throws Exception {
        rollout(dir, 3, line("3.4"), line("3.7"), Edits.THIRD_DOWN);
    }

    /** The benchmark's comparison (docs/benchmarks.md): nine one-minor rollouts; -Dha.bench=true runs it. */
    @Test
    void nineOneMinorRolloutsForTheBenchmark(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.getBoolean("ha.bench"), "-Dha.bench=true runs it");
        rollout(dir, 3, line("3.4"), line("3.7"), Edits.ONE_MINOR_ROLLOUTS);
    }

    /**
     * SIGKILL of a member's runner and its etcd (its pod dies; the kubelet starts it again with the same target)
     * at seeded random moments of rollouts edited one member at a time, 3.5 -> 3.7, then 3.7 -> 3.5, in turn on
     * the same cluster: each kill aims at a moment of its victim's walk (holding the restart record, its member
     * stopped before the next minor started, the next minor's etcd under the record, serving between minors) and
     * reports the one it hit. Every rollout converges, every acknowledged write is kept, no two members are out
     * at once but by a kill's own doing, no restart record is left. The seed is printed: -Dha.kill.seed=N
     * replays it; -Dha.kills=N sets the kills per direction (3 by default; -Pha-long: 10).
     */
    @Test
    void killedRunnersAndTheirEtcdsConverge(@TempDir Path dir) throws Exception {
        long killSeed = Long.getLong("ha.kill.seed", System.currentTimeMillis());
        int kills = Integer.getInteger("ha.kills", 3);
        Random random = new Random(killSeed);
        report.add("kills: -Dha.kill.seed=" + killSeed + " -Dha.kills=" + kills + " (per direction)");
        Release low = line("3.5");
        Release high = line("3.7");
        begin(dir, 3, low);
        Map<Moment, Integer> hit = new TreeMap<>();
        int[] done = new int[2]; // up, down
        for (boolean up = true; done[0] < kills || done[1] < kills; up = !up) {
            int n = Math.min(KILLS_PER_ROLLOUT, kills - done[up ? 0 : 1]);
            List<Moment> aimed = round(up ? low : high, up ? high : low, Edits.KILLS, n, random);
            aimed.forEach(m -> hit.merge(m, 1, Integer::sum));
            done[up ? 0 : 1] += n;
        }
        end();
        report.add("kills by the moment hit: " + hit);
    }

    enum Edits {
        KILLS,
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
        begin(dir, size, from);
        round(from, to, edits, 0, null);
        end();
    }

    /** The fixture: {@code size} members serving {@code from} on hosts of their own, seed data, sampler, writer. */
    private void begin(Path dir, int size, Release from) throws Exception {
        assertEquals(
                "0",
                new String(new ProcessBuilder("id", "-u")
                                .start()
                                .getInputStream()
                                .readAllBytes())
                        .trim(),
                "network namespaces need root (CI runs as root)");
        this.size = size;
        lab = new NetworkLab(size + 1); // the last host is the writer's
        certificates = TestCertificates.newCa(Files.createDirectory(dir.resolve("pki")));
        members = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            members.add(new Member(
                    i, "m" + i, dir.resolve("m" + i), certificates.issue("m" + i, lab.address(i)), lab.address(i)));
        }
        writerPem = certificates.issue("writer", lab.address(size));
        initialCluster = members.stream().map(m -> m.name() + "=" + m.peerUrl()).collect(Collectors.joining(","));
        endpoints = members.stream().map(Member::clientUrl).collect(Collectors.joining(","));

        serving = new RunnerProcess[size];
        heldRecordAtStart = new boolean[size];
        for (Member m : members) serving[m.host()] = startRunner(m, from);
        for (RunnerProcess r : serving) r.awaitEvent("exec", DEADLINE);
        WriterRun seed = writer("/registry/seed/", 100, Duration.ofSeconds(120));
        seed.awaitDone();
        acked.addAll(seed.acks());

        sampler = sampler();
        sampler.awaitFirst();
        writer = writer("/registry/rollout/", 1_000_000, Duration.ofMinutes(30));
    }

    /**
     * One rollout {@code from} -> {@code to} edited as {@code edits} says ({@code kills} SIGKILLs with KILLS), to
     * every member serving the target, and its checks; returns the moments the kills hit.
     */
    private List<Moment> round(Release from, Release to, Edits edits, int kills, Random random) throws Exception {
        boolean allAtOnce = edits == Edits.ALL_AT_ONCE;
        List<Kill> killed = new ArrayList<>();
        List<Moment> hit = new ArrayList<>();
        long started = System.currentTimeMillis();
        int writes = writer.acks().size();
        if (allAtOnce) {
            for (Member m : members) serving[m.host()].process().toHandle().destroy();
            for (Member m : members) serving[m.host()].awaitExit(Duration.ofSeconds(30));
            for (Member m : members) serving[m.host()] = startRunner(m, to);
        } else if (edits == Edits.ONE_MINOR_ROLLOUTS) {
            // the comparison: one rollout per minor, the way an operator does it without this issue
            for (Release hop : between(from, to)) {
                for (Member m : members) {
                    serving[m.host()].process().toHandle().destroy();
                    serving[m.host()].awaitExit(Duration.ofSeconds(30));
                    serving[m.host()] = startRunner(m, hop);
                    serving[m.host()].awaitEvent("exec", DEADLINE);
                    sampler.awaitVersion(m.host(), hop.version(), DEADLINE);
                }
                awaitClusterVersion(hop.minorLine().toString());
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
                serving[victim.host()] = startRunner(victim, to);
                // one pod killed at a time: the next kill once this one's member serves again
                sampler.awaitServing(victim.host(), DEADLINE);
            }
        } else if (edits == Edits.ONE_AT_A_TIME) {
            editOneAtATime(to);
        } else {
            Member third = members.getLast();
            List<Member> edited = members.subList(0, size - 1);
            for (Member m : edited) {
                serving[m.host()].process().toHandle().destroy();
                serving[m.host()].awaitExit(Duration.ofSeconds(30));
                serving[m.host()] = startRunner(m, to);
                sampler.awaitServing(m.host(), DEADLINE);
            }
            serving[third.host()].process().toHandle().destroy(); // down, not edited
            serving[third.host()].awaitExit(Duration.ofSeconds(30));
            for (Member m : edited) {
                awaitWaitingFor(serving[m.host()], third.name(), third.name() + " does not answer");
                assertEquals(0, serving[m.host()].count("restart-record-taken"), "nothing restarts meanwhile");
            }
            for (Member m : edited) {
                assertEquals(0, serving[m.host()].count("restart-record-taken"), "nothing restarted while it was down");
                assertTrue(serving[m.host()].process().isAlive(), m.name() + "'s runner serves and waits");
            }
            report.add("with " + third.name() + " down, "
                    + edited.stream().map(Member::name).toList() + " waited serving, naming it");
            serving[third.host()] = startRunner(third, to);
        }
        for (RunnerProcess r : serving) r.awaitEvent("exec", DEADLINE);
        for (Member m : members) sampler.awaitVersion(m.host(), to.version(), DEADLINE);
        awaitClusterVersion(to.minorLine().toString());
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
        List<Sample> twoDown = twoOrMore.stream()
                .filter(s -> s.atMillis() > commonRestartEnd && !byAKill(s, killed, samples))
                .toList();
        report.add("samples with two or more members out of service: " + twoOrMore.size()
                + (killed.isEmpty() ? "" : ", " + (twoOrMore.size() - twoDown.size()) + " of them in a kill's outage"));
        assertTrue(
                twoDown.isEmpty(),
                "two members out of service at once: "
                        + twoDown.stream().limit(5).toList());
        String what = from.version() + " -> " + to.version() + " on " + size + " members ("
                + edits.name().toLowerCase().replace('_', ' ') + ")";
        for (Member m : members) {
            report.add(String.format(
                    "%s %s: out of service %d ms in all (sampled every 100 ms)",
                    what, m.name(), sampler.downMillis(m.host(), started)));
        }
        List<Ack> acks = writer.acks();
        report.add(String.format(
                "%s: %d ms from the first edit to the cluster version %s; writer acknowledged %d meanwhile",
                what, took, to.minorLine(), acks.size() - writes));
        for (Member m : members) {
            assertEquals(to.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
        }
        for (RunnerProcess r : serving) {
            assertTrue(r.count("restart-record-taken") <= size, r.output());
        }
        long taken = List.of(serving).stream()
                .mapToLong(r -> r.count("restart-record-taken"))
                .sum();
        if (edits != Edits.KILLS) {
            assertEquals(
                    edits == Edits.ONE_MINOR_ROLLOUTS ? 0 : (long) (expected.size() - 2) * size,
                    taken,
                    "one record per chosen restart");
        }
        return hit;
    }

    /** Writer and sampler stopped: every acknowledged write on every member at its revision; nothing else. */
    private void end() throws Exception {
        writer.stop();
        sampler.stop();
        acked.addAll(writer.acks());
        report.add("writer: acknowledged " + writer.acks().size() + ", failed " + writer.failed);
        // no record, no probe: nothing but the acknowledged writes
        Map<String, JsonNode> reference = null;
        for (Member m : members) {
            Map<String, JsonNode> keys = keysOn(m);
            for (Ack a : acked) {
                JsonNode kv = keys.get(a.key());
                assertTrue(kv != null, "acknowledged write " + a.key() + " on " + m.name());
                assertEquals(a.revision(), kv.path("mod_revision").asLong(), a.key() + " on " + m.name());
            }
            // the one write in flight when the writer stopped may have committed unacknowledged: its key is the
            // next the writer would have written; any other key (a restart record, a probe) fails
            java.util.Set<String> other = new java.util.TreeSet<>(keys.keySet());
            acked.forEach(a -> other.remove(a.key()));
            other.remove("/registry/rollout/" + writer.acks().size());
            assertEquals(java.util.Set.of(), other, "no other key on " + m.name() + " (no restart record left)");
            if (reference != null) assertEquals(reference, keys, "members agree");
            reference = keys;
        }
        report.add("every member holds the " + acked.size() + " acknowledged writes at their revisions");
    }

    /** The operator's way: each member's pod restarted with the new target once the one before serves. */
    private void editOneAtATime(Release to) throws Exception {
        for (Member m : members) {
            serving[m.host()].process().toHandle().destroy(); // the kubelet stops the old pod
            serving[m.host()].awaitExit(Duration.ofSeconds(30));
            serving[m.host()] = startRunner(m, to);
            sampler.awaitServing(m.host(), DEADLINE); // the operator edits the next member once this one serves
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
        long end = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < end) {
            boolean held = ProcessHandle.allProcesses()
                    .anyMatch(p -> p.info()
                            .arguments()
                            .map(a -> String.join(" ", a).contains(m.data().toString()))
                            .orElse(false));
            if (!held) return;
            Thread.sleep(100); // poll interval of a deadline-bound wait
        }
        throw new AssertionError("a process of " + m.name() + " outlived its kill");
    }

    /** Polls the runner's output until a rollout-waiting event names the member. */
    private static void awaitWaitingFor(RunnerProcess runner, String member, String why) throws InterruptedException {
        long end = System.nanoTime() + DEADLINE.toNanos();
        while (System.nanoTime() < end) {
            for (JsonNode e : runner.events("rollout-waiting")) {
                if (!e.path("why").asText().contains(why)) continue;
                for (JsonNode m : e.path("members")) if (m.asText().equals(member)) return;
            }
            Thread.sleep(200); // poll interval of a deadline-bound wait
        }
        throw new AssertionError("no rollout-waiting naming " + member + ": " + runner.output());
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
        return EtcdFixture.V3_RELEASES.stream()
                .filter(r -> r.minorLine().toString().equals(minor))
                .reduce((a, b) -> b)
                .orElseThrow();
    }

    private RunnerProcess startRunner(Member m, Release version) throws Exception {
        String initialCluster =
                kubeadmFirstNode && m.host() == 0 && Files.isDirectory(m.data().resolve("member"))
                        ? m.name() + "=" + m.peerUrl()
                        : this.initialCluster;
        String peerTls = "--peer-cert-file=" + m.pem().cert() + " --peer-key-file="
                + m.pem().key() + " --peer-trusted-ca-file=" + certificates.caFile() + " --peer-client-cert-auth";
        List<String> args = new ArrayList<>(List.of(
                "migrate",
                "--data-dir",
                m.data().toString(),
                "--bin-dir",
                EtcdFixture.binDir().toString(),
                "--target-version",
                version.version(),
                "--target-storage",
                "etcd3",
                "--name",
                m.name(),
                "--initial-cluster",
                initialCluster,
                "--listen-peer-urls",
                m.peerUrl(),
                "--port",
                "2381",
                "--",
                "--name",
                m.name(),
                "--initial-cluster",
                initialCluster,
                "--initial-cluster-state",
                "new",
                "--initial-cluster-token",
                "ha-rollout-it",
                "--initial-advertise-peer-urls",
                m.peerUrl(),
                "--listen-peer-urls",
                m.peerUrl(),
                "--listen-client-urls",
                m.clientUrl(),
                "--advertise-client-urls",
                m.clientUrl(),
                "--cert-file=" + m.pem().cert(),
                "--key-file=" + m.pem().key(),
                "--trusted-ca-file=" + certificates.caFile(),
                "--client-cert-auth"));
        args.addAll(List.of(peerTls.split(" ")));
        args.addAll(etcdFlags);
        RunnerProcess runner = RunnerProcess.startUnder(lab.exec(m.host()), args, Map.of("ETCD_CREDS", peerTls));
        runners.add(runner);
        return runner;
    }

    private List<String> client(String... args) {
        List<String> command = new ArrayList<>(lab.exec(size));
        command.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                classpath(),
                HaClient.class.getName(),
                args[0],
                certificates.caFile().toString(),
                writerPem.cert().toString(),
                writerPem.key().toString()));
        command.addAll(List.of(args).subList(1, args.length));
        return command;
    }

    private static String classpath() {
        try {
            return Path.of(HaClient.class
                            .getProtectionDomain()
                            .getCodeSource()
                            .getLocation()
                            .toURI())
                    .toString();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private String request(String... args) throws Exception {
        Process p = new ProcessBuilder(client(args)).redirectErrorStream(true).start();
        clients.add(p);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(2, TimeUnit.MINUTES), "client finished");
        if (p.exitValue() != 0) throw new IllegalStateException("client failed: " + out);
        return out;
    }

    private void awaitClusterVersion(String line) throws Exception {
        long end = System.nanoTime() + DEADLINE.toNanos();
        String last = "";
        while (System.nanoTime() < end) {
            try {
                last = request("get", members.getFirst().clientUrl(), "/version");
                if (JSON.readTree(last).path("etcdcluster").asText().startsWith(line + ".")) return;
            } catch (IllegalStateException e) {
                last = e.getMessage();
            }
            Thread.sleep(200); // poll interval of a deadline-bound wait
        }
        throw new AssertionError("cluster version never reached " + line + ": " + last);
    }

    private Map<String, JsonNode> keysOn(Member m) throws Exception {
        JsonNode range = JSON.readTree(request(
                "post",
                m.clientUrl(),
                "/v3/kv/range",
                "{\"key\":\"AA==\",\"range_end\":\"AA==\",\"serializable\":true}"));
        Map<String, JsonNode> keys = new TreeMap<>();
        for (JsonNode kv : range.path("kvs")) {
            keys.put(new String(Base64.getDecoder().decode(kv.path("key").asText()), StandardCharsets.UTF_8), kv);
        }
        return keys;
    }

    private WriterRun writer(String prefix, long count, Duration time) throws Exception {
        Process p = new ProcessBuilder(
                        client("write", endpoints, prefix, String.valueOf(count), String.valueOf(time.toSeconds())))
                .redirectErrorStream(true)
                .start();
        clients.add(p);
        return new WriterRun(p);
    }

    private SamplerRun sampler() throws Exception {
        Process p = new ProcessBuilder(client("sample", endpoints))
                .redirectErrorStream(true)
                .start();
        clients.add(p);
        return new SamplerRun(p, size);
    }

    /** The sampler process on the writer's host and its samples. */
    private static final class SamplerRun {
        private final Process process;
        private final List<Sample> samples = new ArrayList<>();
        private final List<String> other = new ArrayList<>();
        private final Thread reader;

        SamplerRun(Process process, int size) {
            this.process = process;
            this.reader = Thread.ofVirtual().start(() -> {
                try (BufferedReader in =
                        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = in.readLine()) != null; ) {
                        String[] f = line.split(" ");
                        synchronized (samples) {
                            if (f[0].equals("S") && f.length == size + 3) {
                                samples.add(new Sample(
                                        Long.parseLong(f[1]), List.of(f).subList(2, 2 + size), f[2 + size]));
                            } else {
                                other.add(line);
                            }
                            samples.notifyAll();
                        }
                    }
                } catch (Exception e) {
                    // killed: what it printed stands
                }
            });
        }

        List<Sample> samples() {
            synchronized (samples) {
                return List.copyOf(samples);
            }
        }

        void awaitFirst() throws InterruptedException {
            await(s -> s.down() == 0, Duration.ofMinutes(1), "all members serving");
        }

        void awaitServing(int host, Duration deadline) throws InterruptedException {
            long after = System.currentTimeMillis();
            await(
                    s -> s.atMillis() > after && !s.versions().get(host).equals("-"),
                    deadline,
                    "member " + host + " serving");
        }

        void awaitVersion(int host, String version, Duration deadline) throws InterruptedException {
            await(s -> s.versions().get(host).equals(version), deadline, "member " + host + " at " + version);
        }

        private void await(java.util.function.Predicate<Sample> wanted, Duration deadline, String what)
                throws InterruptedException {
            long end = System.nanoTime() + deadline.toNanos();
            synchronized (samples) {
                while (true) {
                    if (!samples.isEmpty() && wanted.test(samples.getLast())) return;
                    long left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
                    if (left <= 0 || !process.isAlive()) {
                        throw new AssertionError("never " + what + "; last sample "
                                + (samples.isEmpty() ? "none" : samples.getLast()) + "; sampler said " + other);
                    }
                    samples.wait(Math.min(left, 500));
                }
            }
        }

        /** The sampled time the member did not answer, after {@code from}. */
        long downMillis(int host, long from) {
            List<Sample> all = samples();
            long down = 0;
            for (int i = 1; i < all.size(); i++) {
                if (all.get(i).atMillis() < from) continue;
                if (all.get(i).versions().get(host).equals("-"))
                    down += all.get(i).atMillis() - all.get(i - 1).atMillis();
            }
            return down;
        }

        void stop() throws Exception {
            process.getOutputStream().close();
            assertTrue(process.waitFor(1, TimeUnit.MINUTES), "sampler finished");
            reader.join();
        }
    }

    /** The writer process and what it printed. */
    private static final class WriterRun {
        private final Process process;
        private final List<Ack> acks = new ArrayList<>();
        private final List<String> other = new ArrayList<>();
        private final Thread reader;
        private long failed = -1;

        WriterRun(Process process) {
            this.process = process;
            this.reader = Thread.ofVirtual().start(() -> {
                try (BufferedReader in =
                        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = in.readLine()) != null; ) {
                        String[] f = line.split(" ");
                        synchronized (acks) {
                            if (f[0].equals("ACK") && f.length == 5) {
                                acks.add(new Ack(
                                        Integer.parseInt(f[1]), f[2], Long.parseLong(f[3]), Long.parseLong(f[4])));
                            } else if (f[0].equals("DONE") && f.length == 3) {
                                failed = Long.parseLong(f[2]);
                            } else {
                                other.add(line);
                            }
                        }
                    }
                } catch (Exception e) {
                    // killed: what it printed stands
                }
            });
        }

        List<Ack> acks() {
            synchronized (acks) {
                return List.copyOf(acks);
            }
        }

        void awaitDone() throws Exception {
            assertTrue(process.waitFor(3, TimeUnit.MINUTES), "writer finished");
            reader.join();
            assertEquals(0, process.exitValue(), "writer: " + other);
        }

        void stop() throws Exception {
            process.getOutputStream().close();
            awaitDone();
        }
    }
}
