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
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Rollouts across several minors on three "hosts" (network namespaces, {@link NetworkLab}; peer and client
 * TLS with client-cert auth): each member's runner gets the final target once and walks the minors itself,
 * serving between them and restarting only under the cluster's restart record (docs/ha.md). A writer on a
 * fourth host writes through every client URL; a sampler there asks every member's /version every 100 ms.
 * Afterwards: every acknowledged write on every member at its revision, the cluster version passed every
 * minor in order, never two members out of service at once (outside the common restart of an all-at-once
 * edit), no restart record left and nothing of the runner's in the keyspace. Run with -Pha (needs root).
 */
class HaRolloutIT {

    private static final int MEMBERS = 3;
    private static final int WRITER_HOST = 3;
    private static final Duration DEADLINE = Duration.ofMinutes(6);
    private static final ObjectMapper JSON = new ObjectMapper();

    private NetworkLab lab;
    private TestCertificates certificates;
    private TestCertificates.Pem writerPem;
    private final List<RunnerProcess> runners = new ArrayList<>();
    private final List<Process> clients = new ArrayList<>();
    private final List<String> report = new ArrayList<>();
    private List<Member> members;
    private String initialCluster;
    private String endpoints;

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

    @AfterEach
    void tearDown() throws Exception {
        for (Process p : clients) p.destroyForcibly().waitFor();
        for (RunnerProcess r : runners) r.close();
        if (lab != null) lab.close();
        report.forEach(System.out::println);
    }

    @Test
    void threeMembersUpThreeMinorsOneEditAtATime(@TempDir Path dir) throws Exception {
        rollout(dir, line("3.4"), line("3.7"), false);
    }

    @Test
    void threeMembersUpThreeMinorsAllEditedAtOnce(@TempDir Path dir) throws Exception {
        rollout(dir, line("3.4"), line("3.7"), true);
    }

    @Test
    void threeMembersDownTwoMinorsOneEditAtATime(@TempDir Path dir) throws Exception {
        rollout(dir, line("3.7"), line("3.5"), false);
    }

    /**
     * Two members edited, the third down (stopped, not edited): the two serve at the first leg's line and wait,
     * naming the missing member, and nothing restarts; once the third is back (edited) the rollout completes.
     */
    @Test
    void twoEditedWaitServingWhileTheThirdIsDownThenItCompletes(@TempDir Path dir) throws Exception {
        rollout(dir, line("3.4"), line("3.7"), Edits.THIRD_DOWN);
    }

