package dev.etcdmigrate.ondisk;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.catalog.Release.DataRecord;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Which etcd wrote a data dir, from the files etcd wrote, offline and read-only (no etcd is started, no
 * lock is taken, so it also works while an etcd holds the data): the v3 backend (member/snap/db: the
 * storage version 3.6+ records, the cluster version 3.0+ saves, the meta keys 3.5+ writes), the newest
 * snapshot's v2 store (/0/version, /0/members), the WAL (its metadata, the cluster version changes after
 * the snapshot), and the layout. Which line writes which record is catalog data ({@code line.records}).
 *
 * <p>Two lines come out. {@link Detection#line} is the newest line that has written the data (every
 * record counts, also one a later downgrade left behind). {@link Detection#floor} is the oldest line that
 * may run on the data now: the cluster version the data records (etcd refuses to run a line older than
 * its cluster version) and the storage version; only where neither is recorded, the newest line a record
 * proves. A label older than the floor is contradicted by the data.
 */
public final class DataDetection {

    /** Jackson's databind only where a full report parses members: a migration's start loads none of it. */
    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper();
    }

    private static final Pattern SEMVER = Pattern.compile("^(\\d+)\\.(\\d+)\\.\\d+");
    /** mvcc's key bucket holds every revision: enough to know whether any v3 key was ever written, not how many. */
    private static final int MEMBER_LIMIT = 1000;

    /** One fact read from the data, where it was read, and the line it proves wrote the data (if any). */
    public record Evidence(String where, String found, Optional<MinorLine> line) {
        @Override
        public String toString() {
            return where + ": " + found + line.map(l -> " (etcd " + l + "+)").orElse("");
        }
    }

    public record Member(String id, String name, List<String> peerUrls, boolean learner) {}

    /** An alarm recorded in the db (etcd's alarm bucket): its type and the member that raised it. */
    public record Alarm(String type, String memberId) {}

    /** The cluster version the data records now and where: the newest of the db, the snapshot and the WAL. */
    public record ClusterVersion(String version, String where) {}

    public record Detection(
            Path dataDir,
            Optional<Path> walDir,
            Optional<StorageApi> storage,
            Optional<MinorLine> line,
            Optional<MinorLine> floor,
            List<Evidence> evidence,
            Optional<ClusterVersion> clusterVersion,
            Optional<String> storageVersion,
            Optional<String> clusterId,
            Optional<String> memberId,
            List<Member> members,
            OptionalLong dbBytes,
            OptionalLong dbBytesInUse,
            List<Alarm> alarms,
            int walSegments,
            Optional<Path> snapshot,
            long v2KeysOutsideMembership,
            long v2WritesInWal,
            boolean v3KeysPresent,
            Optional<String> downgradeTarget,
            Optional<String> unreadable) {

        /**
         * Whether the data pins its line: it records a cluster or storage version. Records that only some
         * line onwards writes (3.5's meta keys, a db at all) give a lower bound, not the line: an etcd that
         * ran for a second leaves them too.
         */
        public boolean pinned() {
            return storage.isPresent() && (clusterVersion.isPresent() || storageVersion.isPresent());
        }

        /** Whether the data holds anything etcd wrote. */
        public boolean holdsEtcdData() {
            return storage.isPresent() || !evidence.isEmpty();
        }

        public String evidenceText() {
            return String.join("; ", evidence.stream().map(Evidence::toString).toList());
        }
    }

    private DataDetection() {}

    /**
     * Reads the data dir. {@code walDir}: etcd's --wal-dir when set. {@code full}: the whole report
     * (inspect: members, alarms, sizes, every source read). Without it, only what decides the line and the
     * storage, as a migration's start needs: the snapshot only when the db records no cluster version (the
     * db is applied at or after it) or v2 keys may decide the storage, the WAL only when both are silent.
     */
    public static Detection detect(Path dataDir, Optional<Path> walDir, Catalog catalog, boolean full)
            throws IOException {
        return new Reader(dataDir.toAbsolutePath().normalize(), walDir, catalog, full).read(full);
    }

    /**
     * The cheap part of the floor, for a start whose label is then judged: the cluster and storage
     * versions the db records (a few pages of bbolt, no catalog, no snapshot, no WAL). Empty when there is
     * no db or it records neither (then only {@link #detect} can tell); an unreadable db is left to it too.
     */
    public static Optional<MinorLine> recordedFloor(Path dataDir) {
        Path db = dataDir.resolve("member").resolve("snap").resolve("db");
        if (!Files.isRegularFile(db)) return Optional.empty();
        try {
            Optional<MinorLine> cluster = BackendStorageVersion.value(db, "cluster", "clusterVersion")
                    .map(DataDetection::utf8)
                    .flatMap(DataDetection::lineOf);
            Optional<MinorLine> storage = BackendStorageVersion.read(db).flatMap(DataDetection::lineOf);
            return max(cluster, storage);
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /**
     * Whether the data records {@code line} or newer: the db's cluster or storage version ({@link #recordedFloor}),
     * else the last cluster version an entry of the WAL sets. An etcd stopped (killed, power cut) soon after it
     * started may have logged its cluster version update in the WAL without applying it to the db, and an older
     * line's etcd replays that entry and panics ("invalid downgrade"). Reads the whole WAL when the db does not
     * decide: for a step about to run an older line's etcd, not for every start. An unreadable WAL adds nothing.
     */
    public static boolean recordsLine(Path dataDir, Optional<Path> walDir, MinorLine line) {
        if (recordedFloor(dataDir).filter(f -> !f.isOlderThan(line)).isPresent()) return true;
        Path wal = walDir.orElse(dataDir.resolve("member").resolve("wal"));
        if (!Files.isDirectory(wal)) return false;
        try {
            return WalRecords.read(wal)
                    .lastClusterVersion()
                    .flatMap(v -> lineOf(v.version()))
                    .filter(l -> !l.isOlderThan(line))
                    .isPresent();
        } catch (IOException e) {
            return false;
        }
    }

    private static final class Reader {
        final Path dataDir;
        final Path member;
        final Optional<Path> walOption;
        final Catalog catalog;
        final List<Evidence> evidence = new ArrayList<>();
        final TreeMap<String, Member> members = new TreeMap<>();
        final List<Alarm> alarms = new ArrayList<>();
        Optional<StorageApi> storage = Optional.empty();
        Optional<String> storageVersion = Optional.empty();
        Optional<String> clusterId = Optional.empty();
        Optional<String> memberId = Optional.empty();
        Optional<String> downgrade = Optional.empty();
        Optional<String> unreadable = Optional.empty();
        OptionalLong dbBytes = OptionalLong.empty();
        OptionalLong dbInUse = OptionalLong.empty();
        Optional<Path> snapshot = Optional.empty();
        long v2Outside;
        long v2WalWrites;
        boolean v3Keys;
        int segments;
        boolean membersFromDb;
        // the cluster version per source, with the raft index it stands at
        Optional<String> dbClusterVersion = Optional.empty();
        long dbIndex = -1;
        Optional<String> snapClusterVersion = Optional.empty();
        long snapIndex = -1;
        Optional<WalRecords.VersionSet> walClusterVersion = Optional.empty();

        /** The whole report (inspect): members, alarms, sizes, every source; else only what decides the line and storage. */
        final boolean full;

        Reader(Path dataDir, Optional<Path> walOption, Catalog catalog, boolean full) {
            this.full = full;
            this.dataDir = dataDir;
            this.member = dataDir.resolve("member");
            this.walOption = walOption;
            this.catalog = catalog;
        }

        Detection read(boolean readWal) throws IOException {
            Path wal = walOption.orElse(member.resolve("wal"));
            boolean hasWal = hasWal(wal);
            Path db = member.resolve("snap").resolve("db");
            boolean hasDb = Files.isRegularFile(db);
            if (Files.isDirectory(member)) {
                Optional<MinorLine> v3 = catalog.releases().stream()
                        .filter(r -> r.line().v3Api())
                        .map(Release::minorLine)
                        .findFirst();
                if (hasDb) {
                    evidence.add(new Evidence("member/snap/db", "a v3 backend", v3));
                    storage = Optional.of(StorageApi.ETCD3);
                    backend(db);
                } else if (hasWal) {
                    evidence.add(new Evidence(
                            "member/snap/db",
                            "absent, with a WAL: the v2 store only (etcd2 layout)",
                            Optional.empty()));
                    storage = Optional.of(StorageApi.ETCD2);
                }
            }
            // whether v2 keys decide the storage: a 3.x db without a v3 key may hold etcd2 data
            boolean v2Decides = hasDb && !v3Keys;
            snapshot = V2SnapshotReader.newestSnapshot(member);
            // the db is applied at or after the newest snapshot: where it records the cluster version, a
            // migration's start need not parse the snapshot's JSON
            if (snapshot.isPresent() && (full || dbClusterVersion.isEmpty() || v2Decides))
                v2Snapshot(snapshot.get(), full || v2Decides);
            if (hasWal) {
                if (walOption.isPresent()) evidence.add(new Evidence("WAL", "in --wal-dir " + wal, Optional.empty()));
                if (readWal
                        || (dbClusterVersion.isEmpty() && snapClusterVersion.isEmpty())
                        || (v2Decides && v2Outside == 0)) wal(wal);
                else segments = countSegments(wal);
            } else if (Files.isDirectory(member)) {
                evidence.add(new Evidence(
                        walOption.map(w -> "--wal-dir " + w).orElse("member/wal"), "no WAL", Optional.empty()));
            }
            if (storage.equals(Optional.of(StorageApi.ETCD3)) && !v3Keys && (v2Outside > 0 || v2WalWrites > 0)) {
                // a 3.x etcd ran here but only the v2 API was written: etcd2 data kept by a 3.x line
                storage = Optional.of(StorageApi.ETCD2);
                evidence.add(new Evidence(
                        "keys", "v2 keys and no v3 key: etcd2 data written by a 3.x line", Optional.empty()));
            }
            Optional<ClusterVersion> current = currentClusterVersion();
            Optional<MinorLine> clusterLine = current.flatMap(c -> lineOf(c.version()));
            Optional<MinorLine> storageLine = storageVersion.flatMap(DataDetection::lineOf);
            Optional<MinorLine> floor = max(clusterLine, storageLine);
            if (floor.isEmpty()) floor = evidenceMax(); // nothing current recorded: what the records prove
            Optional<MinorLine> line = max(floor, evidenceMax());
            if (storage.isEmpty()) line = Optional.empty(); // nothing etcd wrote: no line
            return new Detection(
                    dataDir,
                    hasWal ? Optional.of(wal) : Optional.empty(),
                    storage,
                    line,
                    storage.isEmpty() ? Optional.empty() : floor,
                    List.copyOf(evidence),
                    current,
                    storageVersion,
                    clusterId,
                    memberId,
                    List.copyOf(members.values()),
                    dbBytes,
                    dbInUse,
                    List.copyOf(alarms),
                    segments,
                    snapshot,
                    v2Outside,
                    v2WalWrites,
                    v3Keys,
                    downgrade,
                    unreadable);
        }

        private Optional<MinorLine> evidenceMax() {
            return evidence.stream()
                    .map(Evidence::line)
                    .flatMap(Optional::stream)
                    .max(Comparator.naturalOrder());
        }

        /** The newest record of the cluster version: the one at the highest raft index. */
        private Optional<ClusterVersion> currentClusterVersion() {
            long best = Long.MIN_VALUE;
            Optional<ClusterVersion> current = Optional.empty();
            if (snapClusterVersion.isPresent() && snapIndex > best) {
                best = snapIndex;
                current = Optional.of(new ClusterVersion(
                        snapClusterVersion.get(),
                        "snapshot " + snapshot.map(Path::getFileName).orElseThrow()));
            }
            // the db is applied up to its consistent index, at or after the snapshot
            if (dbClusterVersion.isPresent() && dbIndex >= best) {
                best = dbIndex;
                current = Optional.of(new ClusterVersion(dbClusterVersion.get(), "member/snap/db"));
            }
            if (walClusterVersion.isPresent() && walClusterVersion.get().index() > best) {
                current = Optional.of(new ClusterVersion(
                        walClusterVersion.get().version(),
                        "WAL entry " + walClusterVersion.get().index()));
            }
            return current;
        }

        private void backend(Path db) throws IOException {
            try {
                if (full) {
                    BackendStorageVersion.Size size = BackendStorageVersion.size(db);
                    dbBytes = OptionalLong.of(size.bytes());
                    dbInUse = size.inUse();
                }
                storageVersion = BackendStorageVersion.value(db, "meta", "storageVersion")
                        .map(DataDetection::utf8);
                storageVersion.ifPresent(v -> evidence.add(new Evidence("db meta/storageVersion", v, lineOf(v))));
                Optional<byte[]> index = BackendStorageVersion.value(db, "meta", "consistent_index");
                if (index.isPresent() && index.get().length == 8)
                    dbIndex = ByteBuffer.wrap(index.get())
                            .order(ByteOrder.BIG_ENDIAN)
                            .getLong();
                marker(db, "meta", "term", DataRecord.BACKEND_TERM);
                marker(db, "meta", "confState", DataRecord.BACKEND_CONF_STATE);
                dbClusterVersion = BackendStorageVersion.value(db, "cluster", "clusterVersion")
                        .map(DataDetection::utf8);
                dbClusterVersion.ifPresent(v -> evidence.add(new Evidence(
                        "db cluster/clusterVersion",
                        v + (dbIndex >= 0 ? " (applied to index " + dbIndex + ")" : ""),
                        lineOf(v))));
                if (full) report(db);
                byte[] probe = V2Key.PROBE.getBytes(StandardCharsets.UTF_8);
                BackendStorageVersion.walk(db, "key", (k, v) -> {
                    byte[] value = new byte[v.remaining()];
                    v.get(v.position(), value);
                    if (!java.util.Arrays.equals(kvKey(value), probe)) {
                        v3Keys = true;
                        return false;
                    }
                    return true;
                });
            } catch (IOException e) {
                // not a db (or a record) this reader understands: said, and etcd judges it when a step starts it
                unreadable = Optional.of("member/snap/db: " + e.getMessage());
                evidence.add(new Evidence("member/snap/db", "unreadable (" + e.getMessage() + ")", Optional.empty()));
            }
        }

        /** What only the report needs from the db: a downgrade in progress, the members, the alarms. */
        private void report(Path db) throws IOException {
            {
                Optional<byte[]> dg = BackendStorageVersion.value(db, "cluster", "downgrade");
                if (dg.isPresent()) {
                    JsonNode info = Json.MAPPER.readTree(dg.get());
                    if (info.path("enabled").asBoolean(false)) {
                        downgrade = Optional.of(info.path("target-version").asText(""));
                        evidence.add(new Evidence(
                                "db cluster/downgrade", "enabled, target " + downgrade.get(), Optional.empty()));
                    }
                }
                for (BackendStorageVersion.Entry e : BackendStorageVersion.entries(db, "members", MEMBER_LIMIT)) {
                    JsonNode m = Json.MAPPER.readTree(e.value());
                    String id = utf8(e.key());
                    List<String> peers = new ArrayList<>();
                    m.path("peerURLs").forEach(u -> peers.add(u.asText()));
                    members.put(
                            id,
                            new Member(
                                    id,
                                    m.path("name").asText(""),
                                    List.copyOf(peers),
                                    m.path("isLearner").asBoolean(false)));
                }
                for (BackendStorageVersion.Entry e :
                        BackendStorageVersion.entries(db, "members_removed", MEMBER_LIMIT)) {
                    members.remove(utf8(e.key()));
                }
                // 3.x keeps the members in the db too; from 3.5 on only there is authoritative
                membersFromDb = !members.isEmpty();
                BackendStorageVersion.walk(db, "alarm", (k, v) -> {
                    byte[] key = new byte[k.remaining()];
                    k.get(k.position(), key);
                    alarms.add(alarm(key));
                    return true;
                });
            }
        }

        private void marker(Path db, String bucket, String key, DataRecord record) throws IOException {
            if (BackendStorageVersion.value(db, bucket, key).isPresent()) {
                Optional<MinorLine> line = catalog.firstLineRecording(record);
                evidence.add(new Evidence("db " + bucket + "/" + key, "present", line));
            }
        }

        /** The snapshot's /0 (cluster version, members); with {@code outside}, also counts the keys outside /0 (a whole read). */
        private void v2Snapshot(Path file, boolean outside) throws IOException {
            snapIndex = WalIndex.snapshotIndex(file);
            String name = "snapshot " + file.getFileName();
            try {
                V2SnapshotReader.readMembership(file, key -> {
                    String k = key.key();
                    if (k.equals("/0/version")) {
                        snapClusterVersion = Optional.of(key.value());
                    } else if (!membersFromDb
                            && k.startsWith("/0/members/")
                            && (k.endsWith("/raftAttributes") || k.endsWith("/attributes"))) {
                        String id = k.substring("/0/members/".length(), k.lastIndexOf('/'));
                        JsonNode v = Json.MAPPER.readTree(key.value());
                        Member old = members.getOrDefault(id, new Member(id, "", List.of(), false));
                        if (k.endsWith("/raftAttributes")) {
                            List<String> peers = new ArrayList<>();
                            v.path("peerURLs").forEach(u -> peers.add(u.asText()));
                            if (old.peerUrls().isEmpty())
                                old = new Member(
                                        id,
                                        old.name(),
                                        List.copyOf(peers),
                                        v.path("isLearner").asBoolean(false));
                        } else if (old.name().isEmpty()) {
                            old = new Member(id, v.path("name").asText(""), old.peerUrls(), old.learner());
                        }
                        members.put(id, old);
                    }
                });
                if (outside) {
                    V2SnapshotReader.readOutsideMembership(file, key -> {
                        if (!key.key().equals("/1" + V2Key.PROBE)) v2Outside++;
                    });
                }
            } catch (IOException e) {
                unreadable = Optional.of(name + ": " + e.getMessage());
                evidence.add(new Evidence(name, "unreadable (" + e.getMessage() + ")", Optional.empty()));
                return;
            }
            snapClusterVersion.ifPresent(v -> evidence.add(new Evidence(name + " /0/version", v, lineOf(v))));
            if (v2Outside > 0) evidence.add(new Evidence(name, v2Outside + " v2 keys outside /0", Optional.empty()));
        }

        private void wal(Path wal) throws IOException {
            WalRecords.Summary summary;
            try {
                summary = WalRecords.read(wal);
            } catch (IOException e) {
                evidence.add(new Evidence("WAL", "unreadable (" + e.getMessage() + ")", Optional.empty()));
                segments = countSegments(wal);
                return;
            }
            segments = summary.segments();
            summary.clusterId().ifPresent(id -> clusterId = Optional.of(Long.toHexString(id)));
            summary.memberId().ifPresent(id -> memberId = Optional.of(Long.toHexString(id)));
            v2WalWrites = summary.v2UserWrites();
            if (members.isEmpty()) {
                // no db and no snapshot (2.x before its first snapshot): the members are the WAL's conf changes
                for (WalRecords.ConfChange c : summary.confChanges()) {
                    String id = Long.toHexString(c.nodeId());
                    if (c.type() == 1) {
                        members.remove(id);
                    } else if (!c.context().isEmpty()) {
                        JsonNode m = Json.MAPPER.readTree(c.context());
                        List<String> peers = new ArrayList<>();
                        m.path("peerURLs").forEach(u -> peers.add(u.asText()));
                        members.put(id, new Member(id, m.path("name").asText(""), List.copyOf(peers), c.type() == 3));
                    }
                }
            }
            walClusterVersion = summary.lastClusterVersion();
            walClusterVersion.ifPresent(v -> evidence.add(
                    new Evidence("WAL entry " + v.index() + " (" + v.how() + ")", v.version(), lineOf(v.version()))));
            if (!summary.downgrades().isEmpty()) {
                WalRecords.VersionSet d = summary.downgrades().getLast();
                evidence.add(new Evidence(
                        "WAL entry " + d.index() + " (" + d.how() + ")", "target " + d.version(), Optional.empty()));
            }
            if (walClusterVersion.isEmpty()) {
                evidence.add(new Evidence(
                        "WAL",
                        summary.lastIndex().isPresent()
                                ? "entries up to index " + summary.lastIndex().getAsLong()
                                        + ", none sets the cluster version"
                                : "no entries",
                        Optional.empty()));
            }
            if (v2WalWrites > 0)
                evidence.add(new Evidence("WAL", v2WalWrites + " v2 writes to user keys", Optional.empty()));
        }
    }

    /** etcdserverpb.AlarmMember {MemberID = 1 uint64, Alarm = 2 enum NONE/NOSPACE/CORRUPT}, etcd's alarm bucket key. */
    static Alarm alarm(byte[] key) {
        long member = 0;
        long type = 0;
        int pos = 0;
        while (pos < key.length) {
            long[] tag = varint(key, pos);
            pos = (int) tag[1];
            if ((tag[0] & 7) != 0) break;
            long[] v = varint(key, pos);
            pos = (int) v[1];
            if (tag[0] >>> 3 == 1) member = v[0];
            if (tag[0] >>> 3 == 2) type = v[0];
        }
        String name = switch ((int) type) {
            case 1 -> "NOSPACE";
            case 2 -> "CORRUPT";
            default -> "ALARM-" + type;
        };
        return new Alarm(name, Long.toHexString(member));
    }

    /** mvccpb.KeyValue.key (field 1) of a key-bucket value; empty when absent. */
    static byte[] kvKey(byte[] kv) {
        int pos = 0;
        while (pos < kv.length) {
            long[] tag = varint(kv, pos);
            pos = (int) tag[1];
            int wire = (int) (tag[0] & 7);
            if (wire == 0) {
                pos = (int) varint(kv, pos)[1];
            } else if (wire == 2) {
                long[] len = varint(kv, pos);
                pos = (int) len[1];
                if (tag[0] >>> 3 == 1)
                    return java.util.Arrays.copyOfRange(kv, pos, (int) Math.min(kv.length, pos + len[0]));
                pos += (int) len[0];
            } else {
                break;
            }
        }
        return new byte[0];
    }

    /** {value, next position}; a truncated varint ends at the array's end. */
    private static long[] varint(byte[] b, int pos) {
        long value = 0;
        for (int shift = 0; shift < 64 && pos < b.length; shift += 7) {
            int x = b[pos++] & 0xff;
            value |= (long) (x & 0x7f) << shift;
            if ((x & 0x80) == 0) break;
        }
        return new long[] {value, pos};
    }

    private static boolean hasWal(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) return false;
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.anyMatch(p -> p.getFileName().toString().endsWith(".wal"));
        }
    }

    private static int countSegments(Path dir) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return (int) entries.filter(p -> p.getFileName().toString().endsWith(".wal"))
                    .count();
        }
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    /** The minor line of a version etcd recorded ("3.5.0"), if it is one. */
    static Optional<MinorLine> lineOf(String version) {
        Matcher m = SEMVER.matcher(version);
        if (!m.find()) return Optional.empty();
        return Optional.of(new MinorLine(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))));
    }

    private static Optional<MinorLine> max(Optional<MinorLine> a, Optional<MinorLine> b) {
        if (a.isEmpty()) return b;
        if (b.isEmpty()) return a;
        return Optional.of(a.get().compareTo(b.get()) >= 0 ? a.get() : b.get());
    }
}
