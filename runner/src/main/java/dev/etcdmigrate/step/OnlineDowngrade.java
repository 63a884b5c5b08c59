package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.step.EtcdOperations.Tuning;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * One minor back through etcd's downgrade API (3.6+): a backup copy of member/ first (etcd works on it
 * in place, and no etcd runs yet), then on the running newer etcd, validate and enable a downgrade to
 * the older line, wait until the cluster version and this member's storage version report it, stop,
 * then start the older etcd until a write succeeds.
 *
 * <p>The downgrade is cluster-wide: for a member of a multi-member cluster the newer etcd rejoins its
 * peers, the first member's run enables the downgrade, later members' runs find the cluster version at
 * the target already and go on; a downgrade to another version in progress is a refusal. The job ends
 * when the leader sees every member on the older line (within its --downgrade-check-time, 5 s by
 * default), so only a one-member cluster waits for that here.
 */
public record OnlineDowngrade(EtcdVersion from, Release newer, Release older) implements Step {

    @Override
    public String describe() {
        return "downgrade " + from + " -> " + older.version() + ": member dir copied to a backup, etcd "
                + newer.version()
                + " enables a downgrade to " + older.minorLine() + " (downgrade API), then etcd " + older.version()
                + " starts on the data";
    }

    @Override
    public StepFacts facts() {
        return new StepFacts(
                new DataVersion(older.etcdVersion(), StorageApi.ETCD3),
                List.of(Binary.etcd(newer), new Binary("etcdctl", newer), Binary.etcd(older)),
                false,
                1,
                2,
                "a copy of the member dir as a backup");
    }

    @Override
    public void run(StepContext context) throws IOException, InterruptedException, MigrateException {
        EtcdOperations etcd = context.etcd();
        Path data = context.dataDir().path();
        MinorLine target = older.minorLine();
        context.backups()
                .requireRoomForCopyAndStarts(context.dataDir().member(), 2, "the downgrade to " + older.version());
        context.backups().copyOf(context.dataDir().member(), context.walDir(), new DataVersion(from, StorageApi.ETCD3));
        try (EtcdOperations.Running running = etcd.start(newer, data)) {
            Optional<MinorLine> enabled = etcd.enabledDowngrade(running);
            if (enabled.isPresent() && enabled.get().equals(newer.minorLine())) {
                // the previous minor's job (to the line this member runs): its leader ends it once every member
                // runs that line; a member whose pod restarted while it waited between legs comes here early
                etcd.awaitDowngradeFinished(running);
                enabled = etcd.enabledDowngrade(running);
            }
            if (enabled.isPresent() && !enabled.get().equals(target)) {
                throw new StepFailedException(
                        "the cluster has a downgrade to " + enabled.get() + " in progress, not to " + target
                                + ": finish that one (every member on it) or cancel it (`etcdctl downgrade cancel`) first");
            }
            if (enabled.isPresent() || etcd.clusterVersionIs(running, target)) {
                // an earlier member (or an interrupted run) enabled it: the cluster version is the target
                // already, which `downgrade validate` would reject as an invalid target
                context.log()
                        .info("etcd " + newer.version() + " reports the cluster already downgraded to " + target
                                + (enabled.isEmpty() ? "" : " (downgrade job in progress)")
                                + "; continuing it on this member");
            } else {
                try {
                    etcd.enableDowngrade(running, target);
                } catch (MigrateException refused) {
                    // members edited at once: another member's runner may have enabled the same job between the
                    // read above and this enable, which etcd then refuses as "a downgrade job in progress"
                    if (!etcd.enabledDowngrade(running).equals(Optional.of(target))) throw refused;
                    context.log()
                            .info("another member enabled the downgrade to " + target
                                    + " meanwhile; continuing it on this member");
                }
            }
            etcd.awaitClusterVersion(running, target);
            etcd.awaitStorageVersion(running, target);
            running.stop();
        }
        // The older etcd ends the downgrade job once it sees every member at the target: ask it to look
        // soon, and wait for it (3.5 too, whose Status does not tell: a downgrade VALIDATE does). Left
        // running, the job keeps the next downgrade refused as "in progress", and an upgrade later gets
        // an etcd whose cluster version stays at the job's target for good. It also snapshots at once
        // (and after one more write): a later restart that replayed the WAL entries setting the newer
        // cluster version would die with "invalid downgrade".
        try (EtcdOperations.Running running =
                etcd.start(older, data, Tuning.snapshotAtOnce().withQuickDowngradeCheck(), StorageApi.ETCD3)) {
            if (!etcd.rejoinsCluster()) {
                etcd.awaitDowngradeFinished(running);
            }
            running.awaitWrite();
            running.stop();
        }
    }
}
