package dev.etcdmigrate.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.FreePorts;
import dev.etcdmigrate.etcd.ServerPorts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A member whose private etcd cannot get back into its cluster fails the step within seconds with
 * the reason etcd gave, not at --start-timeout (set to 5 minutes here), and its data is untouched: a
 * wrong peer CA, a peer address that is not this host's, no quorum. "Untouched": WAL and snapshot
 * files byte-identical, version.txt unchanged, and the same key-value hash and revision in the db
 * (etcd opens bbolt read-write, which rewrites its meta page, and preallocates wal/0.tmp, so the db
 * file's bytes and the directory listing differ after any start of etcd).
 */
class RejoinFailFastIT {

    private static final int MEMBERS = 3;
    private static final Duration DEADLINE = Duration.ofMinutes(2);
    /** Well under the start timeout: the watch's patience (5 s) plus the runner's own start and stop. */
    private static final Duration FAST = Duration.ofSeconds(30);

    private final List<RunnerProcess> runners = new ArrayList<>();

    record Member(String name, Path data, ServerPorts real, int privateClientPort, TestCertificates.Pem pem) {
        String peerUrl() {
            return "https://127.0.0.1:" + real.peer();
        }

        String clientUrl() {
            return "http://127.0.0.1:" + real.client();
        }
    }

    @AfterEach
    void stopAll() throws Exception {
        for (RunnerProcess runner : runners) runner.close();
    }

    @Test
    void aMemberThatCannotRejoinFailsFastWithEtcdsReason(@TempDir Path dir) throws Exception {
        List<Release> releases = EtcdFixture.V3_RELEASES;
        // 3.5 -> 3.6: the step's etcd starts with etcd's own settings (the 3.6 -> 3.7 step first runs 3.6 with
        // --snapshot-count=1, and a restarted member applies its own committed log: that snapshot changes files)
        Release from = releases.get(releases.size() - 3);
        Release to = releases.get(releases.size() - 2);
        TestCertificates certificates = TestCertificates.newCa(Files.createDirectory(dir.resolve("pki")));
        TestCertificates otherCa = TestCertificates.newCa(Files.createDirectory(dir.resolve("other-pki")));
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < MEMBERS; i++) {
            members.add(new Member("m" + i, dir.resolve("m" + i), FreePorts.pick(), FreePorts.pick().client(), certificates.issue("m" + i)));
        }
        String initialCluster = members.stream().map(m -> m.name() + "=" + m.peerUrl()).collect(Collectors.joining(","));
        List<RunnerProcess> serving = new ArrayList<>();
        for (Member m : members) serving.add(startRunner(m, from, initialCluster, certificates.caFile(), m.peerUrl()));
        for (RunnerProcess r : serving) r.awaitLine("\\[etcd-migrate\\] exec ", DEADLINE);
        // etcd itself runs (a SIGTERM in the runner's last moments before execve is lost, see the report)
        for (RunnerProcess r : serving) r.awaitLine("ready to serve client requests", DEADLINE);

        Member m0 = members.getFirst();
        stop(serving.getFirst());
        Map<String, String> before = memberState(m0, to, dir);

        failsFast("wrong peer CA", startRunner(m0, to, initialCluster, otherCa.caFile(), m0.peerUrl()),
                "cannot rejoin its cluster", "x509");
        assertEquals(before, memberState(m0, to, dir), "member dir untouched after the wrong CA");

        // TEST-NET-1 (RFC 5737): never an address of this host
        failsFast("peer address not this host's", startRunner(m0, to, initialCluster, certificates.caFile(), "https://192.0.2.1:2380"),
                "not an address of this host", "192.0.2.1");
        assertEquals(before, memberState(m0, to, dir), "member dir untouched after the foreign address");

        stop(serving.get(1));
        stop(serving.get(2));
        failsFast("no quorum", startRunner(m0, to, initialCluster, certificates.caFile(), m0.peerUrl()),
                "cannot rejoin its cluster", "no raft leader");
        assertEquals(before, memberState(m0, to, dir), "member dir untouched without quorum");
        assertEquals(from.version() + "/etcd3", Files.readString(m0.data().resolve("version.txt")), "version.txt unchanged");
    }

    private static void stop(RunnerProcess serving) throws Exception {
        serving.process().toHandle().destroy(); // SIGTERM to the exec'd etcd
        int code = serving.awaitExit(Duration.ofSeconds(30));
        assertTrue(code == 0 || code == 143, "etcd stopped with " + code);
    }

    private static void failsFast(String what, RunnerProcess runner, String... fragments) throws Exception {
        long start = System.nanoTime();
        int code = runner.awaitExit(Duration.ofMinutes(6));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        System.out.printf("%s: runner exited with %d after %d ms; %s%n", what, code, took.toMillis(), runner.output().lines()
                .filter(l -> l.contains("ERROR") && l.contains("[etcd-migrate]")).map(l -> l.length() > 600 ? l.substring(0, 600) + "..." : l)
                .collect(Collectors.joining(" / ")));
        assertNotEquals(0, code, runner.output());
        assertTrue(took.compareTo(FAST) < 0, what + " took " + took.toMillis() + " ms: " + runner.output());
        for (String fragment : fragments) {
            assertTrue(runner.output().contains(fragment), what + ": '" + fragment + "' in " + runner.output());
        }
        assertEquals(0, runner.countRunnerLines("\\[etcd-migrate\\] exec "), "no exec after a failed step");
    }

    private RunnerProcess startRunner(Member m, Release version, String initialCluster, Path trustedCa, String peerUrl) throws Exception {
        String tls = "--peer-cert-file=" + m.pem().cert() + " --peer-key-file=" + m.pem().key() + " --peer-trusted-ca-file="
                + trustedCa + " --peer-client-cert-auth";
        List<String> args = new ArrayList<>(List.of("migrate", "--data-dir", m.data().toString(), "--bin-dir", EtcdFixture.binDir().toString(),
                "--target-version", version.version(), "--target-storage", "etcd3", "--name", m.name(), "--start-timeout", "5m",
                "--initial-cluster", initialCluster, "--listen-peer-urls", peerUrl, "--port", String.valueOf(m.privateClientPort()),
                "--", "--name", m.name(), "--initial-cluster", initialCluster, "--initial-cluster-state", "new",
                "--initial-cluster-token", "failfast-it", "--initial-advertise-peer-urls", m.peerUrl(), "--listen-peer-urls", peerUrl,
                "--listen-client-urls", m.clientUrl(), "--advertise-client-urls", m.clientUrl()));
        args.addAll(List.of(tls.split(" ")));
        RunnerProcess runner = RunnerProcess.start(args, Map.of("ETCD_CREDS", tls));
        runners.add(runner);
        return runner;
    }

    /** WAL and snapshot files by digest, plus `etcdutl hashkv` of a copy of the db (the tool must not touch the member). */
    private static Map<String, String> memberState(Member m, Release tools, Path dir) throws Exception {
        Path member = m.data().resolve("member");
        Map<String, String> state = new java.util.TreeMap<>(TreeDigest.of(member));
        state.keySet().removeIf(k -> k.equals("snap/db") || k.endsWith(".tmp"));
        Path copy = Files.createTempFile(dir, "db", ".copy");
        Files.copy(member.resolve("snap/db"), copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Process hash = new ProcessBuilder(EtcdFixture.binDir().resolve("etcdutl-" + tools.version()).toString(), "hashkv", copy.toString(),
                "-w", "json").redirectErrorStream(true).start();
        String out = new String(hash.getInputStream().readAllBytes()).trim();
        assertEquals(0, hash.waitFor(), "etcdutl hashkv: " + out);
        Files.delete(copy);
        state.put("db key-value hash", out);
        return state;
    }
}
