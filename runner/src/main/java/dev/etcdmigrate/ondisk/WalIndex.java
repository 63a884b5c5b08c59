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

    /** etcd's own names: {@code <seq>-<first index>.wal} in fixed-width hex; etcd ignores other files too. */
    private static final java.util.regex.Pattern SEGMENT =
            java.util.regex.Pattern.compile("[0-9a-f]{16}-[0-9a-f]{16}\\.wal");

    /** A WAL dir's segments in write order (fixed-width hex names: name order). */
    static List<Path> segments(Path walDir) throws IOException {
        try (Stream<Path> list = Files.list(walDir)) {
            return list.filter(f -> SEGMENT.matcher(f.getFileName().toString()).matches())
                    .sorted()
                    .toList();
        }
    }

    /**
     * One walpb.Record: its type (-1 if absent) and its data field, b[dataStart, dataEnd) (dataStart -1 if
     * absent), and where its frame starts in which segment. {@code b} is the reader's buffer, valid only while the
     * sink handles this record.
     */
    record Record(byte[] b, long type, int dataStart, int dataEnd, Path file, long offset) {}

    interface RecordSink {
        void accept(Record record) throws IOException;
    }

    /** Frames above this are damage, not data: etcd's own limit on a WAL record (wal.maxWALEntrySizeLimit is 10 MiB in 3.4+). */
    private static final long MAX_RECORD = 256L << 20;

    /**
     * Hands each record of a segment to the sink, in order, up to the preallocated tail or a torn last frame
     * (a frame running past the end of the file: etcd repairs that tail itself). A record that does not
     * decode, in this reader or in the sink, is a {@link DamagedFileException} naming the segment and the
     * frame's offset.
     */
    static void readRecords(Path file, RecordSink sink) throws IOException {
        long size = Files.size(file);
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file), 1 << 16))) {
            // one buffer for every record of the segment, grown as needed: an array per record, allocated and zeroed
            // for every large value of a big WAL, costs more than reading the file
            byte[] bytes = new byte[1 << 16];
            long offset = 0;
            while (offset + 8 <= size) {
                long frame;
                try {
                    frame = Long.reverseBytes(in.readLong());
                } catch (EOFException end) {
                    return; // the file shrank while read
                }
                long length = frame & 0x00FFFFFFFFFFFFFFL;
                if (length == 0) return; // preallocated zeros: nothing written beyond
                int padding = frame < 0 ? (int) ((frame >>> 56) & 0x7) : 0;
                if (length + padding > size - offset - 8) return; // a torn tail: etcd ignores (repairs) it too
                if (length > MAX_RECORD)
                    throw new DamagedFileException(new Damage(
                            file,
                            "WAL frame at offset " + offset,
                            "a record of at most " + MAX_RECORD + " bytes, found " + length));
                int need = (int) (length + padding);
                if (bytes.length < need) bytes = new byte[Math.max(need, Math.min(bytes.length * 2, (int) MAX_RECORD))];
                try {
                    in.readFully(bytes, 0, need);
                } catch (EOFException torn) {
                    return;
                }
                try {
                    sink.accept(record(bytes, (int) length, file, offset));
                } catch (Protobuf.Malformed e) {
                    throw new DamagedFileException(new Damage(
                            file,
                            "WAL frame at offset " + offset,
                            "a walpb.Record etcd can decode: " + e.getMessage()));
                }
                offset += 8 + length + padding;
            }
        }
    }

    static Record record(byte[] b, int length, Path file, long offset) throws IOException {
        Protobuf.Reader r = new Protobuf.Reader(b, 0, length);
        long type = -1;
        int dataStart = -1;
        int dataEnd = -1;
        while (r.more()) {
            long tag = r.varint();
            int field = (int) (tag >>> 3);
            int wire = (int) (tag & 7);
            if (wire == 2 && field == 3) {
                int len = r.length();
                dataStart = r.pos;
                dataEnd = r.pos + len;
                r.pos += len;
            } else if (wire == 0 && field == 1) {
                type = r.varint();
            } else {
                r.skip(wire);
            }
        }
        return new Record(b, type, dataStart, dataEnd, file, offset);
    }

    /** The Entry.index of an entry record, else -1. */
    static long entryIndex(Record record) throws IOException {
        if (record.type() != ENTRY_RECORD || record.dataStart() < 0) return -1;
        Protobuf.Reader e = new Protobuf.Reader(record.b(), record.dataStart(), record.dataEnd());
        while (e.more()) {
            long tag = e.varint();
            int wire = (int) (tag & 7);
            if (wire == 0 && tag >>> 3 == 3) return e.varint();
            e.skip(wire);
        }
        return -1;
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
        List<Path> segments = segments(member.resolve("wal"));
        int keepFrom = 0;
        for (int i = 0; i < segments.size(); i++) {
            if (firstIndex(segments.get(i)) <= index) keepFrom = i;
        }
        for (Path old : segments.subList(0, keepFrom)) {
            Files.delete(old);
        }
    }

    /** The raft index a segment's entries start after ({@code <seq>-<index>.wal}): 0 for a WAL kept from its start. */
    static long firstIndex(Path segment) {
        String name = segment.getFileName().toString();
        return Long.parseUnsignedLong(name.substring(name.indexOf('-') + 1, name.indexOf(".wal")), 16);
    }

    /** The raft index in a snapshot file's name (<term>-<index>.snap, hex). */
    public static long snapshotIndex(Path snapFile) {
        String name = snapFile.getFileName().toString();
        return Long.parseUnsignedLong(name.substring(name.indexOf('-') + 1, name.indexOf(".snap")), 16);
    }
}
