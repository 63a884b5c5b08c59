package dev.etcdmigrate.it.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Upgrades on real binaries, checked key by key with the target etcd afterwards. */
class UpgradeIT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    /** 3.4 to the newest with a few thousand keys, exactly one start per minor. */
    @Test
    void from34ToNewestInOneRunKeepsEveryKeyRevisionAndLease(@TempDir Path dir) throws Exception {
        assertUpgradeKeepsEverything(EtcdFixture.release("3.4.23"), dir, 3000);
    }

    /** Data freshly written by every older bundled line (each leaves different WAL entries) reaches the newest. */
    @ParameterizedTest(name = "{0} -> newest")
    @MethodSource("olderV3Releases")
    void everyOlderLineReachesTheNewest(Release from, @TempDir Path dir) throws Exception {
        assertUpgradeKeepsEverything(from, dir, 300);
    }

    static Stream<Release> olderV3Releases() {
        return EtcdFixture.V3_RELEASES.stream().filter(r -> !r.equals(EtcdFixture.newest()));
    }

    private void assertUpgradeKeepsEverything(Release from, Path dir, int keys) throws Exception {
        Release newest = EtcdFixture.newest();
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(from, data, keys);

        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, newest.version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            List<Release> chain = EtcdFixture.V3_RELEASES.subList(
                    EtcdFixture.V3_RELEASES.indexOf(from) + 1, EtcdFixture.V3_RELEASES.size());
            // one start per minor, plus one of the v2 checker (3.5) where data that saw 2.x/3.0 still holds v2 WAL
            // entries, and one of 3.6 first when the data starts at 3.6 (3.7 needs a snapshot taken after 3.5's last
            // entries)
            List<String> started = runner.events("etcd-started").stream()
                    .map(e -> e.path("version").asText())
                    .toList();
            List<JsonNode> purges = runner.events("v2-content-found");
            assertTrue(
                    purges.size() <= 1
                            && purges.stream().noneMatch(e -> e.path("remains").asBoolean()),
                    runner.output());
            purges.forEach(
                    p -> assertTrue(started.contains(p.path("checker").asText()), "the checker ran once: " + started));
            long snapshots = from.minorLine().toString().equals("3.6") ? 1 : 0;
            assertEquals(
                    chain.size() + purges.size() + snapshots,
                    started.size(),
                    "one start per minor: " + started + "\n" + runner.output());
            if (snapshots == 1) {
                assertEquals(
                        from.version(),
                        started.getFirst(),
                        "the snapshot run of " + from.version() + " comes first: " + started);
            }
            for (Release r : chain) {
                assertTrue(started.contains(r.version()), "etcd " + r.version() + " started: " + started);
            }
        }
        assertEquals(newest.version() + "/etcd3", Files.readString(data.resolve("version.txt")));

        EtcdFixture.Observed after = etcd.read(newest, data);
        assertEquals(Map.of(), before.differences(after.keyspace()), "keys, values and revisions");
        assertEquals(before.entries().size(), after.keyspace().entries().size());
        assertTrue(before.leasedKeys() >= keys / 10, "the sample has leased keys: " + before.leasedKeys());
        before.entries()
                .forEach((key, entry) -> assertEquals(
                        entry.lease(), after.keyspace().entries().get(key).lease(), "lease of " + key));
        assertEquals(before.leasedKeys(), after.keysWithLiveLease(), "every leased key keeps a live lease");
        after.leaseTtl().values().forEach(ttl -> assertTrue(ttl > 3000 && ttl <= 3600, "lease TTL " + ttl));
    }

    /**
     * Data that went through etcd 2.x or 3.0 keeps v2 entries in its WAL, which 3.6 refuses; here a v2 key
     * written and deleted on 3.0 leaves exactly that, and plain starts of 3.1-3.5 (no snapshot) carry them to
     * 3.5 data. The upgrade to 3.6 checks first (whatever wrote the 3.5 data may have left v2 entries after its
     * last snapshot), finds them, and gets past them with a fresh snapshot, data intact.
     */
    @Test
    void oldV2WalEntriesAreLeftBehindAFreshSnapshotBeforeThe36Step(@TempDir Path dir) throws Exception {
        Release v36 = EtcdFixture.release("3.6.16");
        Path data = dir.resolve("data");
        Keyspace before = seedWithOldV2WalEntries(data);
        for (String version : List.of("3.1.20", "3.2.32", "3.3.27", "3.4.23", "3.5.35")) {
            try (var server = etcd.start(EtcdFixture.release(version), data)) {
                server.stop(java.time.Duration.ofSeconds(20));
            }
        }
        new DataDir(data).writeVersion(dev.etcdmigrate.version.DataVersion.parse("3.5.35/etcd3"));
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, v36.version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            List<JsonNode> found = runner.events("v2-content-found");
            assertEquals(1, found.size(), "the WAL held v2 entries:\n" + runner.output());
            assertFalse(
                    found.getFirst().path("remains").asBoolean(), "gone after a fresh snapshot:\n" + runner.output());
            assertEquals(
                    0, runner.count("v2-content-refused"), "3.6 started only after the check:\n" + runner.output());
            assertEquals(
                    2,
                    runner.events("tool-ran").stream()
                            .filter(e -> e.path("args").toString().contains("v2store"))
                            .count(),
                    "checked, and checked again after the snapshot:\n" + runner.output());
        }
        etcd.assertMigratedTo(v36, data, before);
    }

    /**
     * The same data, taken from 3.0 to 3.6 in one run: the 3.5 step leaves a snapshot after its last entries,
     * so 3.6 starts first, finds nothing to refuse, and no `check v2store` runs at all.
     */
    @Test
    void oldV2WalEntriesNeverReach36WhenThe35StepLeavesASnapshot(@TempDir Path dir) throws Exception {
        Release v36 = EtcdFixture.release("3.6.16");
        Path data = dir.resolve("data");
        Keyspace before = seedWithOldV2WalEntries(data);
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, v36.version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            assertEquals(0, runner.count("v2-content-found"), runner.output());
            assertEquals(0, runner.count("v2-content-refused"), runner.output());
            List<String> started = runner.events("etcd-started").stream()
                    .map(e -> e.path("version").asText())
                    .toList();
            assertEquals(
                    List.of("3.1.20", "3.2.32", "3.3.27", "3.4.23", "3.5.35", "3.6.16"),
                    started,
                    "one start per minor");
            assertTrue(
                    runner.events("tool-ran").stream()
                            .noneMatch(e -> e.path("args").toString().contains("v2store")),
                    "no check ran:\n" + runner.output());
        }
        etcd.assertMigratedTo(v36, data, before);
    }

    /** 3.0 data with 300 keys and a v2 key written and deleted: v2 entries in the WAL, no v2 content left. */
    private Keyspace seedWithOldV2WalEntries(Path data) throws Exception {
        Release v30 = EtcdFixture.release("3.0.17");
        Keyspace before = etcd.seed(v30, data, 300);
        try (var server = etcd.start(v30, data)) {
            // top level: a nested key would leave its parent directory behind, which is v2 content
            assertEquals(201, EtcdFixture.v2(server, "PUT", "/legacy-flag", "on"));
            assertEquals(200, EtcdFixture.v2(server, "DELETE", "/legacy-flag", null));
            server.stop(java.time.Duration.ofSeconds(20));
        }
        return before;
    }

    /**
     * A live v2 key in 3.4 data, taken to 3.6 in one run: 3.5 carries it into its snapshot, 3.6 starts first and
     * refuses it at start, the check confirms real v2 keys, and the step stops with the data still 3.5 data:
     * 3.5 serves every key and the v2 key again.
     */
    @Test
    void aLiveV2KeyIsRefusedBy36AtStartAndThe35DataStaysWhole(@TempDir Path dir) throws Exception {
        Release v35 = EtcdFixture.release("3.5.35");
        Path data = dir.resolve("data");
        Keyspace before = seedWithLiveV2Key(EtcdFixture.release("3.4.23"), data, 60);
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, "3.6.16"))) {
            assertEquals(1, runner.exitCode(), runner.output());
            List<JsonNode> refused = runner.events("v2-content-refused");
            assertEquals(1, refused.size(), runner.output());
            assertEquals("3.6.16", refused.getFirst().path("etcd").asText());
            assertEquals("3.5.35", refused.getFirst().path("checker").asText());
            assertTrue(
                    v36Refusals().contains(refused.getFirst().path("refusal").asText()),
                    refused.getFirst().toString());
            assertTrue(
                    runner.events("v2-content-found").stream()
                            .anyMatch(e -> e.path("remains").asBoolean()),
                    runner.output());
            List<String> started = runner.events("etcd-started").stream()
                    .map(e -> e.path("version").asText())
                    .toList();
            assertEquals(
                    List.of("3.5.35", "3.6.16", "3.5.35"), started, "3.6 once, then 3.5's snapshot run of the check");
            List<JsonNode> failed = runner.events("step-failed");
            assertEquals(1, failed.size(), runner.output());
            assertEquals(2, failed.getFirst().path("index").asInt(), runner.output());
            assertEquals("3.5.35/etcd3", failed.getFirst().path("versionTxt").asText(), runner.output());
        }
        assertEquals("3.5.35/etcd3", Files.readString(data.resolve("version.txt")));
        assertEquals(
                Map.of(),
                before.differences(etcd.read(v35, data).keyspace()),
                "3.5 serves every key after 3.6 refused");
        try (var server = etcd.start(v35, data, "--enable-v2=true")) {
            assertEquals(200, EtcdFixture.v2(server, "GET", "/legacy/flag", null), "and the v2 key");
            server.stop(java.time.Duration.ofSeconds(20));
        }
    }

    /** Data written by {@code release} with {@code keys} sample keys and the v2 key /legacy/flag, which stays. */
    private Keyspace seedWithLiveV2Key(Release release, Path data, int keys) throws Exception {
        Keyspace before = etcd.seed(release, data, keys);
        try (var server = etcd.start(release, data, "--enable-v2=true")) {
            assertEquals(201, EtcdFixture.v2(server, "PUT", "/legacy/flag", "on"));
            server.stop(java.time.Duration.ofSeconds(20));
        }
        return before;
    }

    private static List<String> v36Refusals() {
        return EtcdFixture.release("3.6.16").line().v2Refusals();
    }

    /** A v2 key that still exists is real v2 data: the step to 3.6 refuses and the data stays at 3.5. */
    @Test
    void liveV2KeysStopTheUpgradeTo36(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        seedWithLiveV2Key(EtcdFixture.release("3.5.35"), data, 50);
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, "3.6.16"))) {
            assertEquals(1, runner.exitCode(), runner.output());
            assertEquals(1, runner.ending().path("exitCode").asInt(), runner.output());
            assertTrue(
                    runner.events("v2-content-found").stream()
                            .anyMatch(e -> e.path("remains").asBoolean()),
                    "v2 content remains after a fresh snapshot (live v2 keys):\n" + runner.output());
            List<JsonNode> failed = runner.events("step-failed");
            assertEquals(1, failed.size(), runner.output());
            assertEquals("minor-upgrade", failed.getFirst().path("kind").asText(), runner.output());
            assertEquals("3.5.35/etcd3", failed.getFirst().path("versionTxt").asText(), runner.output());
        }
        assertEquals("3.5.35/etcd3", Files.readString(data.resolve("version.txt")));
    }

    @Test
    void aPatchBelowTheFloorRunsTheBundledPatchFirst(@TempDir Path dir) throws Exception {
        // 3.6 needs 3.5.32+ to have run first; the data says 3.5.21 (written by the bundled 3.5).
        Release line35 = EtcdFixture.release("3.5.35");
        Release line36 = EtcdFixture.release("3.6.16");
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(line35, data, 500);
        new DataDir(data).writeVersion(dev.etcdmigrate.version.DataVersion.parse("3.5.21/etcd3"));

        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, line36.version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            assertEquals(
                    "3.5.21/etcd3",
                    runner.events("plan-made").getFirst().path("current").asText(),
                    runner.output());
            List<JsonNode> steps = runner.events("step-started");
            assertEquals(
                    List.of("1/2 patch-floor", "2/2 minor-upgrade"),
                    steps.stream()
                            .map(e -> e.path("index").asInt() + "/"
                                    + e.path("total").asInt() + " "
                                    + e.path("kind").asText())
                            .toList(),
                    runner.output());
            assertEquals(
                    List.of("1/2 3.5.35/etcd3", "2/2 3.6.16/etcd3"),
                    runner.events("step-finished").stream()
                            .map(e -> e.path("index").asInt() + "/"
                                    + e.path("total").asInt() + " "
                                    + e.path("versionTxt").asText())
                            .toList(),
                    runner.output());
            assertEquals(
                    List.of("3.5.35", "3.6.16"),
                    runner.events("etcd-started").stream()
                            .map(e -> e.path("version").asText())
                            .toList(),
                    "etcd 3.5.35 runs once on the 3.5.21 data, then 3.6.16:\n" + runner.output());
        }
        assertEquals("3.6.16/etcd3", Files.readString(data.resolve("version.txt")));
        assertEquals(Map.of(), before.differences(etcd.read(line36, data).keyspace()));
    }
}
