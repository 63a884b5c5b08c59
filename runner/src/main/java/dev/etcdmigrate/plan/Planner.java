package dev.etcdmigrate.plan;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.CatalogSource;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.catalog.Release.DowngradeMethod;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.step.ConvertToV3;
import dev.etcdmigrate.step.MinorUpgrade;
import dev.etcdmigrate.step.OnlineDowngrade;
import dev.etcdmigrate.step.PatchFloor;
import dev.etcdmigrate.step.RollbackToV2;
import dev.etcdmigrate.step.SnapshotDowngrade;
import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Pure planning: (data version, target, catalog) -> ordered steps, or a refusal before anything is
 * touched. Upgrades go one minor at a time through the catalog's bundled lines, inserting a patch
 * floor where a line demands one; downgrades go one minor back at a time by the line's method.
 */
public final class Planner {

    private final CatalogSource catalogSource;
    private Catalog catalog; // read on the first plan that needs it
    // whose binaries are here to run: "bundled" in a refusal lists these, not every catalog release (an image may
    // carry fewer than the catalog knows; a missing binary of a planned step is the binary check's to refuse)
    private final Predicate<EtcdVersion> installed;

    /** A planner for whom every catalog release is here to run. */
    public Planner(Catalog catalog) {
        this.catalogSource = () -> catalog;
        this.catalog = catalog;
        this.installed = v -> true;
    }

    /**
     * @param catalog asked for only when a plan needs a catalog fact (a restart at the target needs none)
     * @param installed whether a release's etcd is here to run
     */
    public Planner(CatalogSource catalog, Predicate<EtcdVersion> installed) {
        this.catalogSource = catalog;
        this.installed = installed;
    }

    /**
     * The plan for a data dir: {@code current} is what wrote it (empty: no etcd data). A restart at the
     * target's line and storage only needs the target's etcd to be installed: that plan has no steps and
     * parses no catalog.
     */
    public Plan plan(Optional<DataVersion> current, DataVersion target)
            throws RefusedTransitionException, UsageException {
        if (current.isPresent()
                && current.get().storage() == target.storage()
                && current.get().version().sameLine(target.version())
                && installed.test(target.version())) {
            return new Plan(current.get(), target, List.of());
        }
        if (catalog == null) {
            catalog = catalogSource.get();
        }
        if (current.isEmpty()) {
            plan(target, target); // a fresh dir still gets its target checked (bundled, storage supported)
            return Plan.fresh(target);
        }
        return plan(current.get(), target);
    }

    /** The plan with every catalog fact at hand (a Planner made with its catalog, or after the catalog was read). */
    public Plan plan(DataVersion current, DataVersion target) throws RefusedTransitionException {
        if (catalog == null) {
            throw new IllegalStateException("the catalog is read by plan(Optional, DataVersion) first");
        }
        Release targetRelease = catalog.release(target.version()).orElseThrow(() -> notBundled(target.version()));
        if (target.storage() == StorageApi.ETCD3 && !targetRelease.line().v3Api()) {
            throw new RefusedTransitionException(
                    "etcd " + targetRelease.version() + " has no v3 API, so it cannot serve etcd3 data");
        }
        if (target.storage() == StorageApi.ETCD2 && targetRelease.line().v2Api() == Release.V2Api.NEVER) {
            throw new RefusedTransitionException(
                    "etcd " + targetRelease.version() + " does not serve the v2 API, so it cannot"
                            + " hold etcd2 data (bundled lines that do: "
                            + catalog.releases().stream()
                                    .filter(r -> r.line().v2Api() != Release.V2Api.NEVER)
                                    .map(r -> r.minorLine().toString())
                                    .distinct()
                                    .toList()
                            + ")");
        }
        if (current.storage() == StorageApi.ETCD3 && target.storage() == StorageApi.ETCD2) {
            // a logical dump and load: any line with the v3 API can dump, the target's line loads
            Release dumper = catalog.line(current.version().line())
                    .orElseThrow(() -> new RefusedTransitionException(
                            "cannot roll " + current + " back to etcd2: the dump runs the data's own line, and no "
                                    + current.version().line() + " release is bundled (bundled: "
                                    + bundled() + ")"));
            return new Plan(current, target, List.of(new RollbackToV2(current.version(), dumper, targetRelease)));
        }
        if (current.storage() == StorageApi.ETCD3
                && catalog.line(current.version().line())
                        .map(r -> !r.line().v3Api())
                        .orElse(false)) {
            throw new RefusedTransitionException(
                    "etcd " + current.version() + " cannot have written etcd3 data; check version.txt");
        }
        MinorLine from = current.version().line();
        MinorLine to = targetRelease.minorLine();
        if (current.storage() == StorageApi.ETCD2) {
            return new Plan(current, target, fromEtcd2(current.version(), target.storage(), to));
        }
        List<Step> steps = from.equals(to)
                ? List.of()
                : from.isOlderThan(to)
                        ? upgrade(current.version(), to, StorageApi.ETCD3)
                        : downgrade(current.version(), to);
        return new Plan(current, target, steps);
    }

