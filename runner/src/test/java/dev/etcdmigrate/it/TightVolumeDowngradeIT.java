package dev.etcdmigrate.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An online downgrade on a tight volume (issue 10 item 7): room for the member dir's backup and 32 MB
 * more. Before the space check the backup fitted, etcd then met ENOSPC preallocating a 64 MB WAL
 * segment, and the kept backup left the original etcd no room to start again. Now the step is refused
 * before anything is written: exit 1, the data dir byte-identical, and the original etcd serves every
 * key. With room, the same run completes.
 */
class TightVolumeDowngradeIT {

    private static final Release FROM = EtcdFixture.release("3.7.3");
    private static final Release TO = EtcdFixture.release("3.6.16");

    private final EtcdFixture etcd = new EtcdFixture();

    @AfterEach
    void stopAll() {
        etcd.close();
    }

    @Test
    void refusedUpFrontThenTheOriginalStartsAndWithRoomItCompletes(@TempDir Path dir) throws Exception {
        Path fs = Files.createDirectories(dir.resolve("fs"));
        try (Mount tmpfs = Mount.tmpfs(fs, 512)) {
            Path data = fs.resolve("data");
            Keyspace before = etcd.seed(FROM, data, 500);
            long member = Ballast.sizeOf(data.resolve("member"));
            Path ballast = Ballast.fill(fs.resolve("ballast"), Files.getFileStore(fs).getUsableSpace() - member - 32 * Ballast.MB);
            Map<String, String> digest = TreeDigest.of(data);

            try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, TO.version()))) {
                assertEquals(1, runner.exitCode(), runner.output());
                assertTrue(runner.output().contains("the downgrade to " + TO.version() + " (a "), runner.output());
                assertTrue(runner.output().contains("refused before anything was written"), runner.output());
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