    /** The benchmark's comparison (docs/benchmarks.md): nine one-minor rollouts; -Dha.bench=true runs it. */
    @Test
    void nineOneMinorRolloutsForTheBenchmark(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Boolean.getBoolean("ha.bench"), "-Dha.bench=true runs it");
        rollout(dir, line("3.4"), line("3.7"), Edits.ONE_MINOR_ROLLOUTS);
    }

    /**
     * SIGKILL of a member's runner and its etcd (its pod dies; the kubelet starts it again with the same target)
     * at seeded random moments of a 3.5 -> 3.7 rollout edited one member at a time: it converges, every
     * acknowledged write is kept, no restart record is left. The seed is printed: -Dha.kill.seed=N replays it;
     * -Dha.kills=N sets how many kills (3 by default).
     */
    @Test
    void killedRunnersAndTheirEtcdsConverge(@TempDir Path dir) throws Exception {
        rollout(dir, line("3.5"), line("3.7"), Edits.KILLS);
    }

    enum Edits {
        KILLS,
        ONE_MINOR_ROLLOUTS,
        ONE_AT_A_TIME,
        ALL_AT_ONCE,
        THIRD_DOWN
    }

    private void rollout(Path dir, Release from, Release to, boolean allAtOnce) throws Exception {
        rollout(dir, from, to, allAtOnce ? Edits.ALL_AT_ONCE : Edits.ONE_AT_A_TIME);
    }

    private void rollout(Path dir, Release from, Release to, Edits edits) throws Exception {
        boolean allAtOnce = edits == Edits.ALL_AT_ONCE;
        assertEquals(
                "0",
                new String(new ProcessBuilder("id", "-u")
                                .start()
                                .getInputStream()
                                .readAllBytes())
                        .trim(),
                "network namespaces need root (CI runs as root)");
        lab = new NetworkLab(MEMBERS + 1);
        certificates = TestCertificates.newCa(Files.createDirectory(dir.resolve("pki")));
        members = new ArrayList<>();
        for (int i = 0; i < MEMBERS; i++) {
            members.add(new Member(
                    i, "m" + i, dir.resolve("m" + i), certificates.issue("m" + i, lab.address(i)), lab.address(i)));
        }
        writerPem = certificates.issue("writer", lab.address(WRITER_HOST));
        initialCluster = members.stream().map(m -> m.name() + "=" + m.peerUrl()).collect(Collectors.joining(","));
        endpoints = members.stream().map(Member::clientUrl).collect(Collectors.joining(","));

        RunnerProcess[] serving = new RunnerProcess[MEMBERS];
        for (Member m : members) serving[m.host()] = startRunner(m, from);
        for (RunnerProcess r : serving) r.awaitEvent("exec", DEADLINE);
        WriterRun seed = writer("/registry/seed/", 100, Duration.ofSeconds(120));
        seed.awaitDone();
        List<Ack> acked = new ArrayList<>(seed.acks());

        SamplerRun sampler = sampler();
        sampler.awaitFirst();
        WriterRun writer = writer("/registry/rollout/", 1_000_000, Duration.ofMinutes(15));
        long started = System.currentTimeMillis();
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
            long killSeed = Long.getLong("ha.kill.seed", System.currentTimeMillis());
            int kills = Integer.getInteger("ha.kills", 3);
            java.util.Random random = new java.util.Random(killSeed);
            report.add("kills: -Dha.kill.seed=" + killSeed + " -Dha.kills=" + kills);
            for (Member m : members) {
                serving[m.host()].process().toHandle().destroy();
                serving[m.host()].awaitExit(Duration.ofSeconds(30));
                serving[m.host()] = startRunner(m, to);
                sampler.awaitServing(m.host(), DEADLINE);
            }
            // each kill waits for a seeded moment of the victim's runner: holding the record, its member stopped
            // (the next minor not yet started), its private etcd started, or serving between minors
            List<String> moments = List.of("restart-record-taken", "etcd-stopped", "etcd-started", "member-serving");
            for (int k = 0; k < kills; k++) {
                // a member still on its way (not yet exec'd at the target) where there is one
                List<Member> onTheWay = members.stream()
                        .filter(m -> serving[m.host()].count("exec") == 0)
                        .toList();
                List<Member> pool = onTheWay.isEmpty() ? members : onTheWay;
                Member victim = pool.get(random.nextInt(pool.size()));
                String moment = moments.get(random.nextInt(moments.size()));
                RunnerProcess pod = serving[victim.host()];
                long seen = pod.count(moment);
                long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
                while (pod.count(moment) == seen && pod.count("exec") == 0 && System.nanoTime() < end) {
                    Thread.sleep(20); // poll interval of a deadline-bound wait for the victim's moment
                }
                Thread.sleep(
                        random.nextInt(500)); // a fault injected at a seeded moment after it, not a synchronisation
                List<String> last = pod.events().stream()
                        .map(e -> e.path("event").asText())
                        .filter(e -> !e.equals("child-output"))
                        .toList();
                report.add("kill " + (k + 1) + ": " + victim.name() + " waiting for " + moment + ", after "
                        + (last.isEmpty() ? "nothing" : last.getLast()));
                pod.process().toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                pod.process().destroyForcibly();
                pod.awaitExit(Duration.ofSeconds(30));
                awaitGone(victim);
                serving[victim.host()] = startRunner(victim, to);
            }
        } else if (edits == Edits.ONE_AT_A_TIME) {
            for (Member m : members) {
                serving[m.host()].process().toHandle().destroy(); // the kubelet stops the old pod
                serving[m.host()].awaitExit(Duration.ofSeconds(30));
                serving[m.host()] = startRunner(m, to);
                sampler.awaitServing(m.host(), DEADLINE); // the operator edits the next member once this one serves
            }
        } else {
            Member third = members.getLast();
            for (Member m : members.subList(0, MEMBERS - 1)) {
                serving[m.host()].process().toHandle().destroy();
                serving[m.host()].awaitExit(Duration.ofSeconds(30));
                serving[m.host()] = startRunner(m, to);
                sampler.awaitServing(m.host(), DEADLINE);
            }
            serving[third.host()].process().toHandle().destroy(); // down, not edited
            serving[third.host()].awaitExit(Duration.ofSeconds(30));
            for (Member m : members.subList(0, MEMBERS - 1)) {
                awaitWaitingFor(serving[m.host()], third.name(), third.name() + " does not answer");
                assertEquals(0, serving[m.host()].count("restart-record-taken"), "nothing restarts meanwhile");
            }
            for (Member m : members.subList(0, MEMBERS - 1)) {
                assertEquals(0, serving[m.host()].count("restart-record-taken"), "nothing restarted while it was down");
                assertTrue(serving[m.host()].process().isAlive(), m.name() + "'s runner serves and waits");
            }
            report.add("with " + third.name() + " down, "
                    + members.subList(0, MEMBERS - 1).stream().map(Member::name).toList()
                    + " waited serving, naming it");
            serving[third.host()] = startRunner(third, to);
        }
        for (RunnerProcess r : serving) r.awaitEvent("exec", DEADLINE);
        for (Member m : members) sampler.awaitVersion(m.host(), to.version(), DEADLINE);
        awaitClusterVersion(to.minorLine().toString());
        long took = System.currentTimeMillis() - started;
        writer.stop();
        sampler.stop();
        acked.addAll(writer.acks());

        // the cluster version passed every minor in order
        List<String> passed = new ArrayList<>();
        for (Sample s : sampler.samples()) {
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

        // never two out of service at once, outside the common restart of an all-at-once edit
        // (kills take members down without any runner's choice: there the count is reported, not asserted)
        long commonRestartEnd = allAtOnce
                ? firstTimeAllServe(sampler.samples(), started)
                : edits == Edits.KILLS ? Long.MAX_VALUE : started;
        report.add("samples with two or more members out of service: "
                + sampler.samples().stream()
                        .filter(s -> s.atMillis() > started && s.down() > 1)
                        .count());
        List<Sample> twoDown = sampler.samples().stream()
                .filter(s -> s.atMillis() > commonRestartEnd && s.down() > 1)
                .toList();
        assertTrue(
                twoDown.isEmpty(),
                "two members out of service at once: "
                        + twoDown.stream().limit(5).toList());
        for (Member m : members) {
            report.add(String.format(
                    "%s -> %s (%s) %s: out of service %d ms in all (sampled every 100 ms)",
                    from.version(),
                    to.version(),
                    edits.name().toLowerCase().replace('_', ' '),
                    m.name(),
                    sampler.downMillis(m.host(), started)));
        }
        report.add(String.format(
                "%s -> %s (%s): %d ms from the first edit to the cluster version %s; writer"
                        + " acknowledged %d, failed %d",
                from.version(),
                to.version(),
                edits.name().toLowerCase().replace('_', ' '),
                took,
                to.minorLine(),
                writer.acks().size(),
                writer.failed));
        for (Member m : members) {
            assertEquals(to.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
        }
        for (RunnerProcess r : serving) {
            assertTrue(r.count("restart-record-taken") <= MEMBERS, r.output());
        }
        long taken = List.of(serving).stream()
                .mapToLong(r -> r.count("restart-record-taken"))
                .sum();
        if (edits != Edits.KILLS) {
            assertEquals(
                    edits == Edits.ONE_MINOR_ROLLOUTS ? 0 : (long) (expected.size() - 2) * MEMBERS,
                    taken,
                    "one record per chosen restart");
        }

        // every acknowledged write on every member at its revision; nothing else (no record, no probe)
        Map<String, JsonNode> reference = null;
        for (Member m : members) {
            Map<String, JsonNode> keys = keysOn(m);
            for (Ack a : acked) {
                JsonNode kv = keys.get(a.key());
                assertTrue(kv != null, "acknowledged write " + a.key() + " on " + m.name());
                assertEquals(a.revision(), kv.path("mod_revision").asLong(), a.key() + " on " + m.name());
            }
            assertEquals(acked.size(), keys.size(), "no other key on " + m.name() + " (no restart record left)");
            if (reference != null) assertEquals(reference, keys, "members agree");
            reference = keys;
        }
        report.add("every member holds the " + acked.size() + " acknowledged writes at their revisions");
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
        RunnerProcess runner = RunnerProcess.startUnder(lab.exec(m.host()), args, Map.of("ETCD_CREDS", peerTls));
        runners.add(runner);
        return runner;
    }

    private List<String> client(String... args) {
        List<String> command = new ArrayList<>(lab.exec(WRITER_HOST));
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
        return new SamplerRun(p);
    }

    /** The sampler process on the writer's host and its samples. */
    private static final class SamplerRun {
        private final Process process;
        private final List<Sample> samples = new ArrayList<>();
        private final List<String> other = new ArrayList<>();
        private final Thread reader;

        SamplerRun(Process process) {
            this.process = process;
            this.reader = Thread.ofVirtual().start(() -> {
                try (BufferedReader in =
                        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line; (line = in.readLine()) != null; ) {
                        String[] f = line.split(" ");
                        synchronized (samples) {
                            if (f[0].equals("S") && f.length == MEMBERS + 3) {
                                samples.add(new Sample(
                                        Long.parseLong(f[1]), List.of(f).subList(2, 2 + MEMBERS), f[2 + MEMBERS]));
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
