package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.it.migrate.ConvertToV3IT;
import dev.etcdmigrate.it.migrate.RollbackToV2IT;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.ItConv2Events;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.V2Dataset;
import dev.etcdmigrate.version.DataVersion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * One run of the runner per step type, as the fault injection and exposure tests drive it: the data
 * to seed, the command line, the versions version.txt may name along the plan (start, then the
 * result of each step), which step is the one under test, and how to check the data at the end.
 */
enum FaultScenario implements CutScenario {
    MINOR_UPGRADE("3.5.35/etcd3 -> 3.6.16 (etcdutl v2 check, then 3.6 starts)", 1, "3.5.35/etcd3", "3.6.16/etcd3"),
    PATCH_FLOOR("3.5.21/etcd3 -> 3.6.16 (3.5.35 runs once first)", 1, "3.5.21/etcd3", "3.5.35/etcd3", "3.6.16/etcd3"),
    ONLINE_DOWNGRADE("3.7.3/etcd3 -> 3.6.16 (downgrade API)", 1, "3.7.3/etcd3", "3.6.16/etcd3"),
    SNAPSHOT_DOWNGRADE("3.5.35/etcd3 -> 3.4.23 (snapshot restore, member dir swap)", 1, "3.5.35/etcd3", "3.4.23/etcd3"),
    CONVERT_TO_V3("3.4.23/etcd2 -> 3.4.23/etcd3 (conversion, member dir swap)", 1, "3.4.23/etcd2", "3.4.23/etcd3"),
    ROLLBACK_TO_V2("3.4.23/etcd3 -> 3.4.23/etcd2 (rollback, member dir swap)", 1, "3.4.23/etcd3", "3.4.23/etcd2"),
    // the step whose preparation runs the previous line's etcd: once 3.7 has recorded its storage version, 3.6
    // cannot open the data again, so a resumed step must not run it (fdeaed6)
    PREPARED_UPGRADE(
            "3.6.16/etcd3 -> 3.7.3 (3.6.16 snapshots first, then 3.7 starts and records its storage version)",
            1,
            "3.6.16/etcd3",
            "3.7.3/etcd3");

    /** Keys seeded: enough for every step to do real work, few enough for many trials. */
    private static final int KEYS = 300;

    private final String description;
    private final int stepUnderTest;
    private final List<DataVersion> versions;

    FaultScenario(String description, int stepUnderTest, String... versions) {
        this.description = description;
        this.stepUnderTest = stepUnderTest;
        this.versions =
                java.util.Arrays.stream(versions).map(DataVersion::parse).toList();
    }

    /** The plan's versions: where the data starts, then what each completed step records. */
    List<DataVersion> versions() {
        return versions;
    }

    DataVersion target() {
        return versions.getLast();
    }

    int steps() {
        return versions.size() - 1;
    }

    int stepUnderTest() {
        return stepUnderTest;
    }

    /** Waits for the runner's step-started event of the step under test. */
    void awaitStepStarted(RunnerProcess runner, Duration deadline) throws InterruptedException {
        ItConv2Events.awaitStepStarted(runner, stepUnderTest, steps(), deadline);
    }

    /** Waits for the runner's step-finished event of the step under test (version.txt has been rewritten). */
    void awaitStepFinished(RunnerProcess runner, Duration deadline) throws InterruptedException {
        ItConv2Events.awaitStepFinished(runner, stepUnderTest, steps(), deadline);
    }

    List<String> args(Path data) {
        return RunnerArgs.migrate(
                data,
                target().version().toString(),
                "--target-storage",
                target().storage().toString());
    }

    @Override
    public List<String> args(Seeded seeded, Path data) {
        return args(data);
    }

    @Override
    public void assertConsistentCutState(Seeded seeded, Path data) throws Exception {
        PowerCutIT.assertConsistentCutState(this, data);
    }

