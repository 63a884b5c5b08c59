package dev.etcdmigrate.inspect;

import dev.etcdmigrate.event.DecisionEvent;
import java.util.List;

/**
 * {@code inspect}'s report: what the data says, offline, as values ({@link InspectCommand} reads and builds it;
 * {@link InspectText} and {@link InspectJson} render it). The JSON form is these records, every component a
 * field (docs/inspect.md documents it; fields are only ever added).
 */
public record InspectReport(
        int schema,
        String dataDir,
        String access,
        Long heldByPid,
        boolean holdsEtcdData,
        String storage,
        String writtenBy,
        String floor,
        boolean pinned,
        List<EvidenceItem> evidence,
        Label label,
        String clusterVersion,
        String clusterVersionFrom,
        String storageVersion,
        String clusterId,
        String memberId,
        List<MemberItem> members,
        Db db,
        List<AlarmItem> alarms,
        Wal wal,
        V2Store v2,
        String downgradeTarget,
        List<Backup> backups,
        List<Target> targets,
        DamageSection damage) {

    /** The report's schema version: bumped only if a field changes meaning or goes away. */
    public static final int SCHEMA = 1;

    public record EvidenceItem(String where, String found, String line) {}

    public record MemberItem(String id, String name, List<String> peerUrls, boolean learner) {}

    public record AlarmItem(String type, String memberId) {}

    public record Label(String source, String value, String verdict, String reason) {}

    public record Db(String path, Long bytes, Long bytesInUse) {}

    public record Wal(String dir, int segments) {}

    public record V2Store(
            String snapshot, long keysOutsideMembership, long v2WritesInWal, List<String> linesRefusingIt) {}

    public record Backup(String path, String version) {}

    /**
     * {@code legs}: for a member of a cluster (--initial-cluster names several) whose plan crosses several minors,
     * the restarts it walks them in (the same legs `plan` shows); empty otherwise.
     */
    public record Target(
            String version, String storage, List<String> steps, String refused, List<DecisionEvent.PlannedLeg> legs) {
        public Target {
            legs = legs == null ? List.of() : List.copyOf(legs);
        }

        public Target(String version, String storage, List<String> steps, String refused) {
            this(version, storage, steps, refused, List.of());
        }
    }

    /**
     * Damage the readers met (null when none): each finding as "file (where): expected", that inspect changed
     * nothing, and the way back a start would name (the runner's newest backup of this member, else an etcd
     * snapshot restore for its name and peers).
     */
    public record DamageSection(List<String> files, String changed, String backup, String wayBack) {}
}
