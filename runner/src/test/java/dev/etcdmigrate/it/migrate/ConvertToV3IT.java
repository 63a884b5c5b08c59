package dev.etcdmigrate.it.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.V2Dataset;
import dev.etcdmigrate.version.DataVersion;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** etcd2 data written through /v2/keys on 3.4 carried to the newest etcd3, checked key by key. */
public class ConvertToV3IT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void etcd2DataAt34ReachesTheNewestEtcd3WithEveryKeyRevisionAndTtl(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        V2Dataset written = writeEtcd2(data, 10_000);
        try (RunnerProcess runner =
                RunnerProcess.run(RunnerArgs.migrate(data, EtcdFixture.newest().version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            List<JsonNode> read = runner.events("v2-store-read");
            assertEquals(1, read.size(), runner.output());
            assertEquals(
                    written.live().size(), read.getFirst().path("keys").asLong(), "live keys:\n" + runner.output());
            assertEquals(
                    written.live().keySet().stream()
                            .filter(dev.etcdmigrate.ondisk.V2Key::isHidden)
                            .count(),
                    read.getFirst().path("hidden").asLong(),
                    "hidden keys:\n" + runner.output());
            // the one key whose TTL ran out is dropped: by the conversion, or already by etcd2's own expiry when it ran
            // on the copy
            assertTrue(read.getFirst().path("expired").asLong() <= 1, "expired keys:\n" + runner.output());
            assertEquals(
                    0, runner.count("v2-content-found"), "no v2 content left for 3.6 to refuse:\n" + runner.output());
            assertEquals(0, runner.count("v2-content-refused"), "nor did 3.6 refuse any:\n" + runner.output());
            List<JsonNode> finished = runner.events("step-finished");
            assertEquals(4, finished.size(), runner.output());
            assertEquals(4, finished.getLast().path("index").asInt(), runner.output());
            assertEquals(4, finished.getLast().path("total").asInt(), runner.output());
        }
        assertEquals(EtcdFixture.newest().version() + "/etcd3", Files.readString(data.resolve("version.txt")));
        assertCarried(written, etcd.read(EtcdFixture.newest(), data));
    }

    /** From the oldest bundled line: etcd2 upgrades with v2 probes (2.2 -> ... -> 3.4), the conversion, then etcd3. */
    @Test
    void etcd2DataOf22ReachesTheNewestEtcd3(@TempDir Path dir) throws Exception {
        Release oldest = EtcdFixture.CATALOG.releases().getFirst();
        Path data = dir.resolve("data");
        V2Dataset written = writeEtcd2(etcd, oldest, data, 500);
        try (RunnerProcess runner =
                RunnerProcess.run(RunnerArgs.migrate(data, EtcdFixture.newest().version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            // one step takes the etcd2 data from 2.3.8 to 3.0.17, still etcd2
            List<String> recorded = runner.events("step-finished").stream()
                    .map(e -> e.path("versionTxt").asText())
                    .toList();
            int at = recorded.indexOf("2.3.8/etcd2");
            assertTrue(
                    at >= 0 && at + 1 < recorded.size() && recorded.get(at + 1).equals("3.0.17/etcd2"),
                    recorded + "\n" + runner.output());
        }
        assertEquals(EtcdFixture.newest().version() + "/etcd3", Files.readString(data.resolve("version.txt")));
        assertCarried(written, etcd.read(EtcdFixture.newest(), data));
    }

    /** SIGKILL at moments inside the conversion, then a rerun: it converges and nothing is lost. */
    @ParameterizedTest(name = "killed {0}")
    @ValueSource(
            strings = {
                "after the member copy",
                "after etcdctl migrate",
                "after the lease re-attachment",
                "on the restored member"
            })
    void killedDuringTheConversionThenRerunConverges(String moment, @TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        V2Dataset written = writeEtcd2(data, 300);
        String target = "3.4.23";
        try (RunnerProcess runner = RunnerProcess.start(RunnerArgs.migrate(data, target), Map.of())) {
            awaitMoment(runner, moment, target);
            runner.killHard();
        }
        assertEquals("3.4.23/etcd2", Files.readString(data.resolve("version.txt")), "the conversion had not completed");
        try (RunnerProcess rerun = RunnerProcess.run(RunnerArgs.migrate(data, target))) {
            assertEquals(0, rerun.exitCode(), rerun.output());
        }
        assertEquals(target + "/etcd3", Files.readString(data.resolve("version.txt")));
        assertCarried(written, etcd.read(EtcdFixture.release(target), data));
    }

    /** Waits for the conversion to reach the moment (see the parameters above). */
    private static void awaitMoment(RunnerProcess runner, String moment, String target) throws InterruptedException {
        Duration deadline = Duration.ofMinutes(2);
        switch (moment) {
            case "after the member copy" ->
                runner.awaitEvent("work-copied", e -> e.path("to").asText().endsWith("/staging/work"), deadline);
            // etcd starts on the work copy twice: to snapshot the v2 store, then (right after `etcdctl migrate` exited)
            // for the fix-ups
            case "after etcdctl migrate" ->
                runner.awaitEvent(
                        "etcd-started",
                        e -> runner.events("etcd-started").stream()
                                        .filter(s -> s.path("dataDir").asText().endsWith("/staging/work"))
                                        .count()
                                >= 2,
                        deadline);
            case "after the lease re-attachment" -> runner.awaitEvent("keys-loaded", deadline);
            case "on the restored member" ->
                runner.awaitEvent(
                        "etcd-started",
                        e -> e.path("version").asText().equals(target)
                                && e.path("dataDir").asText().endsWith("/staging/data"),
                        deadline);
            default -> throw new IllegalArgumentException(moment);
        }
    }

    private V2Dataset writeEtcd2(Path data, int plainKeys) throws Exception {
        return writeEtcd2(etcd, EtcdFixture.release("3.4.23"), data, plainKeys);
    }

    /** etcd2 data written by {@code release} through /v2/keys, version.txt recorded, the short TTL run out. */
    public static V2Dataset writeEtcd2(EtcdFixture etcd, Release release, Path data, int plainKeys) throws Exception {
        Permissions.ownerOnlyDir(data);
        V2Dataset written;
        try (PrivateEtcd server = etcd.startEtcd2(release, data)) {
            written = V2Dataset.write(server, plainKeys);
            server.stop(Duration.ofSeconds(20));
        }
        new DataDir(data).writeVersion(DataVersion.parse(release.version() + "/etcd2"));
        // the one-second TTL key must have run out before the conversion reads the store
        Instant expired = written.keys.get(written.expiredKey).at().plusMillis(1500);
        Poll.untilTrue(
                Duration.ofSeconds(5),
                Duration.ofMillis(50),
                "the TTL key's expiry to pass",
                () -> !Instant.now().isBefore(expired));
        return written;
    }

    /** Every live v2 key served by etcd3 with its value, a lease for each TTL, v2 indexes as revisions. */
    public static void assertCarried(V2Dataset written, EtcdFixture.Observed observed) {
        Keyspace keyspace = observed.keyspace();
        Map<String, V2Dataset.Written> live = written.live();
        assertEquals(live.keySet(), keyspace.entries().keySet(), "the key set (the expired key gone, nothing added)");
        Instant now = Instant.now();
        live.forEach((key, v2) -> {
            Keyspace.Entry v3 = keyspace.entries().get(key);
            assertEquals(v2.value(), new String(v3.value(), StandardCharsets.UTF_8), "value of " + key);
            boolean leased = v2.ttl() > 0 || key.startsWith(V2Dataset.TTL_DIR + "/");
            if (leased) {
                assertNotEquals(0, v3.lease(), key + " has a lease");
                long ttl = observed.leaseTtl().get(v3.lease());
                long expected = v2.ttl() > 0 ? v2.ttl() : 3600;
                long elapsed = Duration.between(v2.at(), now).toSeconds();
                assertTrue(
                        ttl >= expected - elapsed - 3 && ttl <= expected + 2,
                        key + ": lease TTL " + ttl + " s for a v2 TTL of " + expected + " s written " + elapsed
                                + " s ago");
            } else {
                assertEquals(0, v3.lease(), key + " has no lease");
            }
            if (!leased && !dev.etcdmigrate.ondisk.V2Key.isHidden(key)) {
                assertEquals(
                        v2.createdIndex(), v3.createRevision(), "create revision of " + key + " = v2 created index");
                assertEquals(v2.modifiedIndex(), v3.modRevision(), "mod revision of " + key + " = v2 modified index");
            }
        });
    }
}
