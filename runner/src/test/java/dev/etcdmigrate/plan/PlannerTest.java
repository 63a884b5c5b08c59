package dev.etcdmigrate.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.step.ConvertToV3;
import dev.etcdmigrate.step.MinorUpgrade;
import dev.etcdmigrate.step.OnlineDowngrade;
import dev.etcdmigrate.step.PatchFloor;
import dev.etcdmigrate.step.RollbackToV2;
import dev.etcdmigrate.step.SnapshotDowngrade;
import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The planner as a table: (catalog, data version, target) -> the steps, each summarised as
 * "Type from->to" with the facts that matter (patch floor, v2 checker, newer release), or a refusal.
 */
class PlannerTest {

    private static final Catalog BUNDLED = Catalog.bundled();

    /**
     * The bundled 3.4-3.7 releases. Most rows plan against these alone, so that the bundled pre-3.4 lines
     * (2.x, 3.0-3.3) do not change what they are about (e.g. that 3.2 data cannot skip 3.3).
     */
    private static final Catalog MODERN = only("3.4.23", "3.5.35", "3.6.16", "3.7.3");

    /** One row: the expected steps (empty for none), or the fragments a refusal message must contain. */
    record Case(String name, Catalog catalog, String current, String target, List<String> steps, List<String> refusal) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Case plans(String name, String current, String target, String... steps) {
        return new Case(name, MODERN, current, target, List.of(steps), List.of());
    }

    static Case plansWith(String name, Catalog catalog, String current, String target, String... steps) {
        return new Case(name, catalog, current, target, List.of(steps), List.of());
    }

    static Case refuses(String name, String current, String target, String... fragments) {
        return refusesWith(name, MODERN, current, target, fragments);
    }

    static Case refusesWith(String name, Catalog catalog, String current, String target, String... fragments) {
        assertFalse(fragments.length == 0, "a refusal row names what the message must say");
        return new Case(name, catalog, current, target, List.of(), List.of(fragments));
    }

    static Catalog only(String... versions) {
        return BUNDLED.restrictTo(
                Arrays.stream(versions).map(EtcdVersion::parse).collect(Collectors.toSet()));
    }

