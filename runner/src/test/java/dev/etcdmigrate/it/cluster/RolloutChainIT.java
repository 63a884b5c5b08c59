package dev.etcdmigrate.it.cluster;

import static dev.etcdmigrate.it.support.Jetcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import io.etcd.jetcd.Auth;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What `plan` and `inspect` show a member of a real three-member cluster whose target is several minors away:
 * the chain of legs, each with its etcd, its steps, who decides its restart and what it waits for, up
 * (3.4 -> 3.7) and down (3.7 -> 3.5), for each member in turn (stopped, as the kubelet stops it for its new
 * manifest, while the two others serve); and a chain the cluster cannot take (3.4 -> 3.7 while the two other
 * members run 3.3, read from the cluster) refused by `plan` and `migrate` with exit 3 and nothing changed.
 *
 * <p>The members are plain etcd processes on loopback, one address each (127.0.0.1-3) with the same client and
 * peer ports, the layout of separate hosts: the runner finds the other members as it does in production, from
 * --initial-cluster's hosts and its own client port.
 */
class RolloutChainIT {

    private static final Duration DEADLINE = Duration.ofMinutes(2);
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Release line(String line) {
        return ClusterLab.line(line);
    }

    @Test
    void eachMemberSeesTheChainUp(@TempDir Path dir) throws Exception {
        Release from = line("3.4");
        Release to = EtcdFixture.newest();
        try (Trio cluster = new Trio(dir, from)) {
            for (int i = 0; i < 3; i++) {
                cluster.stop(i);
                Map<String, String> before = TreeDigest.of(cluster.data(i));
                JsonNode plan = cluster.planJson(i, to);
                assertEquals(from.version() + "/etcd3", plan.path("current").asText(), plan.toString());
                JsonNode legs = plan.path("legs");
                assertEquals(3, legs.size(), plan.toString());
                assertLegs(legs, List.of("3.4", "3.5", "3.6", "3.7"), "upgrade");
                assertEquals(
                        List.of(line("3.5").version(), line("3.6").version(), to.version()), texts(legs, "serves"));
                assertEquals(List.of("", "", ""), texts(legs, "downgradeJob"));
                assertEquals(List.of("3.5", "3.6", ""), texts(legs, "waitsForClusterVersion"));
                assertEquals(List.of(1, 2, 3), numbers(legs, "firstStep"));
                assertEquals(
                        plan.path("steps").size(), legs.get(2).path("lastStep").asInt());
                for (JsonNode leg : legs)
                    assertEquals(0, leg.path("patchFloors").size(), leg.toString());
                assertSameAsInspect(cluster, i, to, plan);
                assertTextShowsTheLegs(cluster, i, to, legs);
                assertEquals(before, TreeDigest.of(cluster.data(i)), "plan and inspect change nothing");
                cluster.start(i, from); // back before the next member stops: two serve at every instant
            }
        }
    }

    @Test
    void eachMemberSeesTheChainDown(@TempDir Path dir) throws Exception {
        Release from = EtcdFixture.newest();
        Release to = line("3.5");
        try (Trio cluster = new Trio(dir, from)) {
            for (int i = 0; i < 3; i++) {
                cluster.stop(i);
                Map<String, String> before = TreeDigest.of(cluster.data(i));
                JsonNode plan = cluster.planJson(i, to);
                JsonNode legs = plan.path("legs");
                assertEquals(2, legs.size(), plan.toString());
                assertLegs(legs, List.of("3.7", "3.6", "3.5"), "downgrade");
                assertEquals(List.of(line("3.6").version(), to.version()), texts(legs, "serves"));
                assertEquals(List.of("3.6", "3.5"), texts(legs, "downgradeJob"), "one downgrade job per minor");
                assertEquals(List.of("3.6", ""), texts(legs, "waitsForClusterVersion"));
                assertEquals(List.of(1, 2), numbers(legs, "firstStep"));
                assertSameAsInspect(cluster, i, to, plan);
                assertTextShowsTheLegs(cluster, i, to, legs);
                assertEquals(before, TreeDigest.of(cluster.data(i)), "plan and inspect change nothing");
                cluster.start(i, from);
            }
        }
    }

