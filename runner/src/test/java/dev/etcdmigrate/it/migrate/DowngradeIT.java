package dev.etcdmigrate.it.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** One-minor downgrades by each method, and the whole chain, checked key by key and revision by revision. */
class DowngradeIT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    /** Every pair of neighbouring etcd3 lines where the newer one has a way back. */
    static Stream<Arguments> oneMinorBack() {
        var releases = EtcdFixture.V3_RELEASES;
        return java.util.stream.IntStream.range(1, releases.size())
                .filter(i -> releases.get(i).line().downgrade().method() != Release.DowngradeMethod.NONE)
                .mapToObj(i -> Arguments.of(releases.get(i), releases.get(i - 1)));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("oneMinorBack")
    void oneMinorBackKeepsEveryKeyAndRevision(Release from, Release to, @TempDir Path dir) throws Exception {
        assertDowngrade(from, to, dir, 1);
    }

    @Test
    void newestToOldestChainsOneMinorAtATime(@TempDir Path dir) throws Exception {
        assertDowngrade(EtcdFixture.newest(), EtcdFixture.oldest(), dir, EtcdFixture.V3_RELEASES.size() - 1);
    }

    /** A chain down three minors: 3.7 to 3.4, through both downgrade methods. */
    @Test
    void from37To34ChainsOneMinorAtATime(@TempDir Path dir) throws Exception {
        assertDowngrade(EtcdFixture.release("3.7.3"), EtcdFixture.release("3.4.23"), dir, 3);
    }

    /**
     * 3.6 -> 3.5 -> 3.6 on one member: the downgrade leaves no job behind although 3.5's Maintenance/Status does not
     * report one, so the way back up reaches cluster version 3.6, not an etcd 3.6 held at 3.5 by a job that can no
     * longer end (its target is below the member's line).
     */
    @Test
    void downAndUpAgainLeavesNoDowngradeJob(@TempDir Path dir) throws Exception {
        Release newer = EtcdFixture.release("3.6.16");
        Release older = EtcdFixture.release("3.5.35");
        Path data = dir.resolve("data");
        etcd.seed(newer, data, 100);
        migrate(data, older);
        // its leader checks once an hour here: a job still recorded would still be there
        try (PrivateEtcd e = etcd.start(older, data, older.line().downgradeCheckFlag() + "=1h")) {
            assertEquals(java.util.Optional.empty(), e.gateway().unreportedDowngradeJob(), "no job after the step");
            e.stop(Duration.ofSeconds(20));
        }
        migrate(data, newer);
        try (PrivateEtcd e = etcd.start(newer, data)) {
            Poll.untilTrue(
                    Duration.ofSeconds(30),
                    Duration.ofMillis(100),
                    "etcd 3.6 reports cluster version 3.6",
                    () -> e.gateway().version().path("etcdcluster").asText("").startsWith("3.6."));
            assertFalse(
                    e.gateway().status().path("downgradeInfo").path("enabled").asBoolean(false));
            e.stop(Duration.ofSeconds(20));
        }
    }

    /**
     * A single member whose data records a downgrade job that never ended (enabled on 3.6 with etcdctl, then the pod
     * edited up): the runner refuses the upgrade before any etcd runs and changes nothing; finishing the downgrade
     * ends the job, and the way up is open again to cluster version 3.7. Without the refusal the steps ran 3.6 and
     * 3.7 on it, the job lowered the cluster version to 3.5 for good, and version.txt said 3.7.3.
     */
    @Test
    void anUnendedDowngradeJobRefusesTheWayUpUntilItIsFinished(@TempDir Path dir) throws Exception {
        Release newer = EtcdFixture.release("3.6.16");
        Release older = EtcdFixture.release("3.5.35");
        Release newest = EtcdFixture.release("3.7.3");
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(newer, data, 100);
        try (PrivateEtcd e = etcd.start(newer, data)) {
            java.net.http.HttpResponse<String> enabled = java.net.http.HttpClient.newHttpClient()
                    .send(
                            java.net.http.HttpRequest.newBuilder(
                                            e.gateway().baseUrl().resolve("/v3/maintenance/downgrade"))
                                    .POST(java.net.http.HttpRequest.BodyPublishers.ofString(
                                            "{\"action\":\"ENABLE\",\"version\":\"3.5\"}"))
                                    .build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString());
            assertEquals(200, enabled.statusCode(), enabled.body());
            e.stop(Duration.ofSeconds(20));
        }
        Map<String, String> untouched = TreeDigest.of(data);
        try (RunnerProcess refused = RunnerProcess.run(RunnerArgs.migrate(data, newest.version()))) {
            assertEquals(3, refused.exitCode(), refused.output());
            assertEquals(0, refused.count("etcd-started"), refused.output());
        }
        assertEquals(untouched, TreeDigest.of(data), "byte-identical after the refusal");

        migrate(data, older);
        migrate(data, newest);
        try (PrivateEtcd e = etcd.start(newest, data)) {
            Poll.untilTrue(
                    Duration.ofSeconds(30),
                    Duration.ofMillis(100),
                    "etcd 3.7 reports cluster version 3.7",
                    () -> e.gateway().version().path("etcdcluster").asText("").startsWith("3.7."));
            e.stop(Duration.ofSeconds(20));
        }
        assertEquals(Map.of(), before.differences(etcd.read(newest, data).keyspace()), "keys and values");
    }

    private static void migrate(Path data, Release to) throws Exception {
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, to.version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
        }
    }

    private void assertDowngrade(Release from, Release to, Path dir, int steps) throws Exception {
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(from, data, 1000);
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, to.version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            List<JsonNode> plans = runner.events("plan-made");
            assertEquals(1, plans.size(), runner.output());
            assertEquals(steps, plans.getFirst().path("steps").size(), "planned steps:\n" + runner.output());
            List<JsonNode> finished = runner.events("step-finished");
            assertEquals(steps, finished.size(), runner.output());
            for (int i = 0; i < steps; i++) {
                assertEquals(i + 1, finished.get(i).path("index").asInt(), runner.output());
                assertEquals(steps, finished.get(i).path("total").asInt(), runner.output());
            }
            assertEquals(
                    to.version() + "/etcd3",
                    finished.getLast().path("versionTxt").asText(),
                    runner.output());
        }
        assertEquals(to.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(data)));
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(data.resolve("member"))));

        EtcdFixture.Observed after = etcd.read(to, data);
        assertEquals(Map.of(), before.differences(after.keyspace()), "keys, values and revisions");
        before.entries()
                .forEach((key, entry) -> assertEquals(
                        entry.lease(), after.keyspace().entries().get(key).lease(), "lease of " + key));
        if (after.leasesTimed()) {
            assertEquals(before.leasedKeys(), after.keysWithLiveLease(), "leased keys keep a live lease");
        }
        // restarted again, the older etcd must not replay the newer cluster version (etcd issue 11716)
        assertEquals(Map.of(), before.differences(etcd.read(to, data).keyspace()), "after a second restart");
        assertTrue(Files.notExists(data.resolve(".etcd-migrate/staging")), "no staging left");
        assertTrue(Files.notExists(data.resolve(".etcd-migrate/snapshot")), "no snapshot left");
    }
}
