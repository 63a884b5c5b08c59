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
import java.util.Comparator;
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

    private static final Instant NO_EXPIRY = Instant.parse("0001-01-01T00:00:00Z");

    private V2SnapshotReader() {}

    public static Optional<Path> newestSnapshot(Path member) throws IOException {
        Path snap = member.resolve("snap");
        if (!Files.isDirectory(snap)) return Optional.empty();
        try (Stream<Path> files = Files.list(snap)) {
            // names are <term>-<index>.snap in fixed-width hex, so the newest sorts last
            return files.filter(f -> f.getFileName().toString().endsWith(".snap"))
                    .max(Comparator.comparing(f -> f.getFileName().toString()));
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

    private static long read(Path snapshotFile, String prefix, KeyConsumer consumer) throws IOException {
        try (InputStream in = new BufferedInputStream(Files.newInputStream(snapshotFile), 1 << 16)) {
            long outer = fieldLength(in, 2, "snappb.Snapshot.data");
            long inner = fieldLength(in, 1, "raftpb.Snapshot.data");
            if (inner > outer)
                throw new IOException("corrupt snapshot " + snapshotFile + ": inner length beyond the outer one");
            try (JsonParser json = new JsonFactory().createParser(new Limited(in, inner))) {
                return readStore(json, prefix, consumer);
            }
        }
    }

    /** Skips fields until the length-delimited field {@code number}; returns its length. */
    private static long fieldLength(InputStream in, int number, String what) throws IOException {
        while (true) {
            long tag = varint(in);
            if (tag < 0) throw new IOException("snapshot ends before " + what);
            int field = (int) (tag >>> 3);
            int wire = (int) (tag & 7);
            if (field == number && wire == 2) return varint(in);
            switch (wire) {
                case 0 -> varint(in);
                case 1 -> in.skipNBytes(8);
                case 2 -> in.skipNBytes(varint(in));
                case 5 -> in.skipNBytes(4);
                default -> throw new IOException("unexpected protobuf wire type " + wire + " before " + what);
            }
        }
    }

    private static long varint(InputStream in) throws IOException {
        long value = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            int b = in.read();
            if (b < 0) return -1;
            value |= (long) (b & 0x7f) << shift;
            if ((b & 0x80) == 0) return value;
        }
        throw new IOException("malformed varint in snapshot");
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
            throw new IOException("unexpected " + actual + " in the v2 store JSON at " + json.currentLocation());
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
