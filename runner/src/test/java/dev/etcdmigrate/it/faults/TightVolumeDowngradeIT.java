package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.it.support.Ballast;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Mount;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * An online downgrade on a tight volume: room for the member dir's backup and 32 MB more. Without a space check the
 * backup fits, etcd then meets ENOSPC preallocating a 64 MB WAL segment, and the kept backup leaves the original etcd
 * no room to start again; so the step is refused before anything is written: exit 1, the data dir byte-identical, and
 * the original etcd serves every key. With room, the same run completes.
 */
class TightVolumeDowngradeIT {

    private static final Release FROM = EtcdFixture.release("3.7.3");
    private static final Release TO = EtcdFixture.release("3.6.16");

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void refusedUpFrontThenTheOriginalStartsAndWithRoomItCompletes(@TempDir Path dir) throws Exception {
        Path fs = Files.createDirectories(dir.resolve("fs"));
        try (Mount tmpfs = Mount.tmpfs(fs, 512)) {
            Path data = fs.resolve("data");
            Keyspace before = etcd.seed(FROM, data, 500);
            long member = Ballast.sizeOf(data.resolve("member"));
            Path ballast = Ballast.fill(
                    fs.resolve("ballast"), Files.getFileStore(fs).getUsableSpace() - member - 32 * Ballast.MB);
            Map<String, String> digest = TreeDigest.of(data);

            try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, TO.version()))) {
                assertEquals(1, runner.exitCode(), runner.output());
                assertEquals(1, runner.ending().path("exitCode").asInt(), runner.output());
                List<JsonNode> checked = runner.events("space-checked");
                assertEquals(1, checked.size(), runner.output());
                JsonNode space = checked.getFirst();
                assertTrue(
                        space.path("forWhat").asText().contains(TO.version()),
                        "the downgrade to " + TO.version() + ":\n" + runner.output());
                assertEquals(data.toString(), space.path("dir").asText(), runner.output());
                assertTrue(
                        space.path("neededBytes").asLong() > member + 32 * Ballast.MB,
                        "more than is free:\n" + runner.output());
                List<JsonNode> failed = runner.events("step-failed");
                assertEquals(1, failed.size(), runner.output());
                assertEquals("online-downgrade", failed.getFirst().path("kind").asText(), runner.output());
                assertEquals(
                        FROM.version() + "/etcd3",
                        failed.getFirst().path("versionTxt").asText(),
                        runner.output());
                String reason = runner.ending().path("reason").asText();
                assertTrue(
                        reason.contains(data.toString()) && reason.contains("--backup-dir"),
                        "where, and the way out:\n" + runner.output());
                // refused before anything was written: no backup, no etcd
                assertEquals(0, runner.count("backup-made"), runner.output());
                assertEquals(0, runner.count("etcd-started"), runner.output());
            }
            assertEquals(digest, TreeDigest.of(data), "byte-identical: no backup, no lock left");
            // the original etcd starts on the tight volume and serves every key
            assertEquals(Map.of(), before.differences(etcd.read(FROM, data).keyspace()), "served by " + FROM.version());

            Files.delete(ballast);
            try (RunnerProcess rerun = RunnerProcess.run(RunnerArgs.migrate(data, TO.version()))) {
                assertEquals(0, rerun.exitCode(), rerun.output());
            }
            assertEquals(TO.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
            assertEquals(Map.of(), before.differences(etcd.read(TO, data).keyspace()), "served by " + TO.version());
        }
    }
}
