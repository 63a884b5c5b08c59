package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.PrivateEtcd;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.util.ArrayList;
import java.util.List;

/**
 * One minor back through etcd's downgrade API (3.6+): a backup copy of member/ first (etcd works on it
 * in place, and no etcd runs yet), then on the running newer etcd, validate and enable a downgrade to
 * the older line, wait until the storage version reports it, stop, then start the older etcd until a
 * write succeeds.
 */
public record OnlineDowngrade(EtcdVersion from, Release newer, Release older) implements Step {

    @Override
    public String describe() {
        return "downgrade " + from + " -> " + older.version() + ": member dir copied to a backup, etcd " + newer.version()
                + " enables a downgrade to " + older.minorLine() + " (downgrade API), then etcd " + older.version()
                + " starts on the data";
    }

    @Override
    public DataVersion result() {
        return new DataVersion(older.etcdVersion(), StorageApi.ETCD3);
    }

    @Override
    public List<Binary> binaries() {
        return List.of(Binary.etcd(newer), new Binary("etcdctl", newer), Binary.etcd(older));
    }

    @Override
    public void run(StepContext context) throws Exception {
        String target = older.minorLine().toString();
        context.backups().requireRoomForCopyAndStarts(context.dataDir().member(), 2, "the downgrade to " + older.version());
        context.backups().copyOf(context.dataDir().member(), new DataVersion(from, StorageApi.ETCD3));
        try (PrivateEtcd etcd = context.startAndAwaitWrite(newer, context.dataDir().path())) {
            String endpoint = context.settings().ports().clientUrl().toString();
            if (downgradeEnabled(etcd, target)) {
                // a crash after `downgrade enable`: the cluster version is already the target, which
                // `downgrade validate` would reject as an invalid target
                context.log().info("etcd " + newer.version() + " reports a downgrade to " + target + " already enabled by an"
                        + " interrupted run; continuing it");
            } else {
                context.runTool(newer, "etcdctl", List.of("--endpoints", endpoint, "downgrade", "validate", target),
                        "etcd " + newer.version() + " does not allow a downgrade to " + target);
                context.runTool(newer, "etcdctl", List.of("--endpoints", endpoint, "downgrade", "enable", target),
                        "etcd " + newer.version() + " refused to enable a downgrade to " + target);
            }
            context.awaitStorageVersion(etcd, target + ".0");
            etcd.stop(context.stopGrace());
        }
        // The older etcd ends the downgrade job once it sees every member at the target: ask it to look
        // soon, and wait for it where it can tell us, or the next downgrade would be refused as "in
        // progress". It also snapshots at once (and after one more write): a later restart that replayed
        // the WAL entries setting the newer cluster version would die with "invalid downgrade".
        String checkFlag = older.line().downgradeCheckFlag();
        List<String> flags = new ArrayList<>(MinorUpgrade.SNAPSHOT_AT_ONCE);
        if (!checkFlag.isEmpty()) {
            flags.add(checkFlag + "=50ms");
        }
        try (PrivateEtcd etcd = context.startAndAwaitWrite(older, context.dataDir().path(), flags)) {
            if (older.line().statusReportsDowngrade()) {
                context.awaitDowngradeFinished(etcd);
            }
            etcd.awaitWrite(context.settings().startTimeout());
            etcd.stop(context.stopGrace());
        }
    }

    /** Whether the running newer etcd already has a downgrade to the target line enabled (3.6+ report it). */
    private boolean downgradeEnabled(PrivateEtcd etcd, String targetLine) throws Exception {
        if (!newer.line().statusReportsDowngrade()) {
            return false;
        }
        var info = etcd.gateway().status().path("downgradeInfo");
        return info.path("enabled").asBoolean(false) && info.path("targetVersion").asText("").equals(targetLine + ".0");
    }
}