    /**
     * etcd2 data goes up in etcd2 storage; to reach etcd3 it is converted at the newest bundled release
     * between the data's line and the target's whose etcdctl has {@code migrate} (3.0-3.4), then goes on
     * as etcd3. It never goes down: no etcd line downgrades v2 data.
     */
    private List<Step> fromEtcd2(EtcdVersion start, StorageApi targetStorage, MinorLine to)
            throws RefusedTransitionException {
        if (to.isOlderThan(start.line())) {
            throw new RefusedTransitionException("etcd2 data written by " + start + " cannot be downgraded to " + to);
        }
        if (targetStorage == StorageApi.ETCD2) {
            return start.line().equals(to) ? List.of() : upgrade(start, to, StorageApi.ETCD2);
        }
        Release converter = catalog.releases().reversed().stream()
                .filter(r -> r.line().tools().etcdctlMigrate()
                        && !r.minorLine().isOlderThan(start.line())
                        && !to.isOlderThan(r.minorLine()))
                .findFirst()
                .orElseThrow(() -> new RefusedTransitionException(
                        "cannot convert etcd2 data written by " + start + " to etcd3 on the way"
                                + " to " + to
                                + ": no bundled release between them has `etcdctl migrate` (bundled releases that have it: "
                                + catalog.releases().stream()
                                        .filter(r -> r.line().tools().etcdctlMigrate())
                                        .map(Release::version)
                                        .toList()
                                + "; bundled: " + bundled() + ")"));
        List<Step> steps = new ArrayList<>();
        if (!start.line().equals(converter.minorLine())) {
            steps.addAll(upgrade(start, converter.minorLine(), StorageApi.ETCD2));
        }
        steps.add(new ConvertToV3(
                steps.isEmpty() ? start : steps.getLast().result().version(), converter));
        if (!converter.minorLine().equals(to)) {
            steps.addAll(upgrade(converter.etcdVersion(), to, StorageApi.ETCD3));
        }
        return steps;
    }

