package dev.etcdmigrate.it.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.InProcess;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.cluster.RecordValue;
import dev.etcdmigrate.cluster.RolloutCoordinator;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.version.MinorLine;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code etcd-migrate status} on a real three-member cluster (3.6.16, loopback, peer TLS) in each state a rollout
 * passes through: done, before a rollout, a record held, waiting for a member that does not answer, a downgrade
 * job running, and stuck on a stale record, which the command status prints removes (with etcdctl).
 */
class StatusIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private static final Duration EVERY = Duration.ofMillis(500);

    private ClusterLab cluster;

    @AfterEach
    void stop() throws Exception {
        if (cluster != null) cluster.close();
    }

    private record Reading(int exit, JsonNode report) {
        JsonNode member(String name) {
            for (JsonNode m : report.path("members"))
                if (m.path("name").asText().equals(name)) return m;
            throw new AssertionError("no member " + name + " in " + report);
        }
    }

    private static Reading status(Member ask, String target) throws Exception {
        InProcess.Result r = InProcess.run(RunnerArgs.status(ask.clientUrl(), target, "-o", "json"), Map.of());
        return new Reading(r.exit(), JSON.readTree(r.out()));
    }

    private static JsonNode gateway(Member m, String path, String body) throws Exception {
        HttpResponse<String> answer = HTTP.send(
                HttpRequest.newBuilder(URI.create(m.clientUrl() + "/v3" + path))
                        .timeout(Duration.ofSeconds(5))
                        .POST(HttpRequest.BodyPublishers.ofString(body))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answer.statusCode(), answer.body());
        return JSON.readTree(answer.body());
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static void putRecord(Member m, RecordValue value) throws Exception {
        gateway(
                m,
                "/kv/put",
                "{\"key\":\"" + b64(RolloutCoordinator.RECORD_KEY) + "\",\"value\":\"" + b64(value.toJson()) + "\"}");
    }

    private static boolean recordExists(Member m) throws Exception {
        return gateway(m, "/kv/range", "{\"key\":\"" + b64(RolloutCoordinator.RECORD_KEY) + "\"}")
                        .path("kvs")
                        .size()
                > 0;
    }

    private static int etcdctl(String version, String... args) throws Exception {
        List<String> command = new ArrayList<>(
                List.of(EtcdFixture.binDir().resolve("etcdctl-" + version).toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "etcdctl " + List.of(args) + " did not end in 60 s");
            return p.exitValue();
        } finally {
            p.destroyForcibly();
            p.waitFor();
        }
    }

    @Test
    void statusReadsEachStateOfARollout(@TempDir Path dir) throws Exception {
        Release line = EtcdFixture.release("3.6.16");
        cluster = ClusterLab.create(dir, 3, ClusterLab.Layout.ONE_HOST, "status-it", ClusterLab.Tls.PEER);
        List<RunnerProcess> runners = new ArrayList<>();
        for (Member m : cluster.members()) runners.add(cluster.start(m, line));
        for (int i = 0; i < 3; i++) {
            ClusterLab.awaitServing(cluster.members().get(i), runners.get(i), Duration.ofSeconds(120));
        }
        Member m0 = cluster.members().get(0);
        Member m1 = cluster.members().get(1);

        // done: every member on the target line, the cluster version it, nothing held. A new 3.6 cluster records
        // its storage version a moment after it serves (etcd's own version monitor): waited for, not raced
        Reading done = Poll.until(Duration.ofSeconds(60), EVERY, "status done, storage versions recorded", () -> {
            Reading r = status(m0, "3.6.16");
            boolean recorded = true;
            for (JsonNode m : r.report().path("members")) {
                recorded &= m.path("storageVersion").asText().equals("3.6");
            }
            return r.exit() == 0 && recorded ? r : null;
        });
        assertEquals("done", done.report().path("state").asText());
        for (JsonNode m : done.report().path("members")) {
            assertEquals("3.6.16", m.path("etcdVersion").asText());
            assertEquals("3.6", m.path("storageVersion").asText());
            assertTrue(m.path("raftIndex").asLong() > 0);
        }

        // before a rollout to 3.7: rolling, each member's next leg 3.6 -> 3.7, its gate open, nobody holds the record
        Reading before = status(m0, "3.7.3");
        assertEquals(4, before.exit());
        assertEquals("3.6 -> 3.7", before.member("m2").path("nextLeg").asText());
        assertTrue(before.report().path("record").isNull());

        // a record held by m1 for its restart 3.6 -> 3.7 (m1 still answers at 3.6: it has not stopped yet)
        putRecord(m0, new RecordValue("m1", MinorLine.parse("3.6"), MinorLine.parse("3.7"), Instant.now()));
        Reading held = status(m0, "3.7.3");
        assertEquals(4, held.exit());
        assertEquals("m1", held.report().path("record").path("holder").asText());
        assertFalse(held.report().path("record").has("stale"));
        assertTrue(
                held.member("m0").path("waitsFor").asText().contains("m1"),
                held.report().toString());

        // waiting for a member that does not answer: m2's etcd stopped
        runners.get(2).close();
        Reading waiting = Poll.until(Duration.ofSeconds(30), EVERY, "m2 not answering", () -> {
            Reading r = status(m0, "3.7.3");
            return !r.member("m2").path("answers").asBoolean() ? r : null;
        });
        assertEquals(4, waiting.exit());
        assertTrue(
                waiting.member("m0").path("waitsFor").asText().contains("m2"),
                waiting.report().toString());
        runners.set(2, cluster.start(cluster.members().get(2), line));
        ClusterLab.awaitServing(cluster.members().get(2), runners.get(2), Duration.ofSeconds(120));

        // stuck: the record names a restart m1 is past (3.5 -> 3.6, it serves 3.6); status prints the command
        // that removes it at its revision, and that command, run with etcdctl, removes it
        putRecord(m0, new RecordValue("m1", MinorLine.parse("3.5"), MinorLine.parse("3.6"), Instant.now()));
        Reading stuck = Poll.until(Duration.ofSeconds(30), EVERY, "status stuck", () -> {
            Reading r = status(m0, "3.6.16");
            return r.exit() == 5 ? r : null;
        });
        assertEquals("stuck", stuck.report().path("state").asText());
        String remove = stuck.report().path("record").path("removeCommand").asText();
        assertTrue(remove.contains("etcdctl"), stuck.report().toString());
        String withBinary =
                remove.replace("etcdctl --endpoints", EtcdFixture.binDir().resolve("etcdctl-3.6.16") + " --endpoints");
        Process p = new ProcessBuilder("bash", "-c", withBinary)
                .redirectErrorStream(true)
                .start();
        try {
            assertTrue(p.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        } finally {
            p.destroyForcibly();
            p.waitFor();
        }
        assertFalse(recordExists(m0), "the printed command removed the stale record");

        // a downgrade job running (enabled to 3.5 with etcdctl): rolling even with every member on 3.6
        assertEquals(0, etcdctl("3.6.16", "--endpoints=" + m0.clientUrl(), "downgrade", "enable", "3.5"));
        Reading job = Poll.until(Duration.ofSeconds(60), EVERY, "a downgrade job", () -> {
            Reading r = status(m0, "3.6.16");
            return r.report().path("downgradeJob").asText().equals("3.5") ? r : null;
        });
        assertEquals(4, job.exit());
        assertEquals(0, etcdctl("3.6.16", "--endpoints=" + m0.clientUrl(), "downgrade", "cancel"));

        // done again once the job is cancelled and the cluster version is back at 3.6
        Reading after = Poll.until(Duration.ofSeconds(60), EVERY, "status done after", () -> {
            Reading r = status(m1, "3.6.16");
            return r.exit() == 0 ? r : null;
        });
        assertEquals("3.6", after.report().path("clusterVersion").asText());
        for (RunnerProcess r : runners) r.close();
    }
}
