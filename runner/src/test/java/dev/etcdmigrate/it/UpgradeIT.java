package dev.etcdmigrate.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.demo.Keyspace;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Upgrades on real binaries, checked key by key with the target etcd afterwards. */
class UpgradeIT {

    private final EtcdFixture etcd = new EtcdFixture();

    @AfterEach
    void stopAll() {
        etcd.close();
    }

    @Test
    void oldestToNewestInOneRunKeepsEveryKeyRevisionAndLease(@TempDir Path dir) throws Exception {
        Release oldest = EtcdFixture.oldest();
        Release newest = EtcdFixture.newest();
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(oldest, data, 3000);

        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, newest.version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            long minors = EtcdFixture.CATALOG.releases().size() - 1;
            assertEquals(minors, runner.countRunnerLines("starting etcd "), "one start per minor:\n" + runner.output());
            for (Release r : EtcdFixture.CATALOG.releases().subList(1, EtcdFixture.CATALOG.releases().size())) {
                assertEquals(1, runner.countRunnerLines("starting etcd " + r.version() + " "), "etcd " + r.version() + " started once");
            }
        }
        assertEquals(newest.version() + "/etcd3", Files.readString(data.resolve("version.txt")));

        EtcdFixture.Observed after = etcd.read(newest, data);
        assertEquals(Map.of(), before.differences(after.keyspace()), "keys, values and revisions");
        assertEquals(before.entries().size(), after.keyspace().entries().size());
        assertTrue(before.leasedKeys() > 200, "the sample has leased keys: " + before.leasedKeys());
        before.entries().forEach((key, entry) -> assertEquals(entry.lease(), after.keyspace().entries().get(key).lease(),
                "lease of " + key));
        assertEquals(before.leasedKeys(), after.keysWithLiveLease(), "every leased key keeps a live lease");
        after.leaseTtl().values().forEach(ttl -> assertTrue(ttl > 3000 && ttl <= 3600, "lease TTL " + ttl));
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
            assertTrue(runner.output().contains("step 1/2: run etcd 3.5.35 once on the 3.5.21 data"), runner.output());
            assertTrue(runner.output().contains("step 1/2 done") && runner.output().contains("version.txt = 3.5.35/etcd3"));
            assertTrue(runner.output().contains("step 2/2: upgrade 3.5.35 -> 3.6.16"), runner.output());
        }
        assertEquals("3.6.16/etcd3", Files.readString(data.resolve("version.txt")));
        assertEquals(Map.of(), before.differences(etcd.read(line36, data).keyspace()));
    }
}
