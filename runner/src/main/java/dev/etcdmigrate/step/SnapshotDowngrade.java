package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.MemberSwap;
import dev.etcdmigrate.etcd.PrivateEtcd;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.nio.file.Path;
import java.util.ArrayList;
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
    public boolean replacesMemberDir() {
        return true;
    }

    @Override
    public DataVersion result() {
        return new DataVersion(older.etcdVersion(), StorageApi.ETCD3);
    }

    @Override
    public List<Binary> binaries() {
        return List.of(Binary.etcd(newer), new Binary("etcdctl", newer),
                new Binary(older.line().tools().snapshotRestore().toolName(), older), Binary.etcd(older));
    }

    @Override
    public void run(StepContext context) throws Exception {
        Path work = context.dataDir().freshWorkDir("snapshot");
        Path snapshot = work.resolve("snapshot.db");
        try (PrivateEtcd etcd = context.startAndAwaitWrite(newer, context.dataDir().path())) {
            context.runTool(newer, "etcdctl", List.of("--endpoints", context.settings().ports().clientUrl().toString(),
                    "snapshot", "save", snapshot.toString()), "etcd " + newer.version() + " could not save a snapshot");
            etcd.stop(context.stopGrace());
        }

        MemberSwap swap = context.memberSwap();
        Path staged = swap.prepare();
        List<String> restore = new ArrayList<>(List.of("snapshot", "restore", snapshot.toString(),
                "--data-dir", staged.toString()));
        restore.addAll(context.member().restoreFlags());
        context.runTool(older, older.line().tools().snapshotRestore().toolName(), restore,
                "could not restore the " + newer.version() + " snapshot with " + older.version());
        context.runUntilWrite(older, staged);

        // gone before the staging is marked complete: a crash after that mark is finished by recovery
        // at the target, where no step would run to remove a snapshot (a copy of every key) left behind
        context.dataDir().deleteWorkDir("snapshot");
        DataVersion before = new DataVersion(from, StorageApi.ETCD3);
        swap.markComplete(result());
        swap.swap(before, result());
    }
}
