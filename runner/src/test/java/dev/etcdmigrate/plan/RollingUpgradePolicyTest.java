package dev.etcdmigrate.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.version.DataVersion;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What one member of a multi-member cluster may do: up with its patch floors, or down where every line has the downgrade API. */
class RollingUpgradePolicyTest {

    private static final Planner PLANNER = new Planner(Catalog.bundled());

    private static Plan plan(String current, String target) throws RefusedTransitionException {
        return PLANNER.plan(DataVersion.parse(current), DataVersion.parse(target));
    }

    @ParameterizedTest(name = "{0} -> {1} with {2} members")
    @CsvSource({
        "3.6.16/etcd3, 3.7.3/etcd3, 3", // one minor
        "3.5.21/etcd3, 3.6.16/etcd3, 3", // patch floor, then one minor
        "3.5.21/etcd3, 3.5.35/etcd3, 5", // a patch within the line: version.txt only
        "3.4.23/etcd3, 3.7.3/etcd3, 1", // a single member may jump several minors
        "3.7.3/etcd3, 3.4.23/etcd3, 1", // ... and downgrade
        "3.7.3/etcd3, 3.6.16/etcd3, 3", // one minor down through the downgrade API
        "3.6.16/etcd3, 3.5.35/etcd3, 3", // the same, one line lower
        "3.5.35/etcd3, 3.7.3/etcd3, 3", // several minors: walked one leg at a time (RolloutChain)
        "3.4.23/etcd3, 3.7.3/etcd3, 3", // ... with the patch floors on the way
        "3.4.23/etcd3, 3.7.3/etcd3, 5",
        "3.7.3/etcd3, 3.5.35/etcd3, 3", // two downgrade jobs, one minor each
    })
    void allowed(String current, String target, int members) throws Exception {
        Plan plan = plan(current, target);
        assertSame(plan, RollingUpgradePolicy.check(plan, members));
    }

    /**
     * A member walking 3.4 -> 3.7 serves 3.6 between legs, so its WAL gains entries after the 3.5 -> 3.6 step's
     * snapshot: the 3.6 -> 3.7 step runs 3.6 once more to snapshot after them (3.7 replays no v2-format entry).
     */
    @Test
    void aMinorUpgradeAfterServingBetweenLegsTakesItsOwnSnapshot() throws Exception {
        Plan raw = plan("3.4.23/etcd3", "3.7.3/etcd3");
        Plan member = raw.withSnapshotterAfterServing();
        assertEquals(raw.steps().size(), member.steps().size());
        var last = (dev.etcdmigrate.step.MinorUpgrade) member.steps().getLast();
        assertEquals(
                java.util.Optional.of("3.6.16"),
                last.snapshotter().map(r -> r.version().toString()),
                "the 3.7 step's own snapshotter");
        assertTrue(
                ((dev.etcdmigrate.step.MinorUpgrade) raw.steps().getLast())
                        .snapshotter()
                        .isEmpty(),
                "the plan of a lone member relies on the step before");
        for (int i = 0; i < member.steps().size() - 1; i++) {
            assertEquals(raw.steps().get(i), member.steps().get(i), "only the 3.7 step changes");
        }
    }

    @ParameterizedTest(name = "{0} -> {1}: {2}")
    @CsvSource(
            delimiter = '|',
            value = {
                "3.6.16/etcd3 | 3.4.23/etcd3 | new cluster ID",
                "3.7.3/etcd3  | 3.4.23/etcd3 | new cluster ID; downgrade 3.5.35 -> 3.4.23",
                // the way: the restore mode, by the older line's tool, with what its tool lacks (the bump) spelled out
                "3.5.35/etcd3 | 3.4.23/etcd3 | new cluster ID; RESTORE_SNAPSHOT=; RESTORE_SHA256=;"
                        + " RESTORE_BUMP_REVISION=0; TARGET_VERSION=3.4.23; restored by etcdctl 3.4.23",
                "3.4.23/etcd2 | 3.4.23/etcd3 | conversion rebuilds the member dir",
                "3.4.23/etcd3 | 3.4.23/etcd2 | rollback to etcd2 rebuilds the member dir",
                "3.3.27/etcd2 | 3.4.23/etcd2 | etcd2 data is migrated only as a one-member cluster",
            })
    void refused(String current, String target, String fragments) throws Exception {
        Plan plan = plan(current, target);
        RefusedTransitionException e =
                assertThrows(RefusedTransitionException.class, () -> RollingUpgradePolicy.check(plan, 3));
        assertTrue(e.getMessage().contains("3-member cluster"), e.getMessage());
        assertEquals(ExitStatus.REFUSED, e.status()); // refused before anything is touched
        for (String fragment : fragments.split(";")) {
            assertTrue(e.getMessage().contains(fragment.trim()), "'" + fragment.trim() + "' in: " + e.getMessage());
        }
    }

