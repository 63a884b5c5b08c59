package dev.etcdmigrate.ondisk;

import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/** What a WAL dir says about the member ({@link WalRecords#read}): ids, indexes, the versions set, conf changes. */
public record WalSummary(
        int segments,
        OptionalLong memberId,
        OptionalLong clusterId,
        OptionalLong lastIndex,
        OptionalLong lastSnapshotIndex,
        List<VersionSet> clusterVersions,
        List<VersionSet> downgrades,
        long v2UserWrites,
        List<ConfChange> confChanges,
        OptionalLong commit,
        long firstSegmentIndex,
        List<Long> confChangesV2) {

    /** The last cluster version an entry set. */
    public Optional<VersionSet> lastClusterVersion() {
        return clusterVersions.isEmpty() ? Optional.empty() : Optional.of(clusterVersions.getLast());
    }
}