    /**
     * m0 went first in a 3.4 -> 3.7 rollout and was restarted between its legs (its pod killed, its node rebooted)
     * before the other members were edited: its data is at 3.5, the others still run 3.4. Its runner must not refuse
     * (that would keep the member out of service for good, crash-looping): it serves 3.5 and waits for the others,
     * as it did before the restart. A chain another member cannot take is refused (MultiMemberIT: one two minors
     * behind).
     */
    @Test
    void aMemberRestartedBetweenItsLegsWaitsServingForTheOthers(@TempDir Path dir) throws Exception {
        restartedBetweenLegs(dir, true);
    }

    /**
     * The same without version.txt (a member whose data the runner never labelled, or kubeadm's data): the data
     * reads as its line's lowest patch, which is not bundled; the member serves its line with the bundled release of
     * that line while it waits, rather than stay out of service.
     */
    @Test
    void anUnlabelledMemberRestartedBetweenItsLegsWaitsServingItsLine(@TempDir Path dir) throws Exception {
        restartedBetweenLegs(dir, false);
    }

    private static void restartedBetweenLegs(Path dir, boolean labelled) throws Exception {
        Release v34 = line("3.4");
        Release to = EtcdFixture.newest();
        try (Trio cluster = new Trio(dir, v34)) {
            cluster.stop(0);
            cluster.start(0, line("3.5")); // its first leg
            cluster.stop(0); // and the restart between legs
            if (!labelled) Files.delete(cluster.data(0).resolve("version.txt"));
            Map<String, String> before = TreeDigest.of(cluster.data(0));
            JsonNode plan = cluster.planJson(0, to);
            assertEquals(2, plan.path("legs").size(), plan.toString());
            assertEquals(before, TreeDigest.of(cluster.data(0)), "plan changes nothing");
            try (RunnerProcess migrate = RunnerProcess.start(
                    cluster.runner("migrate", 0, to, "--no-exec", "--log-format", "json"), Map.of())) {
                JsonNode waiting = migrate.awaitEvent(
                        "rollout-waiting", e -> e.toString().contains(v34.version()), Duration.ofMinutes(2));
                assertTrue(waiting.toString().contains("m1"), waiting.toString());
                cluster.awaitHealthy(0); // serving its data's line meanwhile
                assertEquals(0, migrate.count("refused"), migrate.output());
                assertEquals(1, migrate.count("rollout-chain-planned"), migrate.output());
            }
            for (int i = 1; i < 3; i++) cluster.awaitHealthy(i);
        }
    }

    /**
     * etcd's auth enabled while every member runs: this member's own db records it (etcd replicates the flag), so
     * plan and migrate refuse from the db before asking anyone, with exit 3 and nothing changed.
     */
    @Test
    void authEnabledInTheRunningClusterIsRefusedByPlanAndMigrate(@TempDir Path dir) throws Exception {
        Release from = line("3.5");
        Release to = EtcdFixture.newest();
        try (Trio cluster = new Trio(dir, from)) {
            cluster.enableAuth(0);
            cluster.stop(0);
            assertRefusedUpFront(cluster, to, "bucket auth");
        }
    }

    /**
     * etcd's auth enabled after this member stopped (its db does not know): the other members refuse the read of the
     * restart record without credentials, and plan and migrate refuse from that answer, before anything changes.
     */
    @Test
    void authEnabledAfterThisMemberStoppedIsRefusedFromTheCluster(@TempDir Path dir) throws Exception {
        Release from = line("3.5");
        Release to = EtcdFixture.newest();
        try (Trio cluster = new Trio(dir, from)) {
            cluster.stop(0);
            cluster.enableAuth(1);
            assertRefusedUpFront(cluster, to, "etcd's auth enabled");
        }
    }

    private static void assertRefusedUpFront(Trio cluster, Release to, String why) throws Exception {
        Map<String, String> before = TreeDigest.of(cluster.data(0));
        try (RunnerProcess plan = RunnerProcess.run(cluster.runner("plan", 0, to, "-o", "json"))) {
            assertEquals(3, plan.exitCode(), plan.output());
            String reason = plan.ending().path("reason").asText();
            assertTrue(reason.contains(why), reason); // nothing changed: the digest below
        }
        try (RunnerProcess migrate =
                RunnerProcess.run(cluster.runner("migrate", 0, to, "--no-exec", "--log-format", "json"))) {
            assertEquals(3, migrate.exitCode(), migrate.output());
            JsonNode ending = migrate.ending();
            assertEquals("refused", ending.path("event").asText(), migrate.output());
            assertTrue(ending.path("reason").asText().contains(why), ending.toString());
            assertEquals(0, migrate.count("etcd-started"), "no etcd was started:\n" + migrate.output());
            assertEquals(0, migrate.count("rollout-chain-planned"), migrate.output());
        }
        assertEquals(before, TreeDigest.of(cluster.data(0)), "byte-identical");
        for (int i = 1; i < 3; i++) cluster.awaitHealthy(i);
    }