    /** Whether a line downgrades online is the catalog's fact: a catalog without the downgrade API for 3.7 refuses. */
    @Test
    void aLineWithoutTheDowngradeApiInTheCatalogIsRefused(@TempDir Path dir) throws Exception {
        String yaml;
        try (InputStream in = Catalog.class.getResourceAsStream("/dev/etcdmigrate/catalog/catalog.yaml")) {
            yaml = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        int last = yaml.lastIndexOf("method: downgrade-api"); // the newest line's entry
        Path edited = Files.writeString(
                dir.resolve("catalog.yaml"),
                yaml.substring(0, last) + "method: snapshot-restore"
                        + yaml.substring(last + "method: downgrade-api".length()));
        Plan plan = new Planner(Catalog.load(edited))
                .plan(DataVersion.parse("3.7.3/etcd3"), DataVersion.parse("3.6.16/etcd3"));
        RefusedTransitionException e =
                assertThrows(RefusedTransitionException.class, () -> RollingUpgradePolicy.check(plan, 3));
        assertTrue(e.getMessage().contains("new cluster ID"), e.getMessage());
        // the restore mode as the way, in the catalog's words: 3.6's tool, which raises the revision itself
        assertTrue(e.getMessage().contains("TARGET_VERSION=3.6.16"), e.getMessage());
        assertTrue(e.getMessage().contains("restored by etcdutl 3.6.16"), e.getMessage());
        assertTrue(!e.getMessage().contains("RESTORE_BUMP_REVISION"), e.getMessage());
    }

    @ParameterizedTest(name = "{0} -> {1}: {2}")
    @CsvSource(
            delimiter = '|',
            value = {
                "3.6.16/etcd3 | 3.7.3/etcd3  | 3.6 -> 3.7                | minor-upgrade",
                "3.5.21/etcd3 | 3.6.16/etcd3 | 3.5 -> 3.6                | patch-floor minor-upgrade",
                "3.4.23/etcd3 | 3.7.3/etcd3  | 3.4 -> 3.5 -> 3.6 -> 3.7  | minor-upgrade; minor-upgrade; minor-upgrade",
                "3.5.21/etcd3 | 3.7.3/etcd3  | 3.5 -> 3.6 -> 3.7         | patch-floor minor-upgrade; minor-upgrade",
                "3.7.3/etcd3  | 3.5.35/etcd3 | 3.7 -> 3.6 -> 3.5         | online-downgrade; online-downgrade",
                "3.5.21/etcd3 | 3.5.35/etcd3 | 3.5                       | ",
            })
    void aPlanIsCutIntoOneMinorLegs(String current, String target, String chain, String legs) throws Exception {
        RolloutChain cut = RolloutChain.of(RollingUpgradePolicy.check(plan(current, target), 3));
        assertEquals(chain, cut.describe().isEmpty() ? "3.5" : cut.describe());
        assertEquals(
                legs == null ? java.util.List.of() : java.util.List.of(legs.split(";\\s*")),
                cut.legs().stream()
                        .map(l -> String.join(
                                " ", l.steps().stream().map(s -> s.kind()).toList()))
                        .toList());
        for (int i = 1; i < cut.legs().size(); i++) {
            assertEquals(cut.legs().get(i - 1).to(), cut.legs().get(i).from(), "legs chain up");
        }
        assertEquals(cut.legs().size() > 1, cut.multiLeg());
    }
}
