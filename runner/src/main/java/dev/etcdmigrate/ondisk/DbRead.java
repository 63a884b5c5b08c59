package dev.etcdmigrate.ondisk;

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
 * What member/snap/db records, as {@link DataRecords} reads it. {@code failure}: where reading stopped (damage or an I/O error), the
 * facts before it kept. {@code consistentIndex} -1 when absent.
 */
public record DbRead(
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
    public static final DbRead NONE = new DbRead(
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

    /** mvcc's key bucket holds every revision: enough to know whether any v3 key was ever written, not how many. */
    private static final int MEMBER_LIMIT = 1000;

    /** Reads the db: its versions and whether it holds a v3 key; with {@code full}, also members, alarms and sizes. */
    static DbRead read(Path file, boolean full, List<Damage> damage, Path dataDir) throws IOException {
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
                storageVersion = db.value("meta", "storageVersion").map(EtcdJson::utf8);
                consistentIndex = consistentIndex(db).orElse(-1);
                term = db.value("meta", "term").isPresent();
                confState = db.value("meta", "confState").isPresent();
                clusterVersion = db.value("cluster", "clusterVersion").map(EtcdJson::utf8);
                if (full) {
                    Optional<byte[]> dg = db.value("cluster", "downgrade");
                    if (dg.isPresent()) {
                        EtcdJson.Node info = EtcdJson.parse(file, "bucket cluster, key downgrade", dg.get());
                        if (info.path("enabled").asBoolean(false))
                            downgrade = Optional.of(info.path("target-version").asText(""));
                    }
                    for (BboltFile.Entry e : db.entries("members", MEMBER_LIMIT)) {
                        String id = EtcdJson.utf8(e.key());
                        EtcdJson.Node m = EtcdJson.parse(file, "bucket members, key " + id, e.value());
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
                    for (BboltFile.Entry e : db.entries("members_removed", MEMBER_LIMIT))
                        members.remove(EtcdJson.utf8(e.key()));
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
        return new DbRead(
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
}