    static Stream<Case> table() {
        return Stream.of(
                // same line: nothing runs, version.txt is rewritten
                plans("same version", "3.5.35/etcd3", "3.5.35/etcd3"),
                plans("patch up within 3.5", "3.5.21/etcd3", "3.5.35/etcd3"),
                plans("patch down within 3.6", "3.6.20/etcd3", "3.6.16/etcd3"),
                plans("patch up within 3.7", "3.7.0/etcd3", "3.7.3/etcd3"),

                // upgrades
                plans("3.3 opens in 3.4", "3.3.27/etcd3", "3.4.23/etcd3", "MinorUpgrade 3.3.27->3.4.23"),
                plans("3.4 to 3.5", "3.4.23/etcd3", "3.5.35/etcd3", "MinorUpgrade 3.4.23->3.5.35"),
                plans(
                        "3.4 to 3.7 in three minors",
                        "3.4.23/etcd3",
                        "3.7.3/etcd3",
                        "MinorUpgrade 3.4.23->3.5.35",
                        "MinorUpgrade 3.5.35->3.6.16 v2check 3.5.35",
                        "MinorUpgrade 3.6.16->3.7.3"),
                plans(
                        "3.5 below the 3.6 floor",
                        "3.5.21/etcd3",
                        "3.6.16/etcd3",
                        "PatchFloor 3.5.21->3.5.35 floor 3.5.32",
                        "MinorUpgrade 3.5.35->3.6.16 v2check 3.5.35"),
                plans(
                        "3.5 below the floor to 3.7",
                        "3.5.21/etcd3",
                        "3.7.3/etcd3",
                        "PatchFloor 3.5.21->3.5.35 floor 3.5.32",
                        "MinorUpgrade 3.5.35->3.6.16 v2check 3.5.35",
                        "MinorUpgrade 3.6.16->3.7.3"),
                plans(
                        "3.5 exactly at the floor",
                        "3.5.32/etcd3",
                        "3.6.16/etcd3",
                        "MinorUpgrade 3.5.32->3.6.16 v2check 3.5.35"),
                plans(
                        "3.5 above the bundled patch",
                        "3.5.40/etcd3",
                        "3.6.16/etcd3",
                        "MinorUpgrade 3.5.40->3.6.16 v2check 3.5.35"),
                plans(
                        "3.6 below the 3.7 floor",
                        "3.6.5/etcd3",
                        "3.7.3/etcd3",
                        "PatchFloor 3.6.5->3.6.16 floor 3.6.11",
                        "MinorUpgrade 3.6.16->3.7.3"),
                plans(
                        "3.3 to 3.7",
                        "3.3.27/etcd3",
                        "3.7.3/etcd3",
                        "MinorUpgrade 3.3.27->3.4.23",
                        "MinorUpgrade 3.4.23->3.5.35",
                        "MinorUpgrade 3.5.35->3.6.16 v2check 3.5.35",
                        "MinorUpgrade 3.6.16->3.7.3"),

                // downgrades
                plans("3.7 to 3.6 online", "3.7.3/etcd3", "3.6.16/etcd3", "OnlineDowngrade 3.7.3->3.6.16 by 3.7.3"),
                plans(
                        "older 3.7 patch to 3.6 runs the bundled 3.7",
                        "3.7.1/etcd3",
                        "3.6.16/etcd3",
                        "OnlineDowngrade 3.7.1->3.6.16 by 3.7.3"),
                plans("3.6 to 3.5 online", "3.6.16/etcd3", "3.5.35/etcd3", "OnlineDowngrade 3.6.16->3.5.35 by 3.6.16"),
                plans(
                        "3.5 to 3.4 by snapshot",
                        "3.5.35/etcd3",
                        "3.4.23/etcd3",
                        "SnapshotDowngrade 3.5.35->3.4.23 by 3.5.35"),
                plans(
                        "3.7 to 3.4 in three minors",
                        "3.7.3/etcd3",
                        "3.4.23/etcd3",
                        "OnlineDowngrade 3.7.3->3.6.16 by 3.7.3",
                        "OnlineDowngrade 3.6.16->3.5.35 by 3.6.16",
                        "SnapshotDowngrade 3.5.35->3.4.23 by 3.5.35"),

                // refusals
                refuses(
                        "skipping a minor (3.2 -> 3.4)",
                        "3.2.32/etcd3",
                        "3.4.23/etcd3",
                        "cannot upgrade 3.2.32",
                        "opens data of 3.3 only",
                        "skipping a minor"),
                refuses("skipping a minor (3.2 -> 3.7)", "3.2.32/etcd3", "3.7.3/etcd3", "skipping a minor"),
                refuses(
                        "target patch not bundled: the bundled patch of its minor is named",
                        "3.5.35/etcd3",
                        "3.6.15/etcd3",
                        "target 3.6.15 is not bundled; the bundled 3.6 release is 3.6.16:"
                                + " set --target-version=3.6.16 (TARGET_VERSION=3.6.16)"),
                refusesWith(
                        "kubeadm's etcd image tag 3.5.21 names 3.5.35",
                        BUNDLED,
                        "3.5.35/etcd3",
                        "3.5.21/etcd3",
                        "the bundled 3.5 release is 3.5.35: set --target-version=3.5.35 (TARGET_VERSION=3.5.35)"),
                refusesWith(
                        "the Kubernetes image's rollback recipe 2.2.1 names 2.2.5",
                        BUNDLED,
                        "3.0.17/etcd3",
                        "2.2.1/etcd2",
                        "the bundled 2.2 release is 2.2.5: set --target-version=2.2.5 (TARGET_VERSION=2.2.5)"),
                refuses(
                        "target line not bundled",
                        "3.5.35/etcd3",
                        "3.3.27/etcd3",
                        "3.3.27 is not bundled",
                        "(bundled: 3.4.23, 3.5.35, 3.6.16, 3.7.3)"),
                refusesWith(
                        "target not in the full bundled catalog",
                        BUNDLED,
                        "3.5.35/etcd3",
                        "3.8.0/etcd3",
                        "3.8.0 is not bundled",
                        "(bundled: " + BUNDLED.versionList() + ")"),
                // etcd2 storage
                plans(
                        "etcd2 at 3.4 converted there, then up as etcd3",
                        "3.4.23/etcd2",
                        "3.7.3/etcd3",
                        "ConvertToV3 3.4.23 by 3.4.23",
                        "MinorUpgrade 3.4.23->3.5.35",
                        "MinorUpgrade 3.5.35->3.6.16 v2check 3.5.35",
                        "MinorUpgrade 3.6.16->3.7.3"),
                plans(
                        "etcd2 at an older 3.4 patch: the bundled 3.4 converts it",
                        "3.4.13/etcd2",
                        "3.4.23/etcd3",
                        "ConvertToV3 3.4.13 by 3.4.23"),
                refuses(
                        "etcd2 data of 2.2 without bundled 2.x-3.3 lines",
                        "2.2.1/etcd2",
                        "3.4.23/etcd3",
                        "cannot upgrade etcd2 data from 2.2.1",
                        "opens data of 3.3 only"),
                refuses(
                        "etcd2 at 3.5: no bundled etcdctl migrate at or above it",
                        "3.5.35/etcd2",
                        "3.6.16/etcd3",
                        "no bundled release between them has `etcdctl migrate`"),
                refusesWith(
                        "etcd2 data cannot go down", BUNDLED, "3.4.23/etcd2", "3.3.27/etcd2", "cannot be downgraded"),
                plans(
                        "etcd2 stays etcd2 up to 3.5",
                        "3.4.23/etcd2",
                        "3.5.35/etcd2",
                        "MinorUpgrade 3.4.23->3.5.35 etcd2"),
                refuses(
                        "etcd2 target on a line without the v2 API",
                        "3.4.23/etcd2",
                        "3.6.16/etcd2",
                        "does not serve the v2 API"),
                plans(
                        "etcd3 -> etcd2 rollback in one step, dumped by the data's line",
                        "3.7.3/etcd3",
                        "3.4.23/etcd2",
                        "RollbackToV2 3.7.3->3.4.23 by 3.7.3"),
                plansWith(
                        "full catalog: rollback to 2.2",
                        BUNDLED,
                        "3.4.23/etcd3",
                        "2.2.5/etcd2",
                        "RollbackToV2 3.4.23->2.2.5 by 3.4.23"),
                refusesWith(
                        "rollback needs the data's own line to dump",
                        only("3.4.23", "3.5.35"),
                        "3.7.3/etcd3",
                        "3.4.23/etcd2",
                        "the dump runs the data's own line",
                        "no 3.7 release is bundled"),
                refuses(
                        "data newer than any bundled line",
                        "3.8.0/etcd3",
                        "3.7.3/etcd3",
                        "cannot downgrade 3.8.0",
                        "no 3.8 release is bundled"),
                refusesWith(
                        "upgrade through a missing 3.5",
                        only("3.4.23", "3.6.16", "3.7.3"),
                        "3.4.23/etcd3",
                        "3.6.16/etcd3",
                        "cannot upgrade 3.4.23",
                        "opens data of 3.5 only",
                        "3.4.23, 3.6.16, 3.7.3"),
                refusesWith(
                        "upgrade to 3.7 through a missing 3.6",
                        only("3.5.35", "3.7.3"),
                        "3.5.35/etcd3",
                        "3.7.3/etcd3",
                        "opens data of 3.6 only"),
                refusesWith(
                        "patch floor without a bundled 3.5",
                        only("3.6.16", "3.7.3"),
                        "3.5.21/etcd3",
                        "3.6.16/etcd3",
                        "needs the data to have run 3.5.32 or newer",
                        "3.6.16, 3.7.3"),
                refusesWith(
                        "downgrade through a missing 3.6",
                        only("3.5.35", "3.7.3"),
                        "3.7.3/etcd3",
                        "3.5.35/etcd3",
                        "cannot downgrade 3.7.3",
                        "through 3.6",
                        "no 3.6 release is bundled"),
                refusesWith(
                        "downgrade without the data's own line",
                        only("3.5.35", "3.6.16"),
                        "3.7.3/etcd3",
                        "3.6.16/etcd3",
                        "cannot downgrade 3.7.3",
                        "no 3.7 release is bundled"),
                refusesWith(
                        "restricted catalog: target no longer bundled",
                        only("3.5.35", "3.6.16"),
                        "3.5.35/etcd3",
                        "3.7.3/etcd3",
                        "3.7.3 is not bundled",
                        "(bundled: 3.5.35, 3.6.16)"),

                // restricted catalogs that still reach the target
                plansWith(
                        "upgrade needs only the lines above the data",
                        only("3.5.35", "3.6.16"),
                        "3.4.23/etcd3",
                        "3.6.16/etcd3",
                        "MinorUpgrade 3.4.23->3.5.35",
                        "MinorUpgrade 3.5.35->3.6.16 v2check 3.5.35"),
                plansWith(
                        "at the floor without a bundled 3.5: no v2 check possible",
                        only("3.6.16"),
                        "3.5.33/etcd3",
                        "3.6.16/etcd3",
                        "MinorUpgrade 3.5.33->3.6.16"),

                // the full bundled catalog, with its pre-3.4 lines
                plansWith(
                        "full catalog: 3.2 goes through the bundled 3.3",
                        BUNDLED,
                        "3.2.32/etcd3",
                        "3.4.23/etcd3",
                        "MinorUpgrade 3.2.32->3.3.27",
                        "MinorUpgrade 3.3.27->3.4.23"),
                plansWith(
                        "full catalog: 3.0 to 3.7",
                        BUNDLED,
                        "3.0.17/etcd3",
                        "3.7.3/etcd3",
                        "MinorUpgrade 3.0.17->3.1.20",
                        "MinorUpgrade 3.1.20->3.2.32",
                        "MinorUpgrade 3.2.32->3.3.27",
                        "MinorUpgrade 3.3.27->3.4.23",
                        "MinorUpgrade 3.4.23->3.5.35",
                        "MinorUpgrade 3.5.35->3.6.16 v2check 3.5.35",
                        "MinorUpgrade 3.6.16->3.7.3"),
                plansWith(
                        "full catalog: 3.4 to 3.3 by snapshot",
                        BUNDLED,
                        "3.4.23/etcd3",
                        "3.3.27/etcd3",
                        "SnapshotDowngrade 3.4.23->3.3.27 by 3.4.23"),
                plansWith(
                        "full catalog: 3.7 to 3.4 as with the 3.4-3.7 releases alone",
                        BUNDLED,
                        "3.7.3/etcd3",
                        "3.4.23/etcd3",
                        "OnlineDowngrade 3.7.3->3.6.16 by 3.7.3",
                        "OnlineDowngrade 3.6.16->3.5.35 by 3.6.16",
                        "SnapshotDowngrade 3.5.35->3.4.23 by 3.5.35"),
                plansWith(
                        "full catalog: etcd2 from 2.2 up to 3.4 as etcd2, converted there",
                        BUNDLED,
                        "2.2.5/etcd2",
                        "3.5.35/etcd3",
                        "MinorUpgrade 2.2.5->2.3.8 etcd2",
                        "MinorUpgrade 2.3.8->3.0.17 etcd2",
                        "MinorUpgrade 3.0.17->3.1.20 etcd2",
                        "MinorUpgrade 3.1.20->3.2.32 etcd2",
                        "MinorUpgrade 3.2.32->3.3.27 etcd2",
                        "MinorUpgrade 3.3.27->3.4.23 etcd2",
                        "ConvertToV3 3.4.23 by 3.4.23",
                        "MinorUpgrade 3.4.23->3.5.35"),
                plansWith(
                        "full catalog: a target below 3.4 converts at the newest migrate on the way",
                        BUNDLED,
                        "2.3.8/etcd2",
                        "3.2.32/etcd3",
                        "MinorUpgrade 2.3.8->3.0.17 etcd2",
                        "MinorUpgrade 3.0.17->3.1.20 etcd2",
                        "MinorUpgrade 3.1.20->3.2.32 etcd2",
                        "ConvertToV3 3.2.32 by 3.2.32"),
                refusesWith(
                        "full catalog: a line without the v3 API cannot hold etcd3 data",
                        BUNDLED,
                        "3.0.17/etcd3",
                        "2.3.8/etcd3",
                        "2.3.8 has no v3 API"),
                plansWith(
                        "full catalog: 3.1 to 3.0 by snapshot",
                        BUNDLED,
                        "3.1.20/etcd3",
                        "3.0.17/etcd3",
                        "SnapshotDowngrade 3.1.20->3.0.17 by 3.1.20"));
    }

