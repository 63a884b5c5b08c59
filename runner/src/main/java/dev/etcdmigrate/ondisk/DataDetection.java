package dev.etcdmigrate.ondisk;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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

    private static final Pattern SEMVER = Pattern.compile("^(\\d+)\\.(\\d+)\\.\\d+");

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
            Optional<String> unreadable,
            List<Damage> damage) {

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
        return DataDecision.decide(DataRecords.read(dataDir.toAbsolutePath().normalize(), walDir, full), catalog);
    }

    /**
     * The cheap part of the floor, for a start whose label is then judged: the cluster and storage
     * versions the db records (a few pages of bbolt, no catalog, no snapshot, no WAL). Empty when there is
     * no db or it records neither (then only {@link #detect} can tell); an unreadable db is left to it too.
     */
    public static Optional<MinorLine> recordedFloor(Path dataDir) {
        Path db = dataDir.resolve("member").resolve("snap").resolve("db");
        if (!Files.isRegularFile(db)) return Optional.empty();
        try (BboltFile file = BboltFile.open(db)) {
            Optional<MinorLine> cluster = file.value("cluster", "clusterVersion")
                    .map(DataDetection::utf8)
                    .flatMap(DataDetection::lineOf);
            Optional<MinorLine> storage = file.storageVersion().flatMap(DataDetection::lineOf);
            return DataDecision.max(cluster, storage);
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

    /** etcdserverpb.AlarmMember {MemberID = 1 uint64, Alarm = 2 enum NONE/NOSPACE/CORRUPT}, etcd's alarm bucket key. */
    static Alarm alarm(byte[] key) throws Protobuf.Malformed {
        long member = 0;
        long type = 0;
        Protobuf.Reader p = new Protobuf.Reader(key, 0, key.length);
        try {
            while (p.more()) {
                long tag = p.varint();
                int wire = (int) (tag & 7);
                if (wire != 0) {
                    p.skip(wire);
                    continue;
                }
                long v = p.varint();
                if (tag >>> 3 == 1) member = v;
                if (tag >>> 3 == 2) type = v;
            }
        } catch (Protobuf.Malformed m) {
            throw m;
        } catch (IOException e) {
            throw new Protobuf.Malformed(e.getMessage(), 0);
        }
        String name = switch ((int) type) {
            case 1 -> "NOSPACE";
            case 2 -> "CORRUPT";
            default -> "ALARM-" + type;
        };
        return new Alarm(name, Long.toHexString(member));
    }

    /** mvccpb.KeyValue.key (field 1) of a key-bucket value; empty when absent. */
    static byte[] kvKey(byte[] kv) throws Protobuf.Malformed {
        Protobuf.Reader p = new Protobuf.Reader(kv, 0, kv.length);
        try {
            while (p.more()) {
                long tag = p.varint();
                int wire = (int) (tag & 7);
                if (wire == 2 && tag >>> 3 == 1) {
                    int len = p.length();
                    return java.util.Arrays.copyOfRange(kv, p.pos, p.pos + len);
                }
                p.skip(wire);
            }
        } catch (Protobuf.Malformed m) {
            throw m;
        } catch (IOException e) {
            throw new Protobuf.Malformed(e.getMessage(), 0);
        }
        return new byte[0];
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    /** The minor line of a version etcd recorded ("3.5.0"), if it is one. */
    static Optional<MinorLine> lineOf(String version) {
        Matcher m = SEMVER.matcher(version);
        if (!m.find()) return Optional.empty();
        try {
            return Optional.of(new MinorLine(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2))));
        } catch (IllegalArgumentException e) {
            return Optional.empty(); // digits beyond an int: not a version etcd wrote
        }
    }
}