    private List<Step> upgrade(EtcdVersion start, MinorLine to, StorageApi storage) throws RefusedTransitionException {
        List<Step> steps = new ArrayList<>();
        EtcdVersion at = start;
        for (Release next : catalog.releases()) {
            MinorLine line = next.minorLine();
            if (!at.line().isOlderThan(line) || to.isOlderThan(line)) {
                continue;
            }
            if (storage == StorageApi.ETCD2) {
                if (next.line().v2Api() == Release.V2Api.NEVER
                        || !next.line().upgrade().fromLine().equals(at.line())) {
                    throw new RefusedTransitionException("cannot upgrade etcd2 data from " + at + " to "
                            + next.version()
                            + ": etcd " + line
                            + (next.line().v2Api() == Release.V2Api.NEVER
                                    ? " does not serve the v2 API"
                                    : " opens data of " + next.line().upgrade().from() + " only"));
                }
                steps.add(MinorUpgrade.ofEtcd2(at, next));
                at = next.etcdVersion();
                continue;
            }
            MinorLine opens = next.line().upgrade().fromLine();
            if (!opens.equals(at.line())) {
                throw new RefusedTransitionException("cannot upgrade " + at + " to " + next.version() + ": etcd " + line
                        + " opens data of " + opens + " only, and no bundled "
                        + at.line().major() + "." + (at.line().minor() + 1)
                        + " release can take the data there (skipping a minor is unsupported; bundled: "
                        + bundled() + ")");
            }
            Optional<EtcdVersion> floor = next.line().upgrade().minimumPatch();
            if (floor.isPresent() && at.isOlderThan(floor.get())) {
                Release patch = catalog.line(at.line())
                        .filter(r -> !r.etcdVersion().isOlderThan(floor.get()))
                        .orElseThrow(() -> new RefusedTransitionException("cannot upgrade " + start + ": etcd " + line
                                + " needs the data to have run " + floor.get() + " or newer first, and no such "
                                + floor.get().line() + " release is bundled (bundled: " + bundled() + ")"));
                steps.add(new PatchFloor(at, patch, floor.get()));
                at = patch.etcdVersion();
            }
            Optional<Release> snapshotter = Optional.empty();
            if (next.line().upgrade().previousSnapshotFirst()) {
                // the step that just ran the previous line leaves the snapshot; else that line runs once more
                Step last = steps.isEmpty() ? null : steps.getLast();
                if (last instanceof MinorUpgrade up) steps.set(steps.size() - 1, up.withSnapshotForNext());
                else if (last instanceof PatchFloor floorStep)
                    steps.set(steps.size() - 1, floorStep.withSnapshotForNext());
                else snapshotter = Optional.of(snapshotter(at, next));
            }
            steps.add(new MinorUpgrade(at, next, v2Checker(at, next), snapshotter));
            at = next.etcdVersion();
        }
        if (!at.line().equals(to)) {
            throw new RefusedTransitionException(
                    "cannot upgrade " + start + " to " + to + ": no bundled release chain reaches it");
        }
        return steps;
    }

    /** Where the next line refuses v2 content and the data's line can check for it, that check runs first. */
    private Optional<Release> v2Checker(EtcdVersion at, Release next) {
        if (!next.line().v2ResidueRefused()) {
            return Optional.empty();
        }
        return catalog.line(at.line())
                .filter(r -> !r.line().v2ResidueRefused() && r.line().tools().checkV2Store());
    }

    /** The bundled release of the data's line, to take the snapshot the next line needs first. */
    private Release snapshotter(EtcdVersion at, Release next) throws RefusedTransitionException {
        return catalog.line(at.line())
                .orElseThrow(() -> new RefusedTransitionException("cannot upgrade " + at
                        + " to " + next.version() + ": etcd " + next.minorLine() + " needs etcd " + at.line()
                        + " to take a snapshot first, and no " + at.line() + " release is bundled"));
    }

