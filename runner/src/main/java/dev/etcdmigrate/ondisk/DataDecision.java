package dev.etcdmigrate.ondisk;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.catalog.Release.DataRecord;
import dev.etcdmigrate.ondisk.DataDetection.Detection;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * The deciding half of {@link DataDetection}: from the records read ({@link DataRecords}) and the catalog
 * (which line writes which record), the storage, the evidence, the newest line that wrote the data and the
 * floor. Pure: no file is read here, so its rules have table tests without etcd (DataDecisionTest).
 */
public final class DataDecision {

    private DataDecision() {}

    public static Detection decide(DataRecords r, Catalog catalog) {
        List<Evidence> evidence = new ArrayList<>();
        Optional<StorageApi> storage = Optional.empty();
        DbRead db = r.db();
        if (r.memberDir()) {
            if (r.hasDb()) {
                Optional<MinorLine> v3 = catalog.releases().stream()
                        .filter(x -> x.line().v3Api())
                        .map(Release::minorLine)
                        .findFirst();
                evidence.add(new Evidence("member/snap/db", "a v3 backend", v3));
                storage = Optional.of(StorageApi.ETCD3);
                db.storageVersion().ifPresent(v -> evidence.add(new Evidence("db meta/storageVersion", v, lineOf(v))));
                if (db.term())
                    evidence.add(new Evidence(
                            "db meta/term", "present", catalog.firstLineRecording(DataRecord.BACKEND_TERM)));
                if (db.confState())
                    evidence.add(new Evidence(
                            "db meta/confState", "present", catalog.firstLineRecording(DataRecord.BACKEND_CONF_STATE)));
                db.clusterVersion()
                        .ifPresent(v -> evidence.add(new Evidence(
                                "db cluster/clusterVersion",
                                v
                                        + (db.consistentIndex() >= 0
                                                ? " (applied to index " + db.consistentIndex() + ")"
                                                : ""),
                                lineOf(v))));
                db.downgradeTarget()
                        .ifPresent(t -> evidence.add(
                                new Evidence("db cluster/downgrade", "enabled, target " + t, Optional.empty())));
                db.failure().ifPresent(f -> evidence.add(new Evidence("member/snap/db", f, Optional.empty())));
            } else if (r.hasWal()) {
                evidence.add(new Evidence(
                        "member/snap/db", "absent, with a WAL: the v2 store only (etcd2 layout)", Optional.empty()));
                storage = Optional.of(StorageApi.ETCD2);
            }
        }
        long v2Outside = 0;
        Optional<String> snapVersion = Optional.empty();
        if (r.snapshot().isPresent()) {
            SnapshotRead s = r.snapshot().get();
            String name = "snapshot " + s.file().getFileName();
            if (s.failure().isPresent()) {
                evidence.add(new Evidence(name, s.failure().get(), Optional.empty()));
            } else {
                snapVersion = s.clusterVersion();
                s.clusterVersion().ifPresent(v -> evidence.add(new Evidence(name + " /0/version", v, lineOf(v))));
                v2Outside = s.keysOutside();
                if (v2Outside > 0)
                    evidence.add(new Evidence(name, v2Outside + " v2 keys outside /0", Optional.empty()));
            }
        }
        Optional<VersionSet> walVersion = Optional.empty();
        long v2WalWrites = 0;
        Optional<String> clusterId = Optional.empty();
        Optional<String> memberId = Optional.empty();
        if (r.hasWal()) {
            if (r.walOption().isPresent())
                evidence.add(new Evidence("WAL", "in --wal-dir " + r.walDir(), Optional.empty()));
            if (r.wal().isPresent()) {
                WalRead w = r.wal().get();
                if (w.summary().isEmpty()) {
                    evidence.add(new Evidence("WAL", w.failure().orElse("unreadable"), Optional.empty()));
                } else {
                    WalSummary summary = w.summary().get();
                    clusterId = summary.clusterId().isPresent()
                            ? Optional.of(Long.toHexString(summary.clusterId().getAsLong()))
                            : Optional.empty();
                    memberId = summary.memberId().isPresent()
                            ? Optional.of(Long.toHexString(summary.memberId().getAsLong()))
                            : Optional.empty();
                    v2WalWrites = summary.v2UserWrites();
                    walVersion = summary.lastClusterVersion();
                    walVersion.ifPresent(v -> evidence.add(new Evidence(
                            "WAL entry " + v.index() + " (" + v.how() + ")", v.version(), lineOf(v.version()))));
                    if (!summary.downgrades().isEmpty()) {
                        VersionSet d = summary.downgrades().getLast();
                        evidence.add(new Evidence(
                                "WAL entry " + d.index() + " (" + d.how() + ")",
                                "target " + d.version(),
                                Optional.empty()));
                    }
                    if (walVersion.isEmpty()) {
                        evidence.add(new Evidence(
                                "WAL",
                                summary.lastIndex().isPresent()
                                        ? "entries up to index "
                                                + summary.lastIndex().getAsLong() + ", none sets the cluster version"
                                        : "no entries",
                                Optional.empty()));
                    }
                    if (v2WalWrites > 0)
                        evidence.add(new Evidence("WAL", v2WalWrites + " v2 writes to user keys", Optional.empty()));
                }
            }
        } else if (r.memberDir()) {
            evidence.add(new Evidence(
                    r.walOption().map(w -> "--wal-dir " + w).orElse("member/wal"), "no WAL", Optional.empty()));
        }
        if (storage.equals(Optional.of(StorageApi.ETCD3)) && !db.v3Keys() && (v2Outside > 0 || v2WalWrites > 0)) {
            // a 3.x etcd ran here but only the v2 API was written: etcd2 data kept by a 3.x line
            storage = Optional.of(StorageApi.ETCD2);
            evidence.add(
                    new Evidence("keys", "v2 keys and no v3 key: etcd2 data written by a 3.x line", Optional.empty()));
        }
        Optional<ClusterVersion> current = currentClusterVersion(r, snapVersion, walVersion);
        Optional<MinorLine> evidenceMax =
                evidence.stream().map(Evidence::line).flatMap(Optional::stream).max(Comparator.naturalOrder());
        Optional<MinorLine> floor = max(
                current.flatMap(c -> lineOf(c.version())), db.storageVersion().flatMap(DataDecision::lineOf));
        if (floor.isEmpty()) floor = evidenceMax; // nothing current recorded: what the records prove
        Optional<MinorLine> line = max(floor, evidenceMax);
        if (storage.isEmpty()) line = Optional.empty(); // nothing etcd wrote: no line
        List<Member> members = !db.members().isEmpty()
                ? db.members()
                : r.snapshot()
                        .map(SnapshotRead::members)
                        .filter(m -> !m.isEmpty())
                        .orElseGet(() -> r.wal().map(WalRead::members).orElse(List.of()));
        Optional<String> unreadable = db.failure()
                .map(f -> "member/snap/db: " + f)
                .or(() -> r.snapshot()
                        .flatMap(
                                s -> s.failure().map(f -> "snapshot " + s.file().getFileName() + ": " + f)));
        return new Detection(
                r.dataDir(),
                r.hasWal() ? Optional.of(r.walDir()) : Optional.empty(),
                storage,
                line,
                storage.isEmpty() ? Optional.empty() : floor,
                List.copyOf(evidence),
                current,
                db.storageVersion(),
                clusterId,
                memberId,
                members,
                db.bytes(),
                db.bytesInUse(),
                db.alarms(),
                r.walSegments(),
                r.snapshotFile(),
                v2Outside,
                v2WalWrites,
                db.v3Keys(),
                db.downgradeTarget(),
                unreadable,
                r.damage());
    }

