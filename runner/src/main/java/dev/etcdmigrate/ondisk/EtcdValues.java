package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What etcd's start decodes of its backend's buckets, checked as etcd decodes it, so that a value etcd would fail
 * on (it panics, or exits with "failed to unmarshal") is refused before any etcd runs. etcd's start reads:
 *
 * <ul>
 *   <li>{@code key}: every revision (mvcc's restore): a key of 17 bytes (main, '_', sub) or 18 (a tombstone's 't'),
 *       its separator '_' (etcd panics "invalid separator in bucket key"), both revisions non-negative (etcd
 *       panics "negative revision"),
 *       a value that is an mvccpb.KeyValue in protobuf's wire format (fields 1 key and 5 value length-delimited, 2-4
 *       revisions and 6 lease varints);
 *   <li>{@code lease}: every lease (the lessor's recovery): an 8-byte id, a leasepb.Lease (fields 1-3 varints);
 *   <li>{@code meta}: consistent_index and term, 8 bytes each (read as big-endian integers), confState as JSON;
 *   <li>{@code members}: each member as JSON; {@code cluster}: clusterVersion as a semantic version;
 *   <li>{@code auth}: authRevision, 8 bytes; {@code authUsers}, {@code authRoles}: protobuf messages;
 *       {@code alarm}: each key an etcdserverpb.AlarmMember.
 * </ul>
 *
 * The wire format is checked as protobuf's decoders of etcd's lines check it (gogo's generated code and
 * protobuf-go): a tag with a field number and a wire type of 0, 1, 2 or 5, a known field with its own wire type,
 * varints of at most ten bytes, lengths inside the message. Values are not otherwise interpreted (nor logged).
 */
final class EtcdValues {

    /** A value's bytes, read as far as asked. */
    interface Bytes {
        long length();

        /** The byte at i (0 <= i < length), 0-255. */
        int at(long i) throws IOException;

        /** The whole value (small values only: meta, members, cluster). */
        byte[] all() throws IOException;
    }

    /** Wire types of mvccpb.KeyValue's fields 1-6. */
    private static final int[] KEY_VALUE = {-1, 2, 0, 0, 0, 2, 0};
    /** Wire types of leasepb.Lease's fields 1-3. */
    private static final int[] LEASE = {-1, 0, 0, 0};
    /** Wire types of etcdserverpb.AlarmMember's fields 1-2. */
    private static final int[] ALARM_MEMBER = {-1, 0, 0};

    private static final int[] ANY = {-1};
    private static final Pattern SEMVER = Pattern.compile("\\d+\\.\\d+\\.\\d+(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?");

    private EtcdValues() {}

    /** What is wrong with this entry of a top-level bucket as etcd's start reads it, if anything. */
    static Optional<String> problem(Path file, String bucket, ByteBuffer key, Bytes value) throws IOException {
        return switch (bucket) {
            case "key" -> {
                int k = key.limit();
                if (k != 17 && !(k == 18 && key.get(17) == 't'))
                    yield Optional.of("a revision key of 17 bytes (or 18 ending in 't'), found " + k + " bytes");
                // etcd panics: "negative revision: main=... sub=..." (both big-endian int64)
                if ((key.get(0) & 0x80) != 0 || (key.get(9) & 0x80) != 0)
                    yield Optional.of("a revision key of non-negative main and sub revisions");
                if (key.get(8) != '_') // etcd panics: "invalid separator in bucket key"
                yield Optional.of("a revision key with '_' between its main and sub revision, found byte "
                        + (key.get(8) & 0xff));
                yield message(value, KEY_VALUE, "an mvccpb.KeyValue");
            }
            case "lease" ->
                key.limit() != 8
                        ? Optional.of("a lease id of 8 bytes, found " + key.limit())
                        : message(value, LEASE, "a leasepb.Lease");
            case "meta" ->
                switch (ascii(key)) {
                    case "consistent_index", "term" ->
                        value.length() != 8
                                ? Optional.of(ascii(key) + " of 8 bytes, found " + value.length())
                                : Optional.empty();
                    case "confState" -> json(file, "bucket meta, key confState", value);
                    default -> Optional.empty();
                };
            case "members" -> json(file, "bucket members", value);
            case "cluster" ->
                ascii(key).equals("clusterVersion")
                                && !SEMVER.matcher(new String(value.all(), StandardCharsets.UTF_8))
                                        .matches()
                        ? Optional.of("clusterVersion as a semantic version")
                        : Optional.empty();
            case "auth" ->
                ascii(key).equals("authRevision") && value.length() != 8
                        ? Optional.of("authRevision of 8 bytes, found " + value.length())
                        : Optional.empty();
            case "authUsers" -> message(value, ANY, "an authpb.User");
            case "authRoles" -> message(value, ANY, "an authpb.Role");
            case "alarm" -> message(new Heap(bytes(key)), ALARM_MEMBER, "an etcdserverpb.AlarmMember key");
            default -> Optional.empty();
        };
    }

    /**
     * The message's fields in protobuf's wire format; {@code wireTypes[n]} is field n's own wire type (fields
     * beyond the array are unknown and skipped, as the decoders skip them).
     */
    static Optional<String> message(Bytes b, int[] wireTypes, String what) throws IOException {
        long n = b.length();
        long i = 0;
        while (i < n) {
            long start = i;
            long[] tag = varint(b, i);
            if (tag == null) return Optional.of(what + ": a field tag cut short or over ten bytes at byte " + start);
            i = tag[1];
            long field = tag[0] >>> 3;
            int wire = (int) (tag[0] & 7);
            if (field <= 0 || field > (1 << 29) - 1)
                return Optional.of(what + ": a field number in [1, 2^29), found " + field + " at byte " + start);
            if (field < wireTypes.length && wireTypes[(int) field] >= 0 && wireTypes[(int) field] != wire)
                return Optional.of(what + ": field " + field + " of wire type " + wireTypes[(int) field] + ", found "
                        + wire + " at byte " + start);
            switch (wire) {
                case 0 -> {
                    long[] v = varint(b, i);
                    if (v == null) return Optional.of(what + ": a varint cut short or over ten bytes at byte " + i);
                    i = v[1];
                }
                case 1 -> i += 8;
                case 5 -> i += 4;
                case 2 -> {
                    long[] len = varint(b, i);
                    if (len == null) return Optional.of(what + ": a length cut short at byte " + i);
                    if (len[0] < 0 || len[0] > n - len[1])
                        return Optional.of(what + ": a length within the message's " + n + " bytes, found " + len[0]
                                + " at byte " + i);
                    i = len[1] + len[0];
                }
                default -> {
                    return Optional.of(what + ": a wire type of 0, 1, 2 or 5, found " + wire + " at byte " + start);
                }
            }
            if (i > n) return Optional.of(what + ": a field within the message's " + n + " bytes at byte " + start);
        }
        return Optional.empty();
    }

    /** {value, next index} of the varint at i, or null where it is cut short or overflows 64 bits. */
    private static long[] varint(Bytes b, long i) throws IOException {
        long value = 0;
        for (int k = 0; k < 10; k++) {
            if (i + k >= b.length()) return null;
            int x = b.at(i + k);
            if (k == 9 && x > 1) return null; // the tenth byte holds the 64th bit only
            value |= (long) (x & 0x7f) << (7 * k);
            if ((x & 0x80) == 0) return new long[] {value, i + k + 1};
        }
        return null;
    }

    private static Optional<String> json(Path file, String where, Bytes value) throws IOException {
        try {
            EtcdJson.parse(file, where, value.all());
            return Optional.empty();
        } catch (DamagedFileException e) {
            return Optional.of(e.damage().expected());
        }
    }

    private static String ascii(ByteBuffer key) {
        return new String(bytes(key), StandardCharsets.ISO_8859_1);
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.limit()];
        b.get(0, out);
        return out;
    }

    /** A value held in memory. */
    record Heap(byte[] b) implements Bytes {
        @Override
        public long length() {
            return b.length;
        }

        @Override
        public int at(long i) {
            return b[(int) i] & 0xff;
        }

        @Override
        public byte[] all() {
            return b.clone();
        }
    }
}
