package dev.etcdmigrate.ondisk;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.ondisk.DataDetection.Alarm;
import dev.etcdmigrate.ondisk.DataDetection.Member;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.TreeMap;

/**
 * The reading half of {@link DataDetection}: the records found in the files etcd wrote, as read, with no
 * judgement of what line they prove ({@link DataDecision} decides). Damage a reader met is kept as
 * {@link Damage} beside the records read before it; an I/O error that is not damage (a permission) as text.
 *
 * @param walOption etcd's --wal-dir, when set
 * @param walDir where the WAL is looked for
 * @param memberDir whether {@code member/} exists
 * @param db what the backend records; {@link Db#NONE} without a db
 * @param snapshot the newest v2 snapshot's records, when one was read
 * @param wal the WAL's records, when the WAL was read
 * @param walSegments how many segments the WAL has
 * @param damage every damage met, in reading order
 */
public record DataRecords(
        Path dataDir,
        Optional<Path> walOption,
        Path walDir,
        boolean memberDir,
        boolean hasDb,
        boolean hasWal,
        Db db,
        Optional<Path> snapshotFile,
        Optional<Snap> snapshot,
        Optional<Wal> wal,
        int walSegments,
        List<Damage> damage) {

    /**
     * What member/snap/db records. {@code failure}: where reading stopped (damage or an I/O error), the
     * facts before it kept. {@code consistentIndex} -1 when absent.
     */
    public record Db(
            Optional<String> storageVersion,
            long consistentIndex,
            boolean term,
            boolean confState,
            Optional<String> clusterVersion,
            Optional<String> downgradeTarget,
            List<Member> members,
            List<Alarm> alarms,
            OptionalLong bytes,
            OptionalLong bytesInUse,
            boolean v3Keys,
            Optional<String> failure) {
        public static final Db NONE = new Db(
                Optional.empty(),
                -1,
                false,
                false,
                Optional.empty(),
                Optional.empty(),
                List.of(),
                List.of(),
                OptionalLong.empty(),
                OptionalLong.empty(),
                false,
                Optional.empty());
    }

    /** The newest snapshot's /0: its raft index (from its name), /0/version, members; the keys outside /0 when counted. */
    public record Snap(
            Path file,
            long index,
            Optional<String> clusterVersion,
            List<Member> members,
            long keysOutside,
            Optional<String> failure) {}

    /** The WAL's records, or where reading it failed (then the summary is empty). */
    public record Wal(Optional<WalRecords.Summary> summary, List<Member> members, Optional<String> failure) {}

    /** Jackson's databind only where members or a downgrade are parsed: a migration's start loads none of it. */
    private static final class Json {
        static final ObjectMapper MAPPER = new ObjectMapper();
    }

    /** mvcc's key bucket holds every revision: enough to know whether any v3 key was ever written, not how many. */
    private static final int MEMBER_LIMIT = 1000;

    /**
     * Reads the data dir. {@code full}: everything (inspect: members, alarms, sizes, every source). Without it
     * only what decides the line and the storage, as a migration's start needs: the snapshot only when the db
     * records no cluster version (the db is applied at or after it) or v2 keys may decide the storage, the
     * WAL only when both are silent.
     */
    public static DataRecords read(Path dataDir, Optional<Path> walOption, boolean full) throws IOException {
        Path member = dataDir.resolve("member");
        Path wal = walOption.orElse(member.resolve("wal"));
        boolean hasWal = hasWal(wal);
        Path dbFile = member.resolve("snap").resolve("db");
        boolean memberDir = Files.isDirectory(member);
        boolean hasDb = memberDir && Files.isRegularFile(dbFile);
        List<Damage> damage = new ArrayList<>();
        Db db = hasDb ? db(dbFile, full, damage, dataDir) : Db.NONE;
        // whether v2 keys decide the storage: a 3.x db without a v3 key may hold etcd2 data
        boolean v2Decides = hasDb && !db.v3Keys();
        Optional<Path> snapshotFile = V2SnapshotReader.newestSnapshot(member);
        Optional<Snap> snap = Optional.empty();
        if (snapshotFile.isPresent() && (full || db.clusterVersion().isEmpty() || v2Decides))
            snap = Optional.of(snapshot(snapshotFile.get(), full || v2Decides, damage, dataDir));
        Optional<Wal> walRecords = Optional.empty();
        int segments = 0;
        if (hasWal) {
            boolean snapSilent = snap.map(s -> s.clusterVersion().isEmpty()).orElse(true);
            long outside = snap.map(Snap::keysOutside).orElse(0L);
            if (full || (db.clusterVersion().isEmpty() && snapSilent) || (v2Decides && outside == 0)) {
                walRecords = Optional.of(wal(wal, damage, dataDir));
                segments = walRecords
                        .get()
                        .summary()
                        .map(WalRecords.Summary::segments)
                        .orElse(-1);
            }
            if (segments < 0 || walRecords.isEmpty()) segments = countSegments(wal);
        }
        return new DataRecords(
                dataDir,
                walOption,
                wal,
                memberDir,
                hasDb,
                hasWal,
                db,
                snapshotFile,
                snap,
                walRecords,
                segments,
                damage.stream().distinct().toList()); // one finding once, however many reads met it
    }

    /**
     * The damage a start's own reading finds: what {@link #read} without {@code full} meets (the db's meta, cluster
     * and first key pages; the snapshot and the WAL where it reads them) and, when {@code everyDbPage}, every page of
     * the db's tree ({@link BboltFile#checkPages}): a start whose steps run etcd on the whole db, not a restart.
     * Inspect decides its targets from the same call, so it and a start agree on what was found.
     */
    public static List<Damage> damageFound(Path dataDir, Optional<Path> walOption, boolean everyDbPage)
            throws IOException {
        Path dir = dataDir.toAbsolutePath().normalize();
        List<Damage> found = new ArrayList<>(read(dir, walOption, false).damage());
        Path db = dir.resolve("member").resolve("snap").resolve("db");
        if (everyDbPage && found.isEmpty() && Files.isRegularFile(db) && Files.size(db) > 0) {
            try (BboltFile file = BboltFile.open(db)) {
                file.checkPages();
            } catch (DamagedFileException e) {
                found.add(e.damage().relativeTo(dir));
            }
        }
        return found.stream().distinct().toList();
    }

    private static Db db(Path file, boolean full, List<Damage> damage, Path dataDir) throws IOException {
        Optional<String> storageVersion = Optional.empty();
        long consistentIndex = -1;
        boolean term = false;
        boolean confState = false;
        Optional<String> clusterVersion = Optional.empty();
        Optional<String> downgrade = Optional.empty();
        TreeMap<String, Member> members = new TreeMap<>();
        List<Alarm> alarms = new ArrayList<>();
        OptionalLong bytes = OptionalLong.empty();
        OptionalLong inUse = OptionalLong.empty();
        boolean[] v3Keys = {false};
        Optional<String> failure = Optional.empty();
        Optional<String> sizeFailure = Optional.empty();
        if (Files.size(file) == 0) {
            // not damage: bbolt writes a new, empty db into a zero-length file when etcd opens it
            failure = Optional.of("an empty file (etcd's bbolt starts a new db in it)");
        } else
            try (BboltFile db = BboltFile.open(file)) {
                if (full) {
                    bytes = OptionalLong.of(Files.size(file));
                    try {
                        inUse = db.size().inUse(); // the versions are still worth reading when only this fails
                    } catch (DamagedFileException e) {
                        Damage d = e.damage().relativeTo(dataDir);
                        damage.add(d);
                        sizeFailure = Optional.of("damaged: " + d.where() + ": " + d.expected());
                    }
                }
                storageVersion = db.value("meta", "storageVersion").map(DataRecords::utf8);
                consistentIndex = consistentIndex(db).orElse(-1);
                term = db.value("meta", "term").isPresent();
                confState = db.value("meta", "confState").isPresent();
                clusterVersion = db.value("cluster", "clusterVersion").map(DataRecords::utf8);
                if (full) {
                    Optional<byte[]> dg = db.value("cluster", "downgrade");
                    if (dg.isPresent()) {
                        JsonNode info = json(file, "bucket cluster, key downgrade", dg.get());
                        if (info.path("enabled").asBoolean(false))
                            downgrade = Optional.of(info.path("target-version").asText(""));
                    }
                    for (BboltFile.Entry e : db.entries("members", MEMBER_LIMIT)) {
                        String id = utf8(e.key());
                        JsonNode m = json(file, "bucket members, key " + id, e.value());
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
                    for (BboltFile.Entry e : db.entries("members_removed", MEMBER_LIMIT)) members.remove(utf8(e.key()));
                    List<byte[]> alarmKeys = new ArrayList<>();
                    db.walk("alarm", (k, v) -> {
                        byte[] key = new byte[k.remaining()];
                        k.get(k.position(), key);
                        alarmKeys.add(key);
                        return true;
                    });
                    for (byte[] key : alarmKeys) {
                        try {
                            alarms.add(DataDetection.alarm(key));
                        } catch (Protobuf.Malformed m) {
                            throw new DamagedFileException(new Damage(
                                    file, "bucket alarm", "an etcdserverpb.AlarmMember key: " + m.getMessage()));
                        }
                    }
                }
                byte[] probe = V2Key.PROBE.getBytes(StandardCharsets.UTF_8);
                db.walk("key", (k, v) -> {
                    byte[] value = new byte[v.remaining()];
                    v.get(v.position(), value);
                    byte[] key;
                    try {
                        key = DataDetection.kvKey(value);
                    } catch (Protobuf.Malformed m) {
                        throw new DamagedFileException(
                                new Damage(file, "bucket key", "an mvccpb.KeyValue value: " + m.getMessage()));
                    }
                    if (!java.util.Arrays.equals(key, probe)) {
                        v3Keys[0] = true;
                        return false;
                    }
                    return true;
                });
            } catch (DamagedFileException e) {
                Damage d = e.damage().relativeTo(dataDir);
                damage.add(d);
                failure = Optional.of("damaged: " + d.where() + ": " + d.expected());
            } catch (IOException e) {
                failure = Optional.of("unreadable (" + e.getMessage() + ")");
            }
        return new Db(
                storageVersion,
                consistentIndex,
                term,
                confState,
                clusterVersion,
                downgrade,
                List.copyOf(members.values()),
                List.copyOf(alarms),
                bytes,
                inUse,
                v3Keys[0],
                failure.isPresent() ? failure : sizeFailure);
    }

    /** meta/consistent_index: the raft index the db has applied, 8 bytes big-endian; empty when absent or not 8 bytes. */
    static OptionalLong consistentIndex(BboltFile db) throws IOException {
        Optional<byte[]> index = db.value("meta", "consistent_index");
        return index.isPresent() && index.get().length == 8
                ? OptionalLong.of(
                        ByteBuffer.wrap(index.get()).order(ByteOrder.BIG_ENDIAN).getLong())
                : OptionalLong.empty();
    }

    static JsonNode json(Path file, String where, byte[] value) throws DamagedFileException {
        try {
            return Json.MAPPER.readTree(value);
        } catch (IOException e) {
            throw new DamagedFileException(new Damage(file, where, "a JSON value as etcd writes it"));
        }
    }

    /** The snapshot's /0 (cluster version, members); with {@code outside}, also counts the keys outside /0 (a whole read). */
    private static Snap snapshot(Path file, boolean outside, List<Damage> damage, Path dataDir) throws IOException {
        long index = WalIndex.snapshotIndex(file);
        String[] version = {null};
        TreeMap<String, Member> members = new TreeMap<>();
        long[] keysOutside = {0};
        try {
            V2SnapshotReader.readMembership(file, key -> {
                String k = key.key();
                if (k.equals("/0/version")) {
                    version[0] = key.value();
                } else if (k.startsWith("/0/members/")
                        && (k.endsWith("/raftAttributes") || k.endsWith("/attributes"))) {
                    String id = k.substring("/0/members/".length(), k.lastIndexOf('/'));
                    JsonNode v = json(file, "v2 store key " + k, key.value().getBytes(StandardCharsets.UTF_8));
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
                    if (!key.key().equals("/1" + V2Key.PROBE)) keysOutside[0]++;
                });
            }
        } catch (DamagedFileException e) {
            Damage d = e.damage().relativeTo(dataDir);
            damage.add(d);
            return new Snap(
                    file,
                    index,
                    Optional.empty(),
                    List.of(),
                    0,
                    Optional.of("damaged: " + d.where() + ": " + d.expected()));
        } catch (IOException e) {
            return new Snap(
                    file, index, Optional.empty(), List.of(), 0, Optional.of("unreadable (" + e.getMessage() + ")"));
        }
        return new Snap(
                file,
                index,
                Optional.ofNullable(version[0]),
                List.copyOf(members.values()),
                keysOutside[0],
                Optional.empty());
    }

    private static Wal wal(Path wal, List<Damage> damage, Path dataDir) {
        WalRecords.Summary summary;
        try {
            summary = WalRecords.read(wal);
            // no db and no snapshot (2.x before its first snapshot): the members are the WAL's conf changes
            TreeMap<String, Member> members = new TreeMap<>();
            for (WalRecords.ConfChange c : summary.confChanges()) {
                String id = Long.toHexString(c.nodeId());
                if (c.type() == 1) {
                    members.remove(id);
                } else if (!c.context().isEmpty()) {
                    JsonNode m = json(
                            c.segment(),
                            "conf change at index " + c.index(),
                            c.context().getBytes(StandardCharsets.UTF_8));
                    List<String> peers = new ArrayList<>();
                    m.path("peerURLs").forEach(u -> peers.add(u.asText()));
                    members.put(id, new Member(id, m.path("name").asText(""), List.copyOf(peers), c.type() == 3));
                }
            }
            return new Wal(Optional.of(summary), List.copyOf(members.values()), Optional.empty());
        } catch (DamagedFileException e) {
            Damage d = e.damage().relativeTo(dataDir);
            damage.add(d);
            return new Wal(
                    Optional.empty(),
                    List.of(),
                    Optional.of("damaged: " + d.file() + " (" + d.where() + "): " + d.expected()));
        } catch (IOException e) {
            return new Wal(Optional.empty(), List.of(), Optional.of("unreadable (" + e.getMessage() + ")"));
        }
    }

    static boolean hasWal(Path dir) throws IOException {
        return Files.isDirectory(dir) && !WalIndex.segments(dir).isEmpty();
    }

    private static int countSegments(Path dir) throws IOException {
        return WalIndex.segments(dir).size();
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
