package dev.etcdmigrate.ondisk;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import java.util.stream.Stream;

/**
 * The highest raft index in a WAL dir, read offline. The WAL is a sequence of frames: a little-endian
 * uint64 whose low 56 bits are the record's length (the top byte says how many padding bytes follow;
 * 0 in 2.x), then a walpb.Record {type = 1, crc = 2, data = 3}; entry records (type 2) carry a
 * raftpb.Entry {term = 2, index = 3}. A zero length is the preallocated tail.
 */
public final class WalIndex {

    private static final int ENTRY_RECORD = 2;

    private WalIndex() {}

    public static OptionalLong lastIndex(Path walDir) throws IOException {
        long[] last = {-1};
        for (Path file : segments(walDir)) {
            readRecords(file, r -> last[0] = Math.max(last[0], entryIndex(r)));
        }
        return last[0] < 0 ? OptionalLong.empty() : OptionalLong.of(last[0]);
    }

    /** A WAL dir's segments in write order (names are <seq>-<index>.wal in fixed-width hex: name order). */
    static List<Path> segments(Path walDir) throws IOException {
        try (Stream<Path> list = Files.list(walDir)) {
            return list.filter(f -> f.getFileName().toString().endsWith(".wal"))
                    .sorted()
                    .toList();
        }
    }

    /** One walpb.Record: its type (-1 if absent) and its data field, b[dataStart, dataEnd) (dataStart -1 if absent). */
    record Record(byte[] b, long type, int dataStart, int dataEnd) {}

    interface RecordSink {
        void accept(Record record) throws IOException;
    }

    /** Hands each record of a segment to the sink, in order, up to the preallocated tail or a torn last frame. */
    static void readRecords(Path file, RecordSink sink) throws IOException {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
            while (true) {
                long frame;
                try {
                    frame = Long.reverseBytes(in.readLong());
                } catch (EOFException end) {
                    return;
                }
                long length = frame & 0x00FFFFFFFFFFFFFFL;
                if (length == 0) return; // preallocated zeros: nothing written beyond
                if (length > (256L << 20)) throw new IOException(file + ": a WAL record of " + length + " bytes");
                int padding = frame < 0 ? (int) ((frame >>> 56) & 0x7) : 0;
                byte[] bytes = new byte[Math.toIntExact(length + padding)];
                try {
                    in.readFully(bytes);
                } catch (EOFException torn) {
                    return; // a torn tail: etcd ignores it too
                }
                sink.accept(record(bytes, (int) length));
            }
        }
    }

    static Record record(byte[] b, int length) throws IOException {
        Proto r = new Proto(b, 0, length);
        long type = -1;
        int dataStart = -1;
        int dataEnd = -1;
        while (r.more()) {
            long tag = r.varint();
            int field = (int) (tag >>> 3);
            int wire = (int) (tag & 7);
            if (wire == 2) {
                int len = r.length();
                if (field == 3) {
                    dataStart = r.pos;
                    dataEnd = r.pos + len;
                }
                r.pos += len;
            } else if (wire == 0) {
                long v = r.varint();
                if (field == 1) type = v;
            } else {
                r.skip(wire);
            }
        }
        return new Record(b, type, dataStart, dataEnd);
    }

    /** The Entry.index of an entry record, else -1. */
    static long entryIndex(Record record) throws IOException {
        if (record.type() != ENTRY_RECORD || record.dataStart() < 0) return -1;
        Proto e = new Proto(record.b(), record.dataStart(), record.dataEnd());
        while (e.more()) {
            long tag = e.varint();
            int field = (int) (tag >>> 3);
            int wire = (int) (tag & 7);
            if (wire == 0) {
                long v = e.varint();
                if (field == 3) return v;
            } else if (wire == 2) {
                int len = e.length();
                e.pos += len;
            } else {
                e.skip(wire);
            }
        }
        return -1;
    }

    /** A minimal protobuf reader over a byte range. */
    static final class Proto {
        private final byte[] b;
        private final int end;
        int pos;

        Proto(byte[] b, int start, int end) {
            this.b = b;
            this.pos = start;
            this.end = end;
        }

        boolean more() {
            return pos < end;
        }

        long varint() throws IOException {
            long value = 0;
            for (int shift = 0; shift < 64; shift += 7) {
                if (pos >= end) throw new IOException("truncated varint in a WAL record");
                int x = b[pos++] & 0xff;
                value |= (long) (x & 0x7f) << shift;
                if ((x & 0x80) == 0) return value;
            }
            throw new IOException("malformed varint in a WAL record");
        }

        /** A length-delimited field's bounds: its bytes are b[pos, pos + length) after the call. */
        int length() throws IOException {
            long len = varint();
            if (len < 0 || pos + len > end) throw new IOException("a WAL record field runs past its record");
            return (int) len;
        }

        void skip(int wire) throws IOException {
            switch (wire) {
                case 1 -> pos += 8;
                case 5 -> pos += 4;
                default -> throw new IOException("unexpected protobuf wire type " + wire + " in a WAL record");
            }
        }
    }

    /**
     * In a copy of a member dir, deletes what etcd no longer reads once {@code snapshot} exists: older
     * .snap files, and WAL segments wholly before the one that holds the snapshot's index (segments are
     * named {@code <seq>-<first index>.wal}; etcd itself opens the WAL at that segment).
     */
    public static void pruneBefore(Path member, Path snapshot) throws IOException {
        long index = snapshotIndex(snapshot);
        try (Stream<Path> snaps = Files.list(member.resolve("snap"))) {
            for (Path old : snaps.filter(f -> f.getFileName().toString().endsWith(".snap") && !f.equals(snapshot))
                    .toList()) {
                Files.delete(old);
            }
        }
        List<Path> segments;
        try (Stream<Path> list = Files.list(member.resolve("wal"))) {
            segments = list.filter(f -> f.getFileName().toString().endsWith(".wal"))
                    .sorted()
                    .toList();
        }
        int keepFrom = 0;
        for (int i = 0; i < segments.size(); i++) {
            if (firstIndex(segments.get(i)) <= index) keepFrom = i;
        }
        for (Path old : segments.subList(0, keepFrom)) {
            Files.delete(old);
        }
    }

    private static long firstIndex(Path segment) {
        String name = segment.getFileName().toString();
        return Long.parseUnsignedLong(name.substring(name.indexOf('-') + 1, name.indexOf(".wal")), 16);
    }

    /** The raft index in a snapshot file's name (<term>-<index>.snap, hex). */
    public static long snapshotIndex(Path snapFile) {
        String name = snapFile.getFileName().toString();
        return Long.parseUnsignedLong(name.substring(name.indexOf('-') + 1, name.indexOf(".snap")), 16);
    }
}
