package dev.etcdmigrate.ondisk;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.BufferedInputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Streams every key of the v2 store out of a data dir's newest snapshot file (member/snap/*.snap):
 * the complete store, hidden keys and TTL expiry times included, which neither the v2 API's listings
 * nor `etcdctl migrate` give. The file is a snappb.Snapshot {crc, data} whose data is a
 * raftpb.Snapshot {data, metadata} whose data is the store as JSON; user keys live under /1.
 * Streaming: memory does not grow with the store.
 */
public final class V2SnapshotReader {

    public interface KeyConsumer {
        void accept(V2Key key) throws IOException;
    }

    // Go's zero time, from its epoch second: parsing the text would build java.time.format's tables on every start
    private static final Instant NO_EXPIRY = Instant.ofEpochSecond(-62_135_596_800L);

    private V2SnapshotReader() {}

    public static Optional<Path> newestSnapshot(Path member) throws IOException {
        Path snap = member.resolve("snap");
        if (!Files.isDirectory(snap)) return Optional.empty();
        try (Stream<Path> files = Files.list(snap)) {
            // names are <term>-<index>.snap in fixed-width hex, so the newest sorts last
            return files.filter(V2SnapshotReader::isSnapshotName)
                    .max((a, b) ->
                            a.getFileName().toString().compareTo(b.getFileName().toString()));
        }
    }

    /** Calls the consumer for every key under the user prefix (/1) of the snapshot's store. */
    public static long read(Path snapshotFile, KeyConsumer consumer) throws IOException {
        return read(snapshotFile, "/1/", consumer);
    }

    /**
     * Calls the consumer for every key under etcd's own prefix (/0: the cluster version at /0/version,
     * members under /0/members), with the full path as the key.
     */
    public static long readMembership(Path snapshotFile, KeyConsumer consumer) throws IOException {
        return read(snapshotFile, "/0/", consumer);
    }

    /**
     * The keys outside etcd's own /0 (user keys under /1, 2.x's auth under /2, anything else): what etcd
     * 3.6 refuses to start on. Keys carry their full path.
     */
    public static long readOutsideMembership(Path snapshotFile, KeyConsumer consumer) throws IOException {
        return read(snapshotFile, "/", key -> {
            if (!key.key().startsWith("/0/")) consumer.accept(key);
        });
    }

    /** raft's configuration a snapshot was taken at: raftpb.SnapshotMetadata {conf_state = 1, index = 2}. */
    public record Metadata(long index, java.util.Set<Long> voters, boolean joint) {}

