package dev.etcdmigrate.it.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.cluster.RolloutPolicy;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.ItConv2Events;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.ThrowawayCa;
import dev.etcdmigrate.it.support.TreeDigest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
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
    /**
     * No quorum: peers that do not run get 30 s (they may be restarting with this member, as the kubelets restart
     * every member of an all-at-once edit). Before that the runner reads the restart record its failed run left
     * noted as held for the policy's release patience (a leader change passes meanwhile), then runs the leg as with
     * no member answering. Still well under the start timeout (5 minutes here).
     */
    private static final Duration NO_QUORUM = FAST.plusSeconds(30).plus(RolloutPolicy.DEFAULT.releasePatience());

    private ClusterLab cluster;

    @AfterEach
    void stopAll() throws Exception {
        if (cluster != null) cluster.close();
    }

    @Test
    void aMemberThatCannotRejoinFailsFastWithEtcdsReason(@TempDir Path dir) throws Exception {
        List<Release> releases = EtcdFixture.V3_RELEASES;
        // 3.5 -> 3.6: the step's etcd starts with etcd's own settings (the 3.6 -> 3.7 step first runs 3.6 with
        // --snapshot-count=1, and a restarted member applies its own committed log: that snapshot changes files)
        Release from = releases.get(releases.size() - 3);
        Release to = releases.get(releases.size() - 2);
        cluster = ClusterLab.create(dir, MEMBERS, ClusterLab.Layout.ONE_HOST, "failfast-it", ClusterLab.Tls.PEER);
        Path ca = cluster.certificates().caFile();
        ThrowawayCa otherCa = ThrowawayCa.newCa(Files.createDirectory(dir.resolve("other-pki")));
        List<Member> members = cluster.members();
        List<RunnerProcess> serving = new ArrayList<>();
        for (Member m : members) serving.add(startRunner(m, from, ca, m.peerUrl()));
        for (RunnerProcess r : serving) r.awaitEvent("exec", DEADLINE);
        // etcd itself runs (a SIGTERM in the runner's last moments before execve is lost, see the report)
        for (int i = 0; i < MEMBERS; i++) ClusterLab.awaitServing(members.get(i), serving.get(i), DEADLINE);

        Member m0 = members.getFirst();
        stop(serving.getFirst());
        Map<String, String> before = memberState(m0, to, dir);

        failsFast(
                "wrong peer CA",
                startRunner(m0, to, otherCa.caFile(), m0.peerUrl()),
                "x509",
                f -> f.path("kind").asText().startsWith("tls-")
                        && !f.path("definitive").asBoolean());
        assertEquals(before, memberState(m0, to, dir), "member dir untouched after the wrong CA");

        // TEST-NET-1 (RFC 5737): never an address of this host
        failsFast(
                "peer address not this host's",
                startRunner(m0, to, ca, "https://192.0.2.1:2380"),
                "192.0.2.1",
                f -> f.path("kind").asText().equals("address-not-local")
                        && f.path("definitive").asBoolean());
        assertEquals(before, memberState(m0, to, dir), "member dir untouched after the foreign address");

        stop(serving.get(1));
        stop(serving.get(2));
        failsFast(
                "no quorum",
                NO_QUORUM,
                startRunner(m0, to, ca, m0.peerUrl()),
                null,
                f -> !f.path("definitive").asBoolean()
                        && f.path("leaderlessSeconds").asLong() >= 25);
        assertEquals(before, memberState(m0, to, dir), "member dir untouched without quorum");
        assertEquals(
                from.version() + "/etcd3", Files.readString(m0.data().resolve("version.txt")), "version.txt unchanged");
    }

    private static void stop(RunnerProcess serving) throws Exception {
        serving.process().toHandle().destroy(); // SIGTERM to the exec'd etcd
        int code = serving.awaitExit(Duration.ofSeconds(30));
        assertTrue(code == 0 || code == 143, "etcd stopped with " + code);
    }

    /**
     * The runner fails (exit 1) within its budget ({@link #FAST}; {@link #NO_QUORUM}): its step-failed event, the failed event whose reason
     * carries {@code etcdSaid} (what etcd logged: an address, the TLS library's name; null: nothing to check),
     * and one rejoin-failed event as {@code rejoinFailed} expects (the symptom's kind, whether it alone decided).
     */
    private static void failsFast(String what, RunnerProcess runner, String etcdSaid, Predicate<JsonNode> rejoinFailed)
            throws Exception {
        failsFast(what, FAST, runner, etcdSaid, rejoinFailed);
    }

    private static void failsFast(
            String what, Duration within, RunnerProcess runner, String etcdSaid, Predicate<JsonNode> rejoinFailed)
            throws Exception {
        long start = System.nanoTime();
        int code = runner.awaitExit(Duration.ofMinutes(6));
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        System.out.printf(
                "%s: runner exited with %d after %d ms; %s%n",
                what,
                code,
                took.toMillis(),
                runner.events().stream()
                        .filter(e -> e.path("level").asText().equals("error"))
                        .map(e -> e.path("message").asText())
                        .map(l -> l.length() > 600 ? l.substring(0, 600) + "..." : l)
                        .collect(Collectors.joining(" / ")));
        assertNotEquals(0, code, runner.output());
        assertTrue(took.compareTo(within) < 0, what + " took " + took.toMillis() + " ms: " + runner.output());
        JsonNode failed = runner.ending();
        assertEquals("failed", failed.path("event").asText(), runner.output());
        assertEquals(code, failed.path("exitCode").asInt(), runner.output());
        List<JsonNode> stepFailed = runner.events("step-failed");
        assertEquals(1, stepFailed.size(), runner.output());
        assertTrue(ItConv2Events.step(1, 1).test(stepFailed.getFirst()), runner.output());
        if (etcdSaid != null) {
            assertTrue(
                    stepFailed.getFirst().path("reason").asText().contains(etcdSaid),
                    what + ": '" + etcdSaid + "' in " + runner.output());
            assertTrue(
                    failed.path("reason").asText().contains(etcdSaid),
                    what + ": '" + etcdSaid + "' in " + runner.output());
        }
        List<JsonNode> rejoin = runner.events("rejoin-failed");
        assertEquals(1, rejoin.size(), what + ": " + runner.output());
        assertTrue(rejoinFailed.test(rejoin.getFirst()), what + ": " + rejoin.getFirst());
        assertEquals(0, runner.count("exec"), "no exec after a failed step");
    }

    private RunnerProcess startRunner(Member m, Release version, Path trustedCa, String peerUrl) throws Exception {
        return cluster.start(m, version, trustedCa, peerUrl, false, "--start-timeout", "5m");
    }

    /** WAL and snapshot files by digest, plus `etcdutl hashkv` of a copy of the db (the tool must not touch the member). */
    private static Map<String, String> memberState(Member m, Release tools, Path dir) throws Exception {
        Path member = m.data().resolve("member");
        Map<String, String> state = new java.util.TreeMap<>(TreeDigest.of(member));
        state.keySet().removeIf(k -> k.equals("snap/db") || k.endsWith(".tmp"));
        Path copy = Files.createTempFile(dir, "db", ".copy");
        Files.copy(member.resolve("snap/db"), copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Process hash = new ProcessBuilder(
                        EtcdFixture.binDir()
                                .resolve("etcdutl-" + tools.version())
                                .toString(),
                        "hashkv",
                        copy.toString(),
                        "-w",
                        "json")
                .redirectErrorStream(true)
                .start();
        String out = new String(hash.getInputStream().readAllBytes()).trim();
        assertEquals(0, hash.waitFor(), "etcdutl hashkv: " + out);
        Files.delete(copy);
        state.put("db key-value hash", out);
        return state;
    }
}
