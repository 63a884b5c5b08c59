package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.io.InputStream;

/**
 * The one protobuf decoder of this package (WAL records, snapshot envelopes, alarm and key-value keys),
 * with one rule for damage: a varint cut short by the end of its field or file, longer than ten bytes, or a
 * length running past its field is {@link Malformed}; callers name the file and offset.
 */
public final class Protobuf {

    /** A protobuf field this reader cannot decode; {@link #at} is the byte offset within the decoded range's buffer or stream. */
    public static final class Malformed extends IOException {
        private final long at;

        public Malformed(String message, long at) {
            super(message + " at byte " + at);
            this.at = at;
        }

        public long at() {
            return at;
        }
    }

    /** Where a varint's bytes come from: the next byte (0-255) or -1 at the end. */
    interface ByteSource {
        int next() throws IOException;

        long position();
    }

    private Protobuf() {}

    /** The one varint decoder: base-128, little-endian groups, at most ten bytes; a truncated one is damage. */
    static long varint(ByteSource in) throws IOException {
        long start = in.position();
        long value = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            int x = in.next();
            if (x < 0) throw new Malformed("a varint cut short", start);
            value |= (long) (x & 0x7f) << shift;
            if ((x & 0x80) == 0) return value;
        }
        throw new Malformed("a varint longer than ten bytes", start);
    }

    /** A protobuf reader over b[start, end): fields in order, every length checked against end. */
    public static final class Reader implements ByteSource {
        private final byte[] b;
        private final int end;
        int pos;

        public Reader(byte[] b, int start, int end) {
            if (start < 0 || end > b.length || start > end)
                throw new IllegalArgumentException("range [" + start + ", " + end + ") of " + b.length + " bytes");
            this.b = b;
            this.pos = start;
            this.end = end;
        }

        @Override
        public int next() {
            return pos < end ? b[pos++] & 0xff : -1;
        }

        @Override
        public long position() {
            return pos;
        }

        public boolean more() {
            return pos < end;
        }

        public long varint() throws IOException {
            return Protobuf.varint(this);
        }

        /** A length-delimited field's length; its bytes are b[pos, pos + length) after the call. */
        public int length() throws IOException {
            long at = pos;
            long len = varint();
            if (len < 0 || len > end - pos)
                throw new Malformed("a field of " + len + " bytes runs past its record", at);
            return (int) len;
        }

        /** Skips a field of this wire type whose tag was just read. */
        public void skip(int wire) throws IOException {
            long at = pos;
            int n = switch (wire) {
                case 0 -> {
                    varint();
                    yield 0;
                }
                case 1 -> 8;
                case 2 -> length();
                case 5 -> 4;
                default -> throw new Malformed("protobuf wire type " + wire, at);
            };
            if (n > end - pos) throw new Malformed("a fixed field runs past its record", at);
            pos += n;
        }
    }

    /** A varint source over a stream, counting the bytes read (for damage offsets). */
    static final class StreamSource implements ByteSource {
        private final InputStream in;
        private long position;

        StreamSource(InputStream in) {
            this.in = in;
        }

        @Override
        public int next() throws IOException {
            int x = in.read();
            if (x >= 0) position++;
            return x;
        }

        @Override
        public long position() {
            return position;
        }

        long varint() throws IOException {
            return Protobuf.varint(this);
        }

        /** Skips n bytes; false when the stream ends first. */
        boolean skip(long n) throws IOException {
            if (n < 0) return false;
            long skipped = 0;
            while (skipped < n) {
                long s = in.skip(n - skipped);
                if (s <= 0) {
                    if (in.read() < 0) {
                        position += skipped;
                        return false;
                    }
                    s = 1;
                }
                skipped += s;
            }
            position += skipped;
            return true;
        }
    }
}