    /**
     * The snapshot's raftpb.SnapshotMetadata, after its data: ConfState {voters = 1, learners = 2, voters_outgoing
     * = 3, ...}; {@code joint} when it has outgoing voters (a joint configuration etcd itself never makes).
     */
    public static Metadata metadata(Path snapshotFile) throws IOException {
        long size = Files.size(snapshotFile);
        try (InputStream in = new BufferedInputStream(Files.newInputStream(snapshotFile), 1 << 16)) {
            Protobuf.StreamSource src = new Protobuf.StreamSource(in);
            try {
                long outer = fieldLength(src, 2, "snappb.Snapshot.data");
                long end = src.position() + outer;
                if (end > size)
                    throw damage(
                            snapshotFile,
                            src.position(),
                            "snappb.Snapshot.data of " + outer + " bytes within the file's " + size);
                long meta = fieldLength(src, 2, "raftpb.Snapshot.metadata");
                if (src.position() + meta > end || meta > 1 << 20)
                    throw damage(snapshotFile, src.position(), "raftpb.Snapshot.metadata within snappb.Snapshot.data");
                byte[] b = in.readNBytes((int) meta);
                if (b.length < meta) throw damage(snapshotFile, size, "raftpb.Snapshot.metadata of " + meta + " bytes");
                long index = -1;
                java.util.Set<Long> voters = new java.util.TreeSet<>();
                boolean joint = false;
                Protobuf.Reader m = new Protobuf.Reader(b, 0, b.length);
                while (m.more()) {
                    long tag = m.varint();
                    int wire = (int) (tag & 7);
                    if (wire == 0) {
                        long v = m.varint();
                        if (tag >>> 3 == 2) index = v;
                    } else if (wire == 2) {
                        int len = m.length();
                        int at = m.pos;
                        m.pos += len;
                        if (tag >>> 3 != 1) continue;
                        Protobuf.Reader c = new Protobuf.Reader(b, at, at + len); // raftpb.ConfState
                        while (c.more()) {
                            long ct = c.varint();
                            int cw = (int) (ct & 7);
                            int field = (int) (ct >>> 3);
                            if (cw == 0) {
                                long v = c.varint();
                                if (field == 1) voters.add(v);
                                if (field == 3) joint = true;
                            } else if (cw == 2) { // a packed repeated field
                                int plen = c.length();
                                Protobuf.Reader p = new Protobuf.Reader(b, c.pos, c.pos + plen);
                                c.pos += plen;
                                while (p.more()) {
                                    long v = p.varint();
                                    if (field == 1) voters.add(v);
                                    if (field == 3) joint = true;
                                }
                            } else {
                                c.skip(cw);
                            }
                        }
                    } else {
                        m.skip(wire);
                    }
                }
                if (index < 0) throw damage(snapshotFile, size - meta, "raftpb.SnapshotMetadata with an index");
                return new Metadata(index, java.util.Set.copyOf(voters), joint);
            } catch (Protobuf.Malformed e) {
                throw damage(snapshotFile, e.at(), "a snappb.Snapshot envelope: " + e.getMessage());
            }
        }
    }

    /** etcd's own names: {@code <term>-<index>.snap} in fixed-width hex; other files in snap/ are not snapshots. */
    private static final java.util.regex.Pattern SNAP =
            java.util.regex.Pattern.compile("[0-9a-f]{16}-[0-9a-f]{16}\\.snap");

    static boolean isSnapshotName(Path file) {
        return SNAP.matcher(file.getFileName().toString()).matches();
    }

    /**
     * Every key under the prefix; a file that is not a snapshot etcd can read (its envelope, the store's
     * JSON) is a {@link DamagedFileException} naming the byte offset. The consumer's own exceptions pass.
     */
    private static long read(Path snapshotFile, String prefix, KeyConsumer consumer) throws IOException {
        long size = Files.size(snapshotFile);
        Protobuf.StreamSource src;
        long inner;
        try (InputStream in = new BufferedInputStream(Files.newInputStream(snapshotFile), 1 << 16)) {
            src = new Protobuf.StreamSource(in);
            try {
                long outer = fieldLength(src, 2, "snappb.Snapshot.data");
                if (outer > size - src.position())
                    throw damage(
                            snapshotFile,
                            src.position(),
                            "snappb.Snapshot.data of " + outer + " bytes within the file's " + size);
                inner = fieldLength(src, 1, "raftpb.Snapshot.data");
                if (inner > outer)
                    throw damage(
                            snapshotFile,
                            src.position(),
                            "raftpb.Snapshot.data within snappb.Snapshot.data (" + outer + " bytes), found " + inner);
            } catch (Protobuf.Malformed e) {
                throw damage(snapshotFile, e.at(), "a snappb.Snapshot envelope: " + e.getMessage());
            }
            long jsonStart = src.position();
            try (JsonParser json = new JsonFactory().createParser(new Limited(in, inner))) {
                try {
                    return readStore(json, prefix, consumer);
                } catch (com.fasterxml.jackson.core.JacksonException | java.time.DateTimeException e) {
                    long at = jsonStart + Math.max(0, json.currentLocation().getByteOffset());
                    throw damage(
                            snapshotFile,
                            at,
                            "the v2 store as JSON: "
                                    + (e instanceof com.fasterxml.jackson.core.JacksonException j
                                            ? j.getOriginalMessage()
                                            : e.getMessage()));
                }
            }
        }
    }

    private static DamagedFileException damage(Path file, long offset, String expected) {
        return new DamagedFileException(new Damage(file, "byte " + offset, expected));
    }

