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
 * What one member of a multi-member cluster may do on its own while its peers keep serving: a
 * rolling upgrade by one minor (with the patch floor it needs), or a rolling downgrade by one minor
 * where the newer line has etcd's cluster-wide downgrade API (the catalog's {@code downgrade-api}
 * method: the planner makes an {@link OnlineDowngrade} step only there). The member's private etcd
 * rejoins the cluster for each step, so every step must be something a mixed-version cluster accepts.
 */
public final class RollingUpgradePolicy {

    private RollingUpgradePolicy() {}

    /** Returns the plan unchanged, or refuses it naming the first step a member cannot take alone. */
    public static Plan check(Plan plan, int members) throws RefusedTransitionException {
        if (members < 2) {
            return plan;
        }
        String cluster = "a member of a " + members + "-member cluster";
        int minorSteps = 0;
        for (Step step : plan.steps()) {
            String why = switch (step) {
                case PatchFloor floor -> null;
                case MinorUpgrade up when up.storage() == StorageApi.ETCD3 -> null;
                case MinorUpgrade up ->
                    "etcd2 data is migrated only as a one-member cluster; shrink the cluster to one member, migrate, then add members";
                case OnlineDowngrade down -> null;
                case SnapshotDowngrade down ->
                    "a snapshot restore gives this member a new cluster ID, so it could not rejoin its peers;"
                            + " restore the whole cluster from one member's snapshot instead";
                case ConvertToV3 convert ->
                    "the etcd2 -> etcd3 conversion rebuilds the member dir, so it could not rejoin its peers";
                case RollbackToV2 rollback ->
                    "the rollback to etcd2 rebuilds the member dir, so it could not rejoin its peers";
            };
            if (why != null) {
                throw new RefusedTransitionException("refused for " + cluster + ": " + step.describe() + " — " + why
                        + ". A multi-member cluster supports a rolling upgrade by one minor, or a rolling downgrade by one minor through"
                        + " etcd's downgrade API, one member at a time (nothing was changed)");
            }
            if (crossesAMinor(step) && ++minorSteps > 1) {
                throw new RefusedTransitionException(
                        "refused for " + cluster + ": " + plan.current() + " -> " + plan.target()
                                + " crosses " + countMinors(plan)
                                + " minor versions, and a member can only join peers one minor apart"
                                + " (etcd's downgrade API, too, moves the cluster version one minor)."
                                + " Roll the whole cluster out one minor at a time (e.g. first every member to "
                                + firstMinorTarget(plan) + "), nothing was changed");
            }
        }
        return plan;
    }

    private static boolean crossesAMinor(Step step) {
        return step instanceof MinorUpgrade || step instanceof OnlineDowngrade;
    }

    private static long countMinors(Plan plan) {
        return plan.steps().stream().filter(RollingUpgradePolicy::crossesAMinor).count();
    }

    private static String firstMinorTarget(Plan plan) {
        return plan.steps().stream()
                .filter(RollingUpgradePolicy::crossesAMinor)
                .findFirst()
                .map(s -> s.result().version().toString())
                .orElseThrow();
    }
}
