package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.MemberSwap;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.event.KeysEvent;
import dev.etcdmigrate.log.ProgressMeter;
import dev.etcdmigrate.ondisk.V2SnapshotReader;
import dev.etcdmigrate.ondisk.WalIndex;
import dev.etcdmigrate.step.EtcdOperations.Tuning;
import dev.etcdmigrate.v2.ConversionPlan;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/**
 * etcd2 -> etcd3 at a release whose etcdctl still has {@code migrate} (3.0-3.4), on a copy of the
 * member dir so the original stays whole until the swap:
 * <ol>
 *   <li>the release runs once on the copy with --snapshot-count=1, so the v2 store's snapshot file
 *       holds everything; that snapshot is read (hidden keys and TTL expiry times included);
 *   <li>{@code etcdctl migrate} turns the v2 keys into v3 keys with revision = v2 modified index;
 *   <li>on the running release: expired keys deleted, TTL keys (and keys under TTL_KEYS_DIRECTORY)
 *       put again with leases of about their remaining TTL, hidden keys (which migrate skips) put;
 *       the keyspace must then match the v2 store's digest;
 *   <li>its db (the etcd stopped cleanly) is restored into a fresh member dir, which drops every trace
 *       of v2 content (3.6+ refuse it), and checked again; then it replaces the old member dir, kept as a
 *       backup. Spent files go as soon as they are spent, so the data dir peaks near 3x its input.
 * </ol>
 * Leased and hidden keys get new mod revisions; every other key keeps its v2 indexes as revisions.
 */
public record ConvertToV3(EtcdVersion from, Release release) implements Step {

    @Override
    public String describe() {
        return "convert the etcd2 data to etcd3 with etcd " + release.version() + ": etcdctl migrate (v2 indexes become"
                + " revisions), TTLs re-attached as leases, v2 content dropped through a snapshot restore";
    }

    @Override
    public StepFacts facts() {
        return new StepFacts(
                new DataVersion(release.etcdVersion(), StorageApi.ETCD3),
                List.of(
                        Binary.etcd(release),
                        new Binary("etcdctl", release),
                        new Binary(release.line().tools().snapshotRestore().toolName(), release)),
                true,
                2,
                3,
                "the etcd2 member dir as a backup");
    }

    @Override
    public void run(StepContext context) throws IOException, InterruptedException, MigrateException {
        EtcdOperations etcd = context.etcd();
        MemberSwap swap = context.memberSwap();
        Path staged = swap.prepare();
        Path staging = staged.getParent();
        Path work = swap.copyMemberToWork();

        // One snapshot, right after etcd has replayed the whole WAL: --snapshot-count=1 would snapshot after
        // every apply batch of the replay and every v2 SYNC entry, each a JSON copy of the whole v2 store
        // (quadratic, and at 300,000 TTL keys on a busy machine the probe write timed out behind them).
        Path workMember = work.resolve("member");
        long snapshotted = V2SnapshotReader.newestSnapshot(workMember)
                .map(WalIndex::snapshotIndex)
                .orElse(0L);
        long walIndex = WalIndex.lastIndex(workMember.resolve("wal")).orElse(snapshotted);
        Tuning snapshotOnce = Tuning.snapshotAfter(Math.max(1, walIndex - snapshotted - 1));
        context.log()
                .info("the WAL ends at raft index " + walIndex + ", the last v2 snapshot is at " + snapshotted
                        + ": --snapshot-count=" + snapshotOnce.snapshotCount()
                        + " takes one snapshot after the replay");
        etcd.runUntilWrite(release, work, snapshotOnce, StorageApi.ETCD2);
        Path snapshot = V2SnapshotReader.newestSnapshot(workMember)
                .filter(s -> WalIndex.snapshotIndex(s) >= walIndex)
                .orElseThrow(() -> new StepFailedException(
                        "etcd " + release.version() + " left no v2 snapshot at or after raft index " + walIndex
                                + " (the WAL's last entry) in " + work + "; the data dir is unchanged"));
        // what comes before that snapshot is spent, and this is a copy: its room goes back now (peak disk)
        WalIndex.pruneBefore(workMember, snapshot);
        Path fixes = staging.resolve("fixes.bin");
        ConversionPlan.Summary v2 = ConversionPlan.write(
                snapshot,
                fixes,
                context.conversion().ttlKeysDirectory(),
                context.conversion().defaultTtl(),
                Instant.now());
        context.log().emit(new KeysEvent.V2StoreRead(v2.keys(), v2.hidden(), v2.leased(), v2.expired(), v2.digest()));

        etcd.migrateV2Keys(release, work);
        Path snapshotDb = staging.resolve("converted.db");
        try (EtcdOperations.Running running = etcd.start(release, work)) {
            long start = System.nanoTime();
            long leased = etcd.applyFixes(running, fixes);
            long millis = Math.max(1, (System.nanoTime() - start) / 1_000_000);
            context.log()
                    .emit(new KeysEvent.KeysLoaded(
                            "with leases (hidden keys put, expired ones deleted)", leased, millis));
            Files.delete(fixes);
            check(context, etcd.digestV3(running), v2, "after etcdctl migrate and the fix-ups");
            running.stop();
        }
        // The cleanly stopped etcd's db is the checked keyspace: restored directly (a data dir's db has no
        // snapshot hash) instead of through a `snapshot save` copy, and the rest of the work copy goes before
        // the restore writes a new member dir (peak disk).
        Files.move(workMember.resolve("snap").resolve("db"), snapshotDb);
        Trees.deleteRecursively(work);

        try (ProgressMeter progress = ProgressMeter.watching(
                context.log(),
                "restoring the converted db",
                "bytes",
                Files.size(snapshotDb),
                () -> Trees.size(staged))) {
            etcd.restoreSnapshot(release, snapshotDb, staged, true);
        }
        Files.delete(snapshotDb);
        try (EtcdOperations.Running running = etcd.start(release, staged)) {
            check(context, etcd.digestV3(running), v2, "after the restore into a fresh member dir");
            running.stop();
        }
        swap.markComplete(result());
        swap.swap(new DataVersion(from, StorageApi.ETCD2), result());
    }

    private static void check(
            StepContext context, EtcdOperations.KeyspaceDigest v3, ConversionPlan.Summary v2, String when)
            throws StepFailedException {
        if (!v3.digest().equals(v2.digest()) || v3.leased() != v2.leased()) {
            throw new StepFailedException(
                    "the converted keyspace differs from the v2 store " + when + ": v2 digest " + v2.digest()
                            + " with " + v2.leased() + " leased keys, v3 digest " + v3.digest() + " with " + v3.leased()
                            + "; the original data dir is unchanged");
        }
        context.log().emit(new KeysEvent.KeyspaceMatched(v2.digest(), v2.keys(), when));
    }
}