    /** A step as a short, comparable line. */
    static String summary(Step step) {
        return switch (step) {
            case PatchFloor p -> "PatchFloor " + p.from() + "->" + p.release().version() + " floor " + p.floor();
            case MinorUpgrade u ->
                "MinorUpgrade " + u.from() + "->" + u.release().version()
                        + (u.storage() == dev.etcdmigrate.version.StorageApi.ETCD2 ? " etcd2" : "")
                        + u.v2Checker().map(c -> " v2check " + c.version()).orElse("");
            case ConvertToV3 c ->
                "ConvertToV3 " + c.from() + " by " + c.release().version();
            case RollbackToV2 r ->
                "RollbackToV2 " + r.from() + "->" + r.target().version() + " by "
                        + r.dumper().version();
            case OnlineDowngrade d ->
                "OnlineDowngrade " + d.from() + "->" + d.older().version() + " by "
                        + d.newer().version();
            case SnapshotDowngrade d ->
                "SnapshotDowngrade " + d.from() + "->" + d.older().version() + " by "
                        + d.newer().version();
        };
    }

    static EtcdVersion from(Step step) {
        return switch (step) {
            case PatchFloor p -> p.from();
            case MinorUpgrade u -> u.from();
            case OnlineDowngrade d -> d.from();
            case SnapshotDowngrade d -> d.from();
            case ConvertToV3 c -> c.from();
            case RollbackToV2 r -> r.from();
        };
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void plansOrRefuses(Case c) throws RefusedTransitionException {
        DataVersion current = DataVersion.parse(c.current());
        DataVersion target = DataVersion.parse(c.target());
        Planner planner = new Planner(c.catalog());
        if (!c.refusal().isEmpty()) {
            RefusedTransitionException e =
                    assertThrows(RefusedTransitionException.class, () -> planner.plan(current, target));
            for (String fragment : c.refusal()) {
                assertTrue(
                        e.getMessage().contains(fragment), () -> "expected '" + fragment + "' in: " + e.getMessage());
            }
            return;
        }
        Plan plan = planner.plan(current, target);
        assertEquals(current, plan.current());
        assertEquals(target, plan.target());
        assertEquals(c.steps(), plan.steps().stream().map(PlannerTest::summary).toList());
    }

    /** Each step starts where the previous one left version.txt, and the last one leaves it at the target. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void resultsChainToTheTarget(Case c) throws RefusedTransitionException {
        if (!c.refusal().isEmpty()) return;
        DataVersion current = DataVersion.parse(c.current());
        DataVersion target = DataVersion.parse(c.target());
        List<Step> steps = new Planner(c.catalog()).plan(current, target).steps();
        EtcdVersion at = current.version();
        dev.etcdmigrate.version.StorageApi storage = current.storage();
        for (Step step : steps) {
            assertEquals(at, from(step), () -> "step starts where the data is: " + step.describe());
            if (step instanceof ConvertToV3) {
                assertEquals(dev.etcdmigrate.version.StorageApi.ETCD2, storage, "only etcd2 data is converted");
                storage = dev.etcdmigrate.version.StorageApi.ETCD3;
            }
            if (step instanceof RollbackToV2) {
                assertEquals(dev.etcdmigrate.version.StorageApi.ETCD3, storage, "only etcd3 data is rolled back");
                assertEquals(target, step.result(), "a rollback goes straight to the target");
                continue;
            }
            assertEquals(storage, step.result().storage(), "storage changes only by conversion: " + step.describe());
            if (step instanceof ConvertToV3) {
                assertTrue(step.result().version().sameLine(at), "a conversion stays in its line: " + step.describe());
            } else if (step instanceof PatchFloor) {
                assertTrue(step.result().version().sameLine(at), "a patch floor stays in its line: " + step.describe());
                assertTrue(at.isOlderThan(step.result().version()), "a patch floor moves up: " + step.describe());
            } else {
                assertFalse(step.result().version().sameLine(at), "a minor step changes the line: " + step.describe());
            }
            at = step.result().version();
        }
        if (steps.isEmpty()) {
            assertTrue(current.version().sameLine(target.version()), "no steps only within a line");
        } else {
            assertEquals(target, steps.getLast().result(), "the last step's result is the target");
        }
    }

    /** An image carries fewer binaries than the catalog knows: "bundled" in a refusal lists what is here to run. */
    @Test
    void aRefusalListsTheReleasesWhoseBinariesAreHere() throws Exception {
        Set<String> here = Set.of("3.4.23", "3.5.35", "3.6.16", "3.7.3");
        RefusedTransitionException refused = assertThrows(
                RefusedTransitionException.class,
                () -> new Planner(() -> BUNDLED, v -> here.contains(v.toString()))
                        .plan(
                                java.util.Optional.of(DataVersion.parse("3.5.35/etcd3")),
                                DataVersion.parse("3.8.0/etcd3")));
        assertTrue(
                refused.getMessage().contains("3.8.0 is not bundled (bundled: 3.4.23, 3.5.35, 3.6.16, 3.7.3)"),
                refused.getMessage());
    }

    @Test
    void everyMinorStepMovesExactlyOneLine() throws RefusedTransitionException {
        List<Step> steps = new Planner(BUNDLED)
                .plan(DataVersion.parse("3.3.27/etcd3"), DataVersion.parse("3.7.3/etcd3"))
                .steps();
        EtcdVersion at = EtcdVersion.parse("3.3.27");
        for (Step step : steps) {
            EtcdVersion next = step.result().version();
            assertEquals(at.line().minor() + 1, next.line().minor(), step.describe());
            at = next;
        }
    }

    @Test
    void stepsNameTheBinariesTheyRun() throws RefusedTransitionException {
        Planner planner = new Planner(BUNDLED);
        List<Step> up = planner.plan(DataVersion.parse("3.5.21/etcd3"), DataVersion.parse("3.6.16/etcd3"))
                .steps();
        assertEquals(List.of("etcd-3.5.35"), binaries(up.get(0)));
        assertEquals(List.of("etcdutl-3.5.35", "etcd-3.5.35", "etcd-3.6.16"), binaries(up.get(1)));
        List<Step> down = planner.plan(DataVersion.parse("3.6.16/etcd3"), DataVersion.parse("3.4.23/etcd3"))
                .steps();
        assertEquals(List.of("etcd-3.6.16", "etcdctl-3.6.16", "etcd-3.5.35"), binaries(down.get(0)));
        // 3.4 has no etcdutl: its etcdctl restores the snapshot
        assertEquals(List.of("etcd-3.5.35", "etcdctl-3.5.35", "etcdctl-3.4.23", "etcd-3.4.23"), binaries(down.get(1)));
    }

    static List<String> binaries(Step step) {
        return step.binaries().stream()
                .map(b -> b.tool() + "-" + b.release().version())
                .toList();
    }

    @Test
    void describeShowsEveryStepWithItsResult() throws RefusedTransitionException {
        Plan plan = new Planner(BUNDLED).plan(DataVersion.parse("3.5.21/etcd3"), DataVersion.parse("3.6.16/etcd3"));
        List<String> lines = describe(plan);
        assertEquals(3, lines.size(), String.join("\n", lines));
        assertEquals("plan 3.5.21/etcd3 -> 3.6.16/etcd3: 2 step(s)", lines.get(0));
        assertTrue(lines.get(1).startsWith("  1. run etcd 3.5.35 once on the 3.5.21 data"), lines.get(1));
        assertTrue(lines.get(1).contains("[then version.txt = 3.5.35/etcd3"), lines.get(1));
        assertTrue(lines.get(2).startsWith("  2. upgrade 3.5.35 -> 3.6.16"), lines.get(2));
        assertTrue(lines.get(2).contains("etcdutl 3.5.35 confirms no v2 content"), lines.get(2));
        assertTrue(lines.get(2).contains("[then version.txt = 3.6.16/etcd3"), lines.get(2));
    }

    /** Which steps run their etcd with --snapshot-count=1 (a MinorUpgrade's or PatchFloor's flag). */
    private static List<Boolean> leavesSnapshot(Plan plan) {
        return plan.steps().stream()
                .map(s -> switch (s) {
                    case MinorUpgrade u -> u.snapshotForNext();
                    case PatchFloor p -> p.snapshotForNext();
                    default -> false;
                })
                .toList();
    }

    @Test
    void theTargetFindsASnapshotAfterAnEtcd3UpgradeOnly() throws RefusedTransitionException {
        Planner planner = new Planner(BUNDLED);
        Plan upTo35 = planner.plan(DataVersion.parse("3.3.27/etcd3"), DataVersion.parse("3.5.35/etcd3"));
        assertEquals(List.of(false, false), leavesSnapshot(upTo35));
        assertEquals(List.of(false, true), leavesSnapshot(upTo35.withSnapshotForTheTarget()));
        assertTrue(
                upTo35.withSnapshotForTheTarget().steps().getLast().describe().contains("--snapshot-count=1"));
        // 3.6 already leaves one for 3.7; the last step does too
        Plan upTo37 = planner.plan(DataVersion.parse("3.4.23/etcd3"), DataVersion.parse("3.7.3/etcd3"));
        assertEquals(List.of(false, true, false), leavesSnapshot(upTo37));
        assertEquals(List.of(false, true, true), leavesSnapshot(upTo37.withSnapshotForTheTarget()));
        // a downgrade, an etcd2 upgrade (one snapshot is the whole v2 store, per apply batch of the replay), a rollback
        for (String[] fromTo : List.of(
                new String[] {"3.5.35/etcd3", "3.4.23/etcd3"},
                new String[] {"3.3.27/etcd2", "3.4.23/etcd2"},
                new String[] {"3.4.23/etcd3", "3.4.23/etcd2"})) {
            Plan plan = planner.plan(DataVersion.parse(fromTo[0]), DataVersion.parse(fromTo[1]));
            assertEquals(plan, plan.withSnapshotForTheTarget(), fromTo[0] + " -> " + fromTo[1]);
        }
        Plan none = planner.plan(DataVersion.parse("3.5.21/etcd3"), DataVersion.parse("3.5.35/etcd3"));
        assertEquals(none, none.withSnapshotForTheTarget());
    }

    private static List<Boolean> judged(Plan plan) {
        return plan.steps().stream()
                .map(s -> s instanceof MinorUpgrade u && u.v2JudgedAtStart())
                .toList();
    }

    @Test
    void etcd36JudgesV2ContentItselfOnlyRightAfterAStepThatRan35() throws RefusedTransitionException {
        Planner planner = new Planner(BUNDLED);
        // 3.4 -> 3.7: the 3.5 step leaves a snapshot, 3.6 starts first; 3.6 leaves its own for 3.7 as before
        Plan upTo37 = planner.plan(DataVersion.parse("3.4.23/etcd3"), DataVersion.parse("3.7.3/etcd3"))
                .withV2JudgedAtStart();
        assertEquals(List.of(true, true, false), leavesSnapshot(upTo37));
        assertEquals(List.of(false, true, false), judged(upTo37));
        assertTrue(
                upTo37.steps().get(1).describe().contains("it refuses v2 content itself at start"),
                upTo37.steps().get(1).describe());
        // a patch floor on 3.5 ran 3.5 too
        Plan fromOld35 = planner.plan(DataVersion.parse("3.5.21/etcd3"), DataVersion.parse("3.6.16/etcd3"))
                .withV2JudgedAtStart();
        assertEquals(List.of(true, false), leavesSnapshot(fromOld35));
        assertEquals(List.of(false, true), judged(fromOld35));
        // data that starts at 3.5: whatever wrote it may have left v2 entries after its last snapshot, so the check
        // comes first
        Plan from35 = planner.plan(DataVersion.parse("3.5.35/etcd3"), DataVersion.parse("3.6.16/etcd3"));
        assertEquals(from35, from35.withV2JudgedAtStart());
        // nothing else changes: a downgrade, an etcd2 upgrade, a rollback, 3.6 -> 3.7
        for (String[] fromTo : List.of(
                new String[] {"3.7.3/etcd3", "3.5.35/etcd3"},
                new String[] {"3.3.27/etcd2", "3.4.23/etcd2"},
                new String[] {"3.4.23/etcd3", "3.4.23/etcd2"},
                new String[] {"3.6.16/etcd3", "3.7.3/etcd3"},
                new String[] {"3.3.27/etcd3", "3.5.35/etcd3"})) {
            Plan plan = planner.plan(DataVersion.parse(fromTo[0]), DataVersion.parse(fromTo[1]));
            assertEquals(plan, plan.withV2JudgedAtStart(), fromTo[0] + " -> " + fromTo[1]);
        }
        // with the target's snapshot, in either order
        Plan both = planner.plan(DataVersion.parse("3.4.23/etcd3"), DataVersion.parse("3.6.16/etcd3"));
        assertEquals(
                both.withSnapshotForTheTarget().withV2JudgedAtStart(),
                both.withV2JudgedAtStart().withSnapshotForTheTarget());
        assertEquals(
                List.of(true, true),
                leavesSnapshot(both.withSnapshotForTheTarget().withV2JudgedAtStart()));
    }

    @Test
    void describeOfAPatchOnlyChangeSaysOnlyVersionTxtChanges() throws RefusedTransitionException {
        Plan plan = new Planner(BUNDLED).plan(DataVersion.parse("3.5.21/etcd3"), DataVersion.parse("3.5.35/etcd3"));
        assertEquals(
                List.of(
                        "plan 3.5.21/etcd3 -> 3.5.35/etcd3: no etcd needs to run",
                        "  same minor line and storage: record 3.5.35/etcd3 in version.txt"),
                describe(plan));
        Plan same = new Planner(BUNDLED).plan(DataVersion.parse("3.5.35/etcd3"), DataVersion.parse("3.5.35/etcd3"));
        assertEquals(List.of("plan 3.5.35/etcd3 -> 3.5.35/etcd3: no etcd needs to run"), describe(same));
    }

    /** The plan as the operator reads it (the plan-made event's message, its one rendering), line by line. */
    private static List<String> describe(Plan plan) {
        return plan.event(0, "").message().lines().toList();
    }

    /**
     * Which release's tool restores a snapshot (the restore mode): the snapshot's own line, walked to the target
     * afterwards; for a cluster member heading to the line the catalog takes the snapshot's line down to by a
     * snapshot restore, that line's tool (a member cannot take that downgrade as a step).
     */
    @ParameterizedTest(name = "snapshot of {0}, target {1}, member {2}: {3}")
    @org.junit.jupiter.params.provider.CsvSource({
        "3.5, 3.4, true, 3.4.23", // the row a member cannot walk: 3.4's etcdctl restores the 3.5 snapshot
        "3.5, 3.4, false, 3.5.35", // a lone member walks down after the restore (SnapshotDowngrade)
        "3.4, 3.3, true, 3.3.27", // every snapshot-restore line alike: catalog data
        "3.1, 3.0, true, 3.0.17",
        "3.5, 3.7, true, 3.5.35", // up: the snapshot's own line, then the walk
        "3.5, 3.5, true, 3.5.35",
        "3.7, 3.5, true, 3.7.3", // down by etcd's downgrade API: a member walks it
        "3.6, 3.5, true, 3.6.16",
        "3.5, 3.3, true, 3.5.35", // two lines down: one restore reaches one line; the walk refuses the rest
    })
    void theRestoreToolIsTheSnapshotsLineOrTheOlderLineAMemberCannotWalkTo(
            String snapshot, String target, boolean member, String release) throws Exception {
        assertEquals(
                release,
                new Planner(BUNDLED)
                        .restoredBy(
                                dev.etcdmigrate.version.MinorLine.parse(snapshot),
                                dev.etcdmigrate.version.MinorLine.parse(target),
                                member)
                        .version()
                        .toString());
    }

    @Test
    void aSnapshotOfALineNotBundledIsRefused() {
        RefusedTransitionException e = assertThrows(
                RefusedTransitionException.class,
                () -> new Planner(BUNDLED)
                        .restoredBy(
                                dev.etcdmigrate.version.MinorLine.parse("3.8"),
                                dev.etcdmigrate.version.MinorLine.parse("3.7"),
                                true));
        assertEquals(ExitStatus.REFUSED, e.status());
        assertTrue(e.getMessage().contains("3.8"), e.getMessage()); // the line no bundled release serves
    }

    @Test
    void theTableCoversEveryStepType() { // keep in step with Step's permits
        Set<String> types = table().flatMap(c -> c.steps().stream())
                .map(s -> s.substring(0, s.indexOf(' ')))
                .collect(Collectors.toSet());
        assertEquals(
                Set.of(
                        "PatchFloor",
                        "MinorUpgrade",
                        "OnlineDowngrade",
                        "SnapshotDowngrade",
                        "ConvertToV3",
                        "RollbackToV2"),
                types);
    }

    // ---- the no-op and a fresh data dir: plans too (what the runner executes is always a Planner's plan)

    private static final dev.etcdmigrate.catalog.CatalogSource UNREADABLE = () -> {
        throw new AssertionError("a restart at the target's line and storage reads no catalog");
    };

    static Stream<String[]> restartsAtTheTargetLine() {
        return Stream.of(
                new String[] {"3.7.3/etcd3", "3.7.3/etcd3"},
                new String[] {"3.7.0/etcd3", "3.7.3/etcd3"},
                new String[] {"3.4.23/etcd2", "3.4.23/etcd2"});
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @MethodSource("restartsAtTheTargetLine")
    void aRestartAtTheTargetsLineIsAPlanWithoutStepsAndReadsNoCatalog(String current, String target) throws Exception {
        Plan plan = new Planner(UNREADABLE, v -> true)
                .plan(java.util.Optional.of(DataVersion.parse(current)), DataVersion.parse(target));
        assertEquals(List.of(), plan.steps());
        assertEquals(DataVersion.parse(current), plan.current());
        assertFalse(plan.fresh());
    }

    @Test
    void withoutTheTargetsBinaryTheCatalogDecides() throws Exception {
        assertThrows(
                AssertionError.class,
                () -> new Planner(UNREADABLE, v -> false)
                        .plan(
                                java.util.Optional.of(DataVersion.parse("3.7.3/etcd3")),
                                DataVersion.parse("3.7.3/etcd3")));
        Plan plan = new Planner(() -> BUNDLED, v -> false)
                .plan(java.util.Optional.of(DataVersion.parse("3.7.3/etcd3")), DataVersion.parse("3.7.3/etcd3"));
        assertEquals(List.of(), plan.steps());
    }

    @Test
    void aDataDirWithoutEtcdDataIsAFreshPlanWhoseTargetIsStillChecked() throws Exception {
        Plan plan = new Planner(() -> BUNDLED, v -> true)
                .plan(java.util.Optional.empty(), DataVersion.parse("3.7.3/etcd3"));
        assertTrue(plan.fresh());
        assertEquals(List.of(), plan.steps());
        assertThrows(
                RefusedTransitionException.class,
                () -> new Planner(() -> BUNDLED, v -> true)
                        .plan(java.util.Optional.empty(), DataVersion.parse("3.7.3/etcd2")),
                "3.7 serves no v2 API");
        assertThrows(
                RefusedTransitionException.class,
                () -> new Planner(() -> BUNDLED, v -> true)
                        .plan(java.util.Optional.empty(), DataVersion.parse("9.9.9/etcd3")),
                "not bundled");
    }
}