    private static void assertLegs(JsonNode legs, List<String> lines, String direction) {
        for (int k = 0; k < legs.size(); k++) {
            JsonNode leg = legs.get(k);
            assertEquals(k + 1, leg.path("index").asInt());
            assertEquals(lines.get(k), leg.path("from").asText(), leg.toString());
            assertEquals(lines.get(k + 1), leg.path("to").asText(), leg.toString());
            assertEquals(direction, leg.path("direction").asText());
            assertEquals(
                    k == 0 ? "at-once" : "restart-record", leg.path("restart").asText(), leg.toString());
            assertEquals("/etcd-migrate/rollout/restart", leg.path("recordKey").asText());
            assertEquals(
                    k == legs.size() - 1 ? "exec" : "serve", leg.path("then").asText(), leg.toString());
        }
    }

    /** inspect's target shows the same legs and steps as plan. */
    private static void assertSameAsInspect(Trio cluster, int i, Release to, JsonNode plan) throws Exception {
        try (RunnerProcess inspect = RunnerProcess.run(cluster.runner("inspect", i, to, "-o", "json"))) {
            assertEquals(0, inspect.exitCode(), inspect.output());
            JsonNode shown = target(report(inspect), to);
            assertEquals(plan.path("legs"), shown.path("legs"), "inspect's legs are plan's");
            List<String> planned = new ArrayList<>();
            plan.path("steps").forEach(s -> planned.add(s.path("description").asText()));
            List<String> listed = new ArrayList<>();
            shown.path("steps").forEach(s -> listed.add(s.asText()));
            assertEquals(planned, listed);
        }
    }

    /** The text of plan and inspect: one line per leg, naming its lines and the etcd it reaches. */
    private static void assertTextShowsTheLegs(Trio cluster, int i, Release to, JsonNode legs) throws Exception {
        for (String command : List.of("plan", "inspect")) {
            try (RunnerProcess runner = RunnerProcess.run(cluster.runner(command, i, to))) {
                assertEquals(0, runner.exitCode(), runner.output());
                List<String> lines = runner.output().lines().map(String::strip).toList();
                if (command.equals("inspect")) {
                    // every target is listed: the legs under this one's entry
                    int at = lines.indexOf(lines.stream()
                            .filter(l -> l.startsWith("- " + to.version() + "/etcd3:"))
                            .findFirst()
                            .orElseThrow(() -> new AssertionError(runner.output())));
                    lines = lines.subList(at + 1, lines.size()).stream()
                            .takeWhile(l -> !l.startsWith("- "))
                            .toList();
                }
                List<String> shown =
                        lines.stream().filter(l -> l.startsWith("leg ")).toList();
                assertEquals(legs.size(), shown.size(), command + ":\n" + runner.output());
                for (int k = 0; k < legs.size(); k++) {
                    JsonNode leg = legs.get(k);
                    String text = shown.get(k);
                    assertTrue(
                            text.startsWith(
                                    "leg " + (k + 1) + ": " + leg.path("from").asText() + " -> "
                                            + leg.path("to").asText()),
                            text);
                    assertTrue(text.contains(leg.path("serves").asText()), text);
                    if (k > 0) assertTrue(text.contains(leg.path("recordKey").asText()), text);
                }
            }
        }
    }

