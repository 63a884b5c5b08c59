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
 * Three members on three "hosts" (network namespaces with their own addresses, see {@link NetworkLab}),
 * peer TLS and client TLS with client-cert auth, certificates whose SANs are the member addresses. Each
 * member's runner runs in its namespace and execs etcd, as a real member would. The cluster goes
 * 3.5 -> 3.6 -> 3.7 (one rolling upgrade per minor) and back 3.7 -> 3.6 -> 3.5 (rolling downgrades
 * through etcd's downgrade API) while a writer on a fourth host writes through the client URLs. Then
 * every acknowledged write is on every member at the revision it was acknowledged with, the members
 * agree on every key and revision, and the cluster version is right. Run with -Pha (needs root).
 */
class HaClusterIT {

    private static final int MEMBERS = 3;
    private static final int WRITER_HOST = 3;
    private static final Duration DEADLINE = Duration.ofMinutes(3);
    private static final ObjectMapper JSON = new ObjectMapper();

    private NetworkLab lab;
    private TestCertificates certificates;
    private final List<RunnerProcess> runners = new ArrayList<>();
    private final List<Process> clients = new ArrayList<>();
    private final List<String> report = new ArrayList<>();

    /** A member: its host in the lab, data dir, TLS files. */
    record Member(int host, String name, Path data, TestCertificates.Pem pem, String address) {
        String peerUrl() {
            return "https://" + address + ":2380";
        }

        String clientUrl() {
            return "https://" + address + ":2379";
        }
    }

    /** One acknowledged write, as the writer printed it. */
    record Ack(int endpoint, String key, long revision, long atMillis) {}

    @AfterEach
    void tearDown() throws Exception {
        for (Process p : clients) p.destroyForcibly().waitFor();
        for (RunnerProcess r : runners) r.close();
        if (lab != null) lab.close(); // kills whatever is left in the namespaces, then deletes them
        report.forEach(System.out::println);
    }

    @Test
    void rollingUpgradesAndDowngradesOnSeparateHostsKeepEveryAcknowledgedWrite(@TempDir Path dir) throws Exception {
        assertEquals(
                "0",
                new String(new ProcessBuilder("id", "-u")
                                .start()
                                .getInputStream()
                                .readAllBytes())
                        .trim(),
                "network namespaces need root (CI runs as root)");
        Release v35 = line("3.5");
        Release v36 = line("3.6");
        Release v37 = line("3.7");
        lab = new NetworkLab(MEMBERS + 1);
        certificates = TestCertificates.newCa(Files.createDirectory(dir.resolve("pki")));
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < MEMBERS; i++) {
            members.add(new Member(
                    i, "m" + i, dir.resolve("m" + i), certificates.issue("m" + i, lab.address(i)), lab.address(i)));
        }
        TestCertificates.Pem writerPem = certificates.issue("writer", lab.address(WRITER_HOST));
        String initialCluster =
                members.stream().map(m -> m.name() + "=" + m.peerUrl()).collect(Collectors.joining(","));
        String endpoints = members.stream().map(Member::clientUrl).collect(Collectors.joining(","));

        RunnerProcess[] serving = new RunnerProcess[MEMBERS];
        for (Member m : members) serving[m.host()] = startRunner(m, v35, initialCluster);
        for (RunnerProcess r : serving) r.awaitEvent("exec", DEADLINE);
        WriterRun seed = writer(writerPem, endpoints, "/registry/seed/", 200, Duration.ofSeconds(120));
        seed.awaitDone();
        assertEquals(200, seed.acks().size(), "seed writes acknowledged");
        List<Ack> acked = new ArrayList<>(seed.acks());

        int rollout = 0;
        for (Release target : List.of(v36, v37, v36, v35)) {
            rollout++;
            boolean down = rollout > 2;
            WriterRun writer =
                    writer(writerPem, endpoints, "/registry/rollout-" + rollout + "/", 200_000, Duration.ofMinutes(10));
            for (Member m : members) {
                serving[m.host()].process().toHandle().destroy(); // SIGTERM to the exec'd etcd: the member goes down
                int code = serving[m.host()].awaitExit(Duration.ofSeconds(30));
                long downAt = System.currentTimeMillis(); // a write acknowledged after this went through the new etcd
                assertTrue(code == 0 || code == 143, m.name() + " stopped with " + code);
                serving[m.host()] = startRunner(m, target, initialCluster);
                ItConv2Events.awaitStepFinished(serving[m.host()], 1, 1, DEADLINE);
                serving[m.host()].awaitEvent("exec", DEADLINE);
                Ack back = writer.awaitAckFrom(m.host(), downAt, DEADLINE);
                long lastBefore = writer.acks().stream()
                        .filter(a -> a.endpoint() == m.host() && a.atMillis() <= downAt)
                        .mapToLong(Ack::atMillis)
                        .max()
                        .orElse(downAt);
                long byOthers = writer.acks().stream()
                        .filter(a ->
                                a.endpoint() != m.host() && a.atMillis() > downAt && a.atMillis() < back.atMillis())
                        .count();
                // recorded, as the issue asks ("whether the cluster ever lost quorum"), not asserted: one CI run in
                // four saw a 3.7 -> 3.6 rollout where the other two members acknowledged nothing for 4.2 s
                report.add(
                        String.format(
                                "rollout %d (%s to %s) %s: out of service %d ms (its last acknowledged write to its first"
                                        + " after the restart); %d writes acknowledged by the other members meanwhile%s",
                                rollout,
                                down ? "down" : "up",
                                target.version(),
                                m.name(),
                                back.atMillis() - lastBefore,
                                byOthers,
                                byOthers > 0
                                        ? ""
                                        : " - NO WRITE acknowledged by the others while it was out (quorum lost or no leader)"));
                assertEquals(
                        target.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
            }
            writer.stop();
            acked.addAll(writer.acks());
            long maxGap = writer.maxGapMillis();
            report.add(String.format(
                    "rollout %d to %s: writer acknowledged %d, failed %d, longest gap between acks %d ms",
                    rollout, target.version(), writer.acks().size(), writer.failed, maxGap));
            awaitClusterVersion(
                    writerPem, members.getFirst(), target.minorLine().toString());
            if (down) awaitNoDowngradeJob(writerPem, members);
        }

        Map<String, JsonNode> reference = null;
        for (Member m : members) {
            Map<String, JsonNode> keys = keysOn(writerPem, m);
            for (Ack a : acked) {
                JsonNode kv = keys.get(a.key());
                assertTrue(kv != null, "acknowledged write " + a.key() + " on " + m.name());
                assertEquals(
                        "v-" + a.key(),
                        new String(Base64.getDecoder().decode(kv.path("value").asText()), StandardCharsets.UTF_8));
                assertEquals(
                        a.revision(), kv.path("mod_revision").asLong(), "revision of " + a.key() + " on " + m.name());
            }
            assertEquals(acked.size(), keys.size(), "no other key on " + m.name() + " (no probe key left)");
            if (reference != null) assertEquals(reference, keys, "members agree on every key, value and revision");
            reference = keys;
        }
        report.add("every member holds the " + acked.size() + " acknowledged writes at their revisions");
    }

    private static Release line(String minor) {
        return EtcdFixture.V3_RELEASES.stream()
                .filter(r -> r.minorLine().toString().equals(minor))
                .findFirst()
                .orElseThrow();
    }

    private RunnerProcess startRunner(Member m, Release version, String initialCluster) throws Exception {
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
                // the member's own namespace: nothing else listens there, so etcd's usual ports are free
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
                "ha-it",
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

    private List<String> client(TestCertificates.Pem pem, String... args) {
        List<String> command = new ArrayList<>(lab.exec(WRITER_HOST));
        command.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                classpath(),
                HaClient.class.getName(),
                args[0],
                certificates.caFile().toString(),
                pem.cert().toString(),
                pem.key().toString()));
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

    /** One request from the writer's host; the body of the answer. */
    private String request(TestCertificates.Pem pem, String... args) throws Exception {
        Process p =
                new ProcessBuilder(client(pem, args)).redirectErrorStream(true).start();
        clients.add(p);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(2, TimeUnit.MINUTES), "client finished");
        if (p.exitValue() != 0) throw new IllegalStateException("client failed: " + out);
        return out;
    }

    private void awaitClusterVersion(TestCertificates.Pem pem, Member m, String line) throws Exception {
        long end = System.nanoTime() + DEADLINE.toNanos();
        String last = "";
        while (System.nanoTime() < end) {
            try {
                last = request(pem, "get", m.clientUrl(), "/version");
                if (JSON.readTree(last).path("etcdcluster").asText().startsWith(line + ".")) {
                    report.add("cluster version "
                            + JSON.readTree(last).path("etcdcluster").asText());
                    return;
                }
            } catch (IllegalStateException e) {
                last = e.getMessage();
            }
            Thread.sleep(200); // poll interval of a deadline-bound wait
        }
        throw new AssertionError("cluster version never reached " + line + ": " + last);
    }

    /** After the last member the leader ends the downgrade job within its --downgrade-check-time. */
    private void awaitNoDowngradeJob(TestCertificates.Pem pem, List<Member> members) throws Exception {
        long end = System.nanoTime() + DEADLINE.toNanos();
        String last = "";
        while (System.nanoTime() < end) {
            boolean any = false;
            try {
                for (Member m : members) {
                    last = request(pem, "post", m.clientUrl(), "/v3/maintenance/status", "{}");
                    any |= JSON.readTree(last)
                            .path("downgradeInfo")
                            .path("enabled")
                            .asBoolean(false);
                }
                if (!any) return;
            } catch (IllegalStateException e) {
                last = e.getMessage(); // a slow answer on a loaded machine: asked again until the deadline
            }
            Thread.sleep(200); // poll interval of a deadline-bound wait
        }
        throw new AssertionError("a downgrade job is still enabled: " + last);
    }

    /** Every key the member holds (its own copy: a serializable read), by key. */
    private Map<String, JsonNode> keysOn(TestCertificates.Pem pem, Member m) throws Exception {
        JsonNode range = JSON.readTree(request(
                pem,
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

    private WriterRun writer(TestCertificates.Pem pem, String endpoints, String prefix, long count, Duration time)
            throws Exception {
        Process p = new ProcessBuilder(client(
                        pem, "write", endpoints, prefix, String.valueOf(count), String.valueOf(time.toSeconds())))
                .redirectErrorStream(true)
                .start();
        clients.add(p);
        return new WriterRun(p);
    }

    /** The writer process on the fourth host and what it printed. */
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
                            acks.notifyAll();
                        }
                    }
                } catch (Exception e) {
                    // the writer was killed: what it printed so far stands
                }
            });
        }

        List<Ack> acks() {
            synchronized (acks) {
                return List.copyOf(acks);
            }
        }

        Ack awaitAckFrom(int endpoint, long afterMillis, Duration deadline) throws InterruptedException {
            long end = System.nanoTime() + deadline.toNanos();
            synchronized (acks) {
                while (true) {
                    for (Ack a : acks) {
                        if (a.endpoint() == endpoint && a.atMillis() > afterMillis) return a;
                    }
                    long left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime());
                    if (left <= 0 || !process.isAlive()) {
                        throw new AssertionError("no write acknowledged by endpoint " + endpoint
                                + " after the restart; writer said: " + other);
                    }
                    acks.wait(Math.min(left, 500));
                }
            }
        }

        void awaitDone() throws Exception {
            assertTrue(process.waitFor(3, TimeUnit.MINUTES), "writer finished");
            reader.join();
            assertEquals(0, process.exitValue(), "writer: " + other);
        }

        void stop() throws Exception {
            process.getOutputStream().close(); // the writer stops at the end of its stdin
            awaitDone();
        }

        long maxGapMillis() {
            List<Ack> all = acks();
            long gap = 0;
            for (int i = 1; i < all.size(); i++)
                gap = Math.max(gap, all.get(i).atMillis() - all.get(i - 1).atMillis());
            return gap;
        }
    }
}
