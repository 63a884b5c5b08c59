package dev.etcdmigrate.decide;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.version.MinorLine;
import java.util.Optional;

/**
 * A label (version.txt or --initial-version) against what the data says: pure, so both the read of the data
 * dir ({@link DataDirState}) and the decision ({@link StartDecision}) judge alike without needing each other.
 */
public final class LabelJudgement {

    private LabelJudgement() {}

    /** How a label stands against the data. */
    public enum Verdict {
        AGREES,
        INTERRUPTED_STEP,
        CONTRADICTED,
        /** The label's line never ran on the data: it records its cluster below the line the label's upgrades from. */
        AHEAD_OF_DATA
    }

    /**
     * A label (version.txt or --initial-version) against the data. Against the oldest line that may run on it
     * now ({@link DataDetection.Detection#floor}): at or above it agrees (a newer etcd may have run without the
     * cluster version having moved yet: it lags in a cluster, and for seconds after a start). Below it, the one
     * tolerated case is the next line after the label when this runner ran steps here (its
     * .etcd-migrate/etcd-output.log): an upgrade step interrupted after its etcd ran, before version.txt was
     * written, which the plan resumes. Everything else is contradicted. Against what the data records as its
     * cluster (or storage) version ({@code recorded}: the floor where the data pins it, else empty): a line's etcd
     * runs only where the cluster is at the line it upgrades from (catalog: upgrade.from) or newer (a lone member
     * moves it to its own line at its first commit; etcd 3.7 panics on a 3.5 cluster's data), so a label above that
     * is ahead of the data: no etcd of the label's line ran on it, and the target may not open it.
     */
    public static Verdict judge(
            MinorLine label,
            Optional<MinorLine> floor,
            Optional<MinorLine> recorded,
            boolean stepsRanHere,
            Catalog catalog) {
        Optional<MinorLine> needs = recorded.isPresent() ? opensDataFrom(label, catalog) : Optional.empty();
        if (needs.isPresent() && recorded.get().isOlderThan(needs.get())) return Verdict.AHEAD_OF_DATA;
        if (floor.isEmpty() || !label.isOlderThan(floor.get())) return Verdict.AGREES;
        Optional<MinorLine> next = catalog.releases().stream()
                .map(r -> r.minorLine())
                .filter(label::isOlderThan)
                .findFirst();
        if (stepsRanHere && next.equals(floor)) return Verdict.INTERRUPTED_STEP;
        return Verdict.CONTRADICTED;
    }

    /** The floor where the data pins it (a cluster or storage version recorded), else empty. */
    public static Optional<MinorLine> recordedFloor(DataDetection.Detection detected) {
        return detected.pinned() ? detected.floor() : Optional.empty();
    }

    /** The oldest line whose data the line's etcd opens in place (catalog: upgrade.from); empty if not bundled. */
    public static Optional<MinorLine> opensDataFrom(MinorLine line, Catalog catalog) {
        return catalog.line(line).map(r -> r.line().upgrade().fromLine());
    }
}