    private static JsonNode report(RunnerProcess inspect) throws Exception {
        return JSON.readTree(inspect.output()
                .lines()
                .filter(l -> l.startsWith("{\"schema\""))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no report: " + inspect.output())));
    }

    private static JsonNode target(JsonNode report, Release to) {
        for (JsonNode t : report.path("targets")) {
            if (t.path("version").asText().equals(to.version())
                    && t.path("storage").asText().equals("etcd3")) return t;
        }
        throw new AssertionError("no target " + to.version() + " in " + report);
    }

    private static List<String> texts(JsonNode legs, String field) {
        List<String> out = new ArrayList<>();
        legs.forEach(l -> out.add(l.path(field).asText()));
        return out;
    }

    private static List<Integer> numbers(JsonNode legs, String field) {
        List<Integer> out = new ArrayList<>();
        legs.forEach(l -> out.add(l.path(field).asInt()));
        return out;
    }

    /**
     * Three etcd members m0-m2 on 127.0.0.1-3, the same client and peer port on each, http ({@link ClusterLab}'s
     * loopback hosts, plain etcd processes); each data dir with the version.txt a runner would have written.
     * {@link #close()} stops (and reaps) every etcd it started.
     */
    private static final class Trio implements AutoCloseable {
        private final Path dir;
        private final ClusterLab lab;
        private final Process[] etcds = new Process[3];

        Trio(Path dir, Release release) throws Exception {
            this.dir = dir;
            this.lab = ClusterLab.create(dir, 3, ClusterLab.Layout.LOOPBACK_HOSTS, "chain-it", ClusterLab.Tls.NONE);
            try {
                for (int i = 0; i < 3; i++) {
                    Permissions.ownerOnlyDir(data(i));
                    etcds[i] = lab.startEtcd(member(i), release, log(i));
                }
                for (int i = 0; i < 3; i++) awaitHealthy(i);
                for (int i = 0; i < 3; i++) record(i, release);
            } catch (Exception | AssertionError e) {
                close();
                throw e;
            }
        }

        private ClusterLab.Member member(int i) {
            return lab.members().get(i);
        }

        private Path log(int i) {
            return dir.resolve("m" + i + ".log");
        }

        Path data(int i) {
            return member(i).data();
        }

        String clientUrl(int i) {
            return member(i).clientUrl();
        }

        /** The member (re)started at {@code release}, serving, its version.txt saying so. */
        void start(int i, Release release) throws Exception {
            etcds[i] = lab.startEtcd(member(i), release, log(i));
            awaitHealthy(i);
            record(i, release);
        }

        private void record(int i, Release release) throws IOException {
            new DataDir(data(i)).writeVersion(new DataVersion(release.etcdVersion(), StorageApi.ETCD3));
        }

        void stop(int i) throws Exception {
            if (etcds[i] == null) return;
            lab.stopEtcd(etcds[i]);
            etcds[i] = null;
        }

        void awaitHealthy(int i) throws Exception {
            HttpClient http = HttpClient.newBuilder()
                    .connectTimeout(Duration.ofSeconds(2))
                    .build();
            HttpRequest request = HttpRequest.newBuilder(URI.create(clientUrl(i) + "/health"))
                    .timeout(Duration.ofSeconds(2))
                    .GET()
                    .build();
            Poll.untilTrue(DEADLINE, Duration.ofMillis(100), "m" + i + " healthy at " + clientUrl(i), () -> {
                if (etcds[i] != null && !etcds[i].isAlive()) fail("m" + i + " exited; see " + log(i));
                HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
                if (answer.statusCode() == 200
                        && JSON.readTree(answer.body()).path("health").asText().equals("true")) return true;
                throw new IOException(answer.statusCode() + " " + answer.body());
            });
        }

        /** The runner's command line for member i, its etcd arguments after "--" as its manifest would give them. */
        List<String> runner(String command, int i, Release target, String... flags) {
            return lab.runnerArgs(command, member(i), target, flags);
        }

        /** etcd's auth enabled through member i (a root user, as `etcdctl user add root; auth enable` make it). */
        void enableAuth(int i) throws Exception {
            try (Client client = Client.builder().endpoints(clientUrl(i)).build()) {
                Auth auth = client.getAuthClient();
                auth.userAdd(bytes("root"), bytes("root-pw")).get(30, TimeUnit.SECONDS);
                auth.roleAdd(bytes("root")).get(30, TimeUnit.SECONDS);
                auth.userGrantRole(bytes("root"), bytes("root")).get(30, TimeUnit.SECONDS);
                auth.authEnable().get(30, TimeUnit.SECONDS);
            }
        }

        JsonNode planJson(int i, Release target) throws Exception {
            try (RunnerProcess plan = RunnerProcess.run(runner("plan", i, target, "-o", "json"))) {
                assertEquals(0, plan.exitCode(), plan.output());
                return JSON.readTree(plan.output()
                        .lines()
                        .filter(l -> l.startsWith("{\"current\""))
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("no plan: " + plan.output())));
            }
        }

        @Override
        public void close() throws Exception {
            for (int i = 0; i < 3; i++) stop(i);
            lab.close();
        }
    }
}
