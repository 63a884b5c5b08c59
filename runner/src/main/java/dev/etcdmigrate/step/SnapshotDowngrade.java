package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.MemberSwap;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.log.ProgressMeter;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * One minor back where etcd refuses it in place (3.5 -> 3.4 and older): the newer etcd saves a
 * snapshot, the older line's tool restores it into a fresh staging dir (revisions kept, new member
 * and cluster IDs), the older etcd proves it starts there, and the staged member/ replaces the old
 * one, which is kept as a backup.
 */
public record SnapshotDowngrade(EtcdVersion from, Release newer, Release older) implements Step {

    @Override
    public String describe() {
        return "downgrade " + from + " -> " + older.version() + ": etcd " + newer.version() + " saves a snapshot, "
                + older.line().tools().snapshotRestore().toolName() + " " + older.version()
                + " restores it into a fresh member dir, the old one is kept as a backup";
    }

    @Override
    public StepFacts facts() {
        return new StepFacts(
                new DataVersion(older.etcdVersion(), StorageApi.ETCD3),
                List.of(
                        Binary.etcd(newer),
                        new Binary("etcdctl", newer),
                        new Binary(older.line().tools().snapshotRestore().toolName(), older),
                        Binary.etcd(older)),
                true,
                2,
                2,
                "the old member dir as a backup");
    }

    @Override
    public void run(StepContext context) throws IOException, InterruptedException, MigrateException {
        EtcdOperations etcd = context.etcd();
        Path work = context.dataDir().own().freshWorkDir(context.dataDir().own().snapshotWork());
        Path snapshot = work.resolve("snapshot.db");
        Path db = context.dataDir().member().resolve("snap/db");
        try (EtcdOperations.Running running =
                        etcd.start(newer, context.dataDir().path());
                ProgressMeter progress = ProgressMeter.watching(
                        context.log(), "saving a snapshot", "bytes", Files.size(db), () -> Files.size(snapshot))) {
            etcd.saveSnapshot(running, snapshot);
            running.stop();
        }

        MemberSwap swap = context.memberSwap();
        Path staged = swap.prepare();
        try (ProgressMeter progress = ProgressMeter.watching(
                context.log(), "restoring the snapshot", "bytes", Files.size(snapshot), () -> Trees.size(staged))) {
            etcd.restoreSnapshot(older, snapshot, staged, false);
        }
        etcd.runUntilWrite(older, staged, EtcdOperations.Tuning.NONE);

        // gone before the staging is marked complete: a crash after that mark is finished by recovery
        // at the target, where no step would run to remove a snapshot (a copy of every key) left behind;
        // durably gone, or a power cut brings it back beside a complete staging
        Trees.deleteDurably(work);
        DataVersion before = new DataVersion(from, StorageApi.ETCD3);
        swap.markComplete(result());
        swap.swap(before, result());
    }
}