    /** Skips fields until the length-delimited field {@code number}; returns its length. */
    private static long fieldLength(Protobuf.StreamSource in, int number, String what) throws IOException {
        while (true) {
            long at = in.position();
            long tag = in.varint();
            int field = (int) (tag >>> 3);
            int wire = (int) (tag & 7);
            if (field == number && wire == 2) return in.varint();
            boolean more = switch (wire) {
                case 0 -> {
                    in.varint();
                    yield true;
                }
                case 1 -> in.skip(8);
                case 2 -> in.skip(in.varint());
                case 5 -> in.skip(4);
                default -> throw new Protobuf.Malformed("protobuf wire type " + wire + " before " + what, at);
            };
            if (!more) throw new Protobuf.Malformed("the file ends before " + what, in.position());
        }
    }

    private static long readStore(JsonParser json, String prefix, KeyConsumer consumer) throws IOException {
        expect(json.nextToken(), JsonToken.START_OBJECT, json);
        long count = 0;
        while (json.nextToken() == JsonToken.FIELD_NAME) {
            String field = json.currentName();
            json.nextToken();
            if (field.equals("Root")) {
                count += readNode(json, prefix, consumer);
            } else {
                json.skipChildren();
            }
        }
        return count;
    }

    /** Reads one node object (positioned on its START_OBJECT); emits it if it is a user key. */
    private static long readNode(JsonParser json, String prefix, KeyConsumer consumer) throws IOException {
        expect(json.currentToken(), JsonToken.START_OBJECT, json);
        String path = null;
        String value = "";
        long created = 0;
        long modified = 0;
        Instant expire = NO_EXPIRY;
        boolean dir = false;
        long count = 0;
        while (json.nextToken() == JsonToken.FIELD_NAME) {
            String field = json.currentName();
            JsonToken token = json.nextToken();
            switch (field) {
                case "Path" -> {
                    path = json.getText();
                }
                case "Value" -> value = json.getText();
                case "CreatedIndex" -> created = json.getLongValue();
                case "ModifiedIndex" -> modified = json.getLongValue();
                case "ExpireTime" -> expire = Instant.parse(json.getText());
                case "Children" -> {
                    if (token == JsonToken.START_OBJECT
                            && path != null
                            && !path.startsWith(prefix)
                            && !prefix.startsWith(path + "/")
                            && !path.equals("/")) {
                        dir = true;
                        json.skipChildren(); // a subtree outside the prefix: not read into keys
                    } else if (token == JsonToken.START_OBJECT) {
                        dir = true;
                        while (json.nextToken() == JsonToken.FIELD_NAME) {
                            json.nextToken();
                            count += readNode(json, prefix, consumer);
                        }
                    }
                }
                default -> json.skipChildren();
            }
        }
        if (!dir && path != null && path.startsWith(prefix)) {
            consumer.accept(new V2Key(
                    prefix.equals("/1/") ? path.substring(2) : path,
                    value,
                    created,
                    modified,
                    expire.equals(NO_EXPIRY) ? Optional.empty() : Optional.of(expire)));
            count++;
        }
        return count;
    }

    private static void expect(JsonToken actual, JsonToken expected, JsonParser json) throws IOException {
        if (actual != expected) {
            throw new com.fasterxml.jackson.core.JsonParseException(json, "expected " + expected + ", found " + actual);
        }
    }

    /** Reads at most {@code remaining} bytes of the underlying stream. */
    private static final class Limited extends FilterInputStream {
        private long remaining;

        Limited(InputStream in, long remaining) {
            super(in);
            this.remaining = remaining;
        }

        @Override
        public int read() throws IOException {
            if (remaining <= 0) return -1;
            int b = super.read();
            if (b >= 0) remaining--;
            return b;
        }

        @Override
        public int read(byte[] buffer, int off, int len) throws IOException {
            if (remaining <= 0) return -1;
            int n = super.read(buffer, off, (int) Math.min(len, remaining));
            if (n > 0) remaining -= n;
            return n;
        }

        @Override
        public void close() {
            // the caller closes the file
        }
    }
}