    /** The newest record of the cluster version: the one at the highest raft index. */
    private static Optional<ClusterVersion> currentClusterVersion(
            DataRecords r, Optional<String> snapVersion, Optional<VersionSet> walVersion) {
        long best = Long.MIN_VALUE;
        Optional<ClusterVersion> current = Optional.empty();
        if (snapVersion.isPresent() && r.snapshot().get().index() > best) {
            best = r.snapshot().get().index();
            current = Optional.of(new ClusterVersion(
                    snapVersion.get(), "snapshot " + r.snapshot().get().file().getFileName()));
        }
        // the db is applied up to its consistent index, at or after the snapshot
        if (r.db().clusterVersion().isPresent() && r.db().consistentIndex() >= best) {
            best = r.db().consistentIndex();
            current = Optional.of(new ClusterVersion(r.db().clusterVersion().get(), "member/snap/db"));
        }
        if (walVersion.isPresent() && walVersion.get().index() > best) {
            current = Optional.of(new ClusterVersion(
                    walVersion.get().version(), "WAL entry " + walVersion.get().index()));
        }
        return current;
    }

    /** The minor line of a version etcd recorded ("3.5.0"), if it is one. */
    static Optional<MinorLine> lineOf(String version) {
        return DataDetection.lineOf(version);
    }

    static Optional<MinorLine> max(Optional<MinorLine> a, Optional<MinorLine> b) {
        if (a.isEmpty()) return b;
        if (b.isEmpty()) return a;
        return Optional.of(a.get().compareTo(b.get()) >= 0 ? a.get() : b.get());
    }
}