    /** The end of a run that converged: version.txt at the target, nothing unexpected left, every key served. */
    @Override
    public void assertConverged(Seeded seeded, EtcdFixture etcd, Path data) throws Exception {
        assertEquals(target().format(), Files.readString(data.resolve("version.txt")));
        assertEquals(List.of(), DataDirLeftovers.unexpected(data), "leftovers:" + DataDirLeftovers.describe(data));
        seeded.assertServedByTarget(etcd, data);
    }

    /** Writes the scenario's start data into {@code data} (which must not exist yet) and says what it holds. */
    @Override
    public Seeded seed(EtcdFixture etcd, Path data) throws Exception {
        Release target = EtcdFixture.release(target().version().toString());
        return switch (this) {
            case MINOR_UPGRADE, ONLINE_DOWNGRADE, SNAPSHOT_DOWNGRADE, PREPARED_UPGRADE ->
                new Etcd3Keys(etcd.seed(start(), data, KEYS), target);
            case PATCH_FLOOR -> {
                // the bundled 3.5 writes the data; version.txt then names a 3.5 patch below 3.6's floor
                Keyspace keys = etcd.seed(EtcdFixture.release("3.5.35"), data, KEYS);
                new DataDir(data).writeVersion(versions.getFirst());
                yield new Etcd3Keys(keys, target);
            }
            case CONVERT_TO_V3 -> new Etcd2Keys(ConvertToV3IT.writeEtcd2(etcd, start(), data, KEYS), target);
            case ROLLBACK_TO_V2 -> new RolledBackKeys(RollbackToV2IT.seed(etcd, data, KEYS, Map.of()), target);
        };
    }

    private Release start() {
        return EtcdFixture.release(versions.getFirst().version().toString());
    }

    @Override
    public String toString() {
        return name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ') + ": " + description;
    }

    /** What a seeded data dir holds, checked against what the target etcd serves after the migration. */
    interface Seeded {
        void assertServedByTarget(EtcdFixture etcd, Path data) throws Exception;

        /** Until when a copy of the seed can be migrated with the same expectations (v2 TTLs run in wall time). */
        default Instant usableUntil() {
            return Instant.MAX;
        }
    }

    /** etcd3 sample data: keys, values, revisions and leases as {@code UpgradeIT} and {@code DowngradeIT} check them. */
    record Etcd3Keys(Keyspace before, Release target) implements Seeded {
        @Override
        public void assertServedByTarget(EtcdFixture etcd, Path data) throws Exception {
            EtcdFixture.Observed after = etcd.read(target, data);
            assertEquals(Map.of(), before.differences(after.keyspace()), "keys, values and revisions");
            before.entries()
                    .forEach((key, entry) -> assertEquals(
                            entry.lease(), after.keyspace().entries().get(key).lease(), "lease of " + key));
            if (after.leasesTimed()) {
                assertEquals(before.leasedKeys(), after.keysWithLiveLease(), "every leased key keeps a live lease");
            }
            assertTrue(before.leasedKeys() > 0, "the sample has leased keys");
        }
    }

    /** etcd2 data converted: {@link ConvertToV3IT}'s key-by-key check. */
    record Etcd2Keys(V2Dataset written, Release target) implements Seeded {
        @Override
        public void assertServedByTarget(EtcdFixture etcd, Path data) throws Exception {
            ConvertToV3IT.assertCarried(written, etcd.read(target, data));
        }

        /** A TTL key that runs out during a trial would rightly be dropped, which the expectations do not know. */
        @Override
        public Instant usableUntil() {
            return written.live().values().stream()
                    .filter(w -> w.ttl() > 0)
                    .map(w -> w.at().plusSeconds(w.ttl()))
                    .min(Comparator.naturalOrder())
                    .orElse(Instant.MAX);
        }
    }

    /** etcd3 data rolled back: {@link RollbackToV2IT}'s key and value check through the v2 API. */
    record RolledBackKeys(Map<String, RollbackToV2IT.Expected> expected, Release target) implements Seeded {
        @Override
        public void assertServedByTarget(EtcdFixture etcd, Path data) throws Exception {
            RollbackToV2IT.assertKeysAndValuesServed(etcd, target, data, expected);
        }
    }
}