    private List<Step> downgrade(EtcdVersion start, MinorLine to) throws RefusedTransitionException {
        List<Step> steps = new ArrayList<>();
        EtcdVersion at = start;
        while (to.isOlderThan(at.line())) {
            EtcdVersion here = at;
            Release newer = catalog.line(here.line())
                    .orElseThrow(() -> new RefusedTransitionException(
                            "cannot downgrade " + here + ": a downgrade runs the data's own line first, and no "
                                    + here.line() + " release is bundled (bundled: " + bundled() + ")"));
            Release.Downgrade how = newer.line().downgrade();
            if (how.method() == DowngradeMethod.NONE) {
                throw new RefusedTransitionException(
                        "etcd " + here.line() + " data cannot be downgraded to " + how.toLine());
            }
            Release older = catalog.line(how.toLine())
                    .orElseThrow(() -> new RefusedTransitionException("cannot downgrade " + here + " to " + to
                            + ": it goes one minor at a time through " + how.toLine() + ", and no " + how.toLine()
                            + " release is bundled (bundled: " + bundled() + ")"));
            if (how.method() == DowngradeMethod.SNAPSHOT_RESTORE
                    && older.line().tools().snapshotRestore() == Release.RestoreTool.NONE) {
                throw new RefusedTransitionException("cannot downgrade " + here + " to " + older.version() + ": etcd "
                        + older.minorLine() + " cannot restore a v3 snapshot");
            }
            steps.add(
                    how.method() == DowngradeMethod.DOWNGRADE_API
                            ? new OnlineDowngrade(here, newer, older)
                            : new SnapshotDowngrade(here, newer, older));
            at = older.etcdVersion();
        }
        return steps;
    }

    /**
     * The bundled release whose tool restores a snapshot written by etcd {@code snapshotLine} for a start heading to
     * {@code target}'s line: the snapshot's own line, whose data the walk after the restore takes on to the target.
     * For a member of a cluster ({@code member}) whose target is the line the catalog takes the snapshot's line down
     * to by a snapshot restore ({@code downgrade.method: snapshot-restore}), that older line's tool restores the
     * snapshot itself: the walk could not (a {@link SnapshotDowngrade} gives one member a new cluster ID, which
     * {@link RollingUpgradePolicy} refuses), while the restore gives every member the new one alike. A lone member
     * keeps the snapshot's own tool and walks down with that step, which keeps the revision the newer tool raised.
     */
    public Release restoredBy(MinorLine snapshotLine, MinorLine target, boolean member)
            throws RefusedTransitionException, UsageException {
        if (catalog == null) {
            catalog = catalogSource.get();
        }
        Release own = catalog.line(snapshotLine)
                .orElseThrow(() -> new RefusedTransitionException("a snapshot written by etcd " + snapshotLine
                        + " is restored with that line's tool, and no " + snapshotLine + " release is bundled"
                        + " (bundled: " + bundled() + ")"));
        Release.Downgrade down = own.line().downgrade();
        if (!member
                || down.method() != DowngradeMethod.SNAPSHOT_RESTORE
                || !down.toLine().equals(target)) {
            return own;
        }
        Release older = catalog.line(target)
                .orElseThrow(() -> new RefusedTransitionException(
                        "target " + target + " is not bundled (bundled: " + bundled() + ")"));
        if (older.line().tools().snapshotRestore() == Release.RestoreTool.NONE) {
            throw new RefusedTransitionException("etcd " + target + " has no tool that restores a v3 snapshot, so a"
                    + " snapshot written by etcd " + snapshotLine + " cannot be restored into it");
        }
        return older;
    }

    /**
     * A target the catalog does not bundle. Another patch of a bundled minor (kubeadm's image tag 3.5.21,
     * the Kubernetes image's rollback recipe 2.2.1) is answered with the bundled patch of that minor, the
     * value to set; any other with the list of what is bundled.
     */
    private RefusedTransitionException notBundled(EtcdVersion target) {
        return catalog.line(target.line())
                .map(sameMinor -> new RefusedTransitionException("target " + target + " is not bundled; the bundled "
                        + target.line() + " release is " + sameMinor.version() + ": set --target-version="
                        + sameMinor.version() + " (TARGET_VERSION=" + sameMinor.version() + ")"))
                .orElseGet(() -> new RefusedTransitionException(
                        "target " + target + " is not bundled (bundled: " + bundled() + ")"));
    }

    /** The catalog's releases whose binaries are here, as a refusal lists them. */
    private String bundled() {
        String here = catalog.releases().stream()
                .filter(r -> installed.test(r.etcdVersion()))
                .map(Release::version)
                .collect(Collectors.joining(", "));
        return here.isEmpty() ? "none of the catalog's " + catalog.versionList() + " is here" : here;
    }
}
