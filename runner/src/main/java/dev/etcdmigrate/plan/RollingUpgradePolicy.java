package dev.etcdmigrate.plan;

import dev.etcdmigrate.step.ConvertToV3;
import dev.etcdmigrate.step.MinorUpgrade;
import dev.etcdmigrate.step.OnlineDowngrade;
import dev.etcdmigrate.step.PatchFloor;
import dev.etcdmigrate.step.RollbackToV2;
import dev.etcdmigrate.step.SnapshotDowngrade;
import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.version.StorageApi;

/**
 * What one member of a multi-member cluster may do while its peers keep serving: a rolling upgrade (with
 * the patch floors on the way), or a rolling downgrade where every line on the way has etcd's cluster-wide
 * downgrade API (the catalog's {@code downgrade-api} method: the planner makes an {@link OnlineDowngrade}
 * step only there). Each step's private etcd rejoins the cluster, so every step must be something a
 * mixed-version cluster accepts. Several minors are walked one leg at a time ({@link RolloutChain}): between
 * legs the member serves, and the cluster decides when it restarts next ({@code cluster.RolloutCoordinator}).
 */
public final class RollingUpgradePolicy {

    private RollingUpgradePolicy() {}

    /** Returns the plan unchanged, or refuses it naming the first step a member cannot take alone. */
    public static Plan check(Plan plan, int members) throws RefusedTransitionException {
        if (members < 2) {
            return plan;
        }
        String cluster = "a member of a " + members + "-member cluster";
        for (Step step : plan.steps()) {
            String why = switch (step) {
                case PatchFloor floor -> null;
                case MinorUpgrade up when up.storage() == StorageApi.ETCD3 -> null;
                case MinorUpgrade up ->
                    "etcd2 data is migrated only as a one-member cluster; shrink the cluster to one member, migrate, then add members";
                case OnlineDowngrade down -> null;
                case SnapshotDowngrade down ->
                    "a snapshot restore gives this member a new cluster ID, so it could not rejoin its peers."
                            + " Restore the whole cluster into " + down.older().minorLine() + " from one snapshot"
                            + " instead, with the runner's restore mode: save a snapshot of the cluster (etcdctl"
                            + " snapshot save), then give every member RESTORE_SNAPSHOT=<the file>,"
                            + " RESTORE_SHA256=<its sha256sum>"
                            + (down.older().line().tools().restoreBumpsRevision()
                                    ? " and"
                                    : ", RESTORE_BUMP_REVISION=0 (its tool cannot raise the revision: the snapshot's"
                                            + " revisions are kept, which is safe only where no client caches"
                                            + " from etcd, docs/restore.md) and")
                            + " TARGET_VERSION=" + down.older().version()
                            + "; each member is restored by "
                            + down.older().line().tools().snapshotRestore().toolName()
                            + " " + down.older().version() + " under its own name and a new cluster ID, and the"
                            + " members form the restored cluster (docs/restore.md)";
                case ConvertToV3 convert ->
                    "the etcd2 -> etcd3 conversion rebuilds the member dir, so it could not rejoin its peers";
                case RollbackToV2 rollback ->
                    "the rollback to etcd2 rebuilds the member dir, so it could not rejoin its peers";
            };
            if (why != null) {
                throw new RefusedTransitionException("refused for " + cluster + ": " + step.describe() + " — " + why
                        + ". A multi-member cluster supports rolling upgrades, and rolling downgrades through"
                        + " etcd's downgrade API, one minor and one member at a time (nothing was changed)");
            }
        }
        return plan;
    }
}
