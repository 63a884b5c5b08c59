package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a WAL dir says about the member, read offline (frames as in {@link WalIndex}): the metadata record
 * (etcdserverpb.Metadata {NodeID = 1, ClusterID = 2}), snapshot records (walpb.Snapshot {index = 1}), and
 * the entries that set the cluster version: a v2 request PUT /0/version (etcdserverpb.Request {Method = 2,
 * Path = 3, Val = 4}, bare in 2.x, wrapped as InternalRaftRequest.v2 = 2 in 3.x) or 3.5+'s
 * InternalRaftRequest.cluster_version_set = 1300 {ver = 1}; and downgrade_info_set = 1302 {enabled = 1,
 * ver = 2}. Also counts v2 writes to user keys (/1/...). Reads only.
 */
public final class WalRecords {

    private static final int METADATA = 1;
    private static final int ENTRY = 2;
    private static final int STATE = 3;
    private static final int SNAPSHOT = 5;

    private WalRecords() {}

    public static WalSummary read(Path walDir) throws IOException {
        return read(WalIndex.segments(walDir));
    }

    /**
     * The same, from the segment that holds the entry after {@code index} on (every later entry, the member id and
     * the last hard state, which etcd writes at the head of each segment it cuts): what a reader that already has a
     * configuration at {@code index} needs, without reading the segments before it (64 MB each).
     */
    public static WalSummary readAfter(Path walDir, long index) throws IOException {
        List<Path> files = WalIndex.segments(walDir);
        int from = 0;
        for (int i = 0; i < files.size(); i++) {
            if (WalIndex.firstIndex(files.get(i)) <= index + 1) from = i;
        }
        return read(files.subList(from, files.size()));
    }

    private static WalSummary read(List<Path> files) throws IOException {
        Scan scan = new Scan();
        for (Path file : files) {
            WalIndex.readRecords(file, scan::record);
        }
        // raft's own check when etcd starts ("state.commit N is out of range"): the last hard state commits no
        // entry beyond what the WAL (or its snapshot) holds; beyond it, the WAL lost its tail
        long held = Math.max(scan.lastIndex, scan.lastSnapshot);
        if (scan.commit > held && scan.commitAt != null)
            throw new DamagedFileException(new Damage(
                    files.getLast(),
                    "the end of the WAL (last entry " + held + ")",
                    "entries up to index " + scan.commit + ", which the hard state in " + scan.commitAt.getFileName()
                            + " commits: the WAL lost its tail"));
        return new WalSummary(
                files.size(),
                scan.memberId,
                scan.clusterId,
                scan.lastIndex < 0 ? OptionalLong.empty() : OptionalLong.of(scan.lastIndex),
                scan.lastSnapshot < 0 ? OptionalLong.empty() : OptionalLong.of(scan.lastSnapshot),
                List.copyOf(scan.versions),
                List.copyOf(scan.downgrades),
                scan.v2UserWrites,
                List.copyOf(scan.confChanges),
                scan.commit < 0 ? OptionalLong.empty() : OptionalLong.of(scan.commit),
                files.isEmpty() ? -1 : WalIndex.firstIndex(files.getFirst()),
                List.copyOf(scan.confChangesV2));
    }

    /** Stops a read once the metadata record was seen. */
    private static final class Found extends IOException {
        @Override
        public synchronized Throwable fillInStackTrace() {
            return this; // control flow, not an error
        }
    }

    /**
     * The member id of the WAL's metadata record, read from the head of the newest segment only (etcd writes the
     * record at the start of every segment): a few KB whatever the WAL's size. Empty without a segment or record.
     */
    public static OptionalLong memberId(Path walDir) throws IOException {
        if (!java.nio.file.Files.isDirectory(walDir)) return OptionalLong.empty();
        List<Path> files = WalIndex.segments(walDir);
        if (files.isEmpty()) return OptionalLong.empty();
        Scan scan = new Scan();
        try {
            WalIndex.readRecords(files.getLast(), r -> {
                if (r.type() == METADATA) {
                    scan.record(r);
                    throw new Found();
                }
            });
        } catch (Found done) {
            // the metadata record was read
        }
        return scan.memberId;
    }

    private static final class Scan {
        OptionalLong memberId = OptionalLong.empty();
        OptionalLong clusterId = OptionalLong.empty();
        long lastIndex = -1;
        long lastSnapshot = -1;
        final List<VersionSet> versions = new ArrayList<>();
        final List<VersionSet> downgrades = new ArrayList<>();
        final List<ConfChange> confChanges = new ArrayList<>();
        final List<Long> confChangesV2 = new ArrayList<>();
        long v2UserWrites;

        /** The segment being read: where a record's damage is. */
        Path segment;
        /** The last hard state's commit index, and its segment. */
        long commit = -1;

        Path commitAt;

        void record(WalIndex.Record r) throws IOException {
            segment = r.file();
            byte[] b = r.b();
            long type = r.type();
            int data = r.dataStart();
            int dataEnd = r.dataEnd();
            if (data < 0) return;
            if (type == METADATA) {
                Protobuf.Reader m = new Protobuf.Reader(b, data, dataEnd);
                while (m.more()) {
                    long tag = m.varint();
                    if ((tag & 7) != 0) {
                        m.skip((int) (tag & 7));
                        continue;
                    }
                    long v = m.varint();
                    if (tag >>> 3 == 1) memberId = OptionalLong.of(v);
                    if (tag >>> 3 == 2) clusterId = OptionalLong.of(v);
                }
            } else if (type == SNAPSHOT) {
                Protobuf.Reader s = new Protobuf.Reader(b, data, dataEnd);
                while (s.more()) {
                    long tag = s.varint();
                    int wire = (int) (tag & 7);
                    if (wire == 0) {
                        long v = s.varint();
                        if (tag >>> 3 == 1) lastSnapshot = Math.max(lastSnapshot, v);
                    } else if (wire == 2) {
                        int len = s.length(); // (not "s.pos += s.length()": the read moves pos first)
                        s.pos += len;
                    } else {
                        s.skip(wire);
                    }
                }
            } else if (type == ENTRY) {
                entry(b, data, dataEnd);
            } else if (type == STATE) {
                Protobuf.Reader h =
                        new Protobuf.Reader(b, data, dataEnd); // raftpb.HardState {Term 1, Vote 2, Commit 3}
                while (h.more()) {
                    long tag = h.varint();
                    int wire = (int) (tag & 7);
                    if (wire == 0 && tag >>> 3 == 3) {
                        commit = h.varint();
                        commitAt = r.file();
                    } else {
                        h.skip(wire);
                    }
                }
            }
        }

        private void entry(byte[] b, int start, int end) throws IOException {
            Protobuf.Reader e = new Protobuf.Reader(b, start, end);
            long index = -1;
            long entryType = 0;
            int data = -1;
            int dataEnd = -1;
            while (e.more()) {
                long tag = e.varint();
                int field = (int) (tag >>> 3);
                int wire = (int) (tag & 7);
                if (wire == 0) {
                    long v = e.varint();
                    if (field == 3) index = v;
                    if (field == 1) entryType = v;
                } else if (wire == 2) {
                    int len = e.length();
                    if (field == 4) {
                        data = e.pos;
                        dataEnd = e.pos + len;
                    }
                    e.pos += len;
                } else {
                    e.skip(wire);
                }
            }
            lastIndex = Math.max(lastIndex, index);
            // raft appends entry i over any entries from i on that an old leader wrote: those never happened
            // (raft's indexes start at 1; an entry without one drops nothing)
            while (index > 0 && !confChanges.isEmpty() && confChanges.getLast().index() >= index)
                confChanges.removeLast();
            while (index > 0 && !confChangesV2.isEmpty() && confChangesV2.getLast() >= index)
                confChangesV2.removeLast();
            if (entryType == 2) confChangesV2.add(index); // etcd itself writes v1 ones: unknown ground
            if (data < 0) return;
            if (entryType == 1) {
                confChange(b, data, dataEnd, index);
                return;
            }
            if (entryType != 0) return;
            try {
                request(b, data, dataEnd, index, true);
            } catch (IOException notARequest) {
                // data of another shape (a v3 request this reader does not know): no version in it
            }
        }

        private void confChange(byte[] b, int start, int end, long index) throws IOException {
            Protobuf.Reader p = new Protobuf.Reader(b, start, end);
            int type = 0;
            long node = 0;
            String context = "";
            while (p.more()) {
                long tag = p.varint();
                int wire = (int) (tag & 7);
                if (wire == 0) {
                    long v = p.varint();
                    if (tag >>> 3 == 2) type = (int) v;
                    if (tag >>> 3 == 3) node = v;
                } else if (wire == 2) {
                    int len = p.length();
                    if (tag >>> 3 == 4) context = new String(b, p.pos, len, StandardCharsets.UTF_8);
                    p.pos += len;
                } else {
                    p.skip(wire);
                }
            }
            confChanges.add(new ConfChange(index, type, node, context, segment));
        }

        /** A v2 Request, or an InternalRaftRequest (which may wrap one at field 2: {@code nested}). */
        private void request(byte[] b, int start, int end, long index, boolean nested) throws IOException {
            Protobuf.Reader p = new Protobuf.Reader(b, start, end);
            String method = null;
            // where Request.Path and Request.Val are (the last of each): decoded only once the method says this
            // is a v2 Request, never for a v3 request's put/range (fields 4 and 3 there: a whole value as text
            // would be 80% of a 250 MiB start's reading, docs/benchmarks.md)
            int pathAt = -1;
            int pathLen = 0;
            int valAt = -1;
            int valLen = 0;
            while (p.more()) {
                long tag = p.varint();
                int field = (int) (tag >>> 3);
                int wire = (int) (tag & 7);
                if (wire != 2) {
                    if (wire == 0) p.varint();
                    else p.skip(wire);
                    continue;
                }
                int len = p.length();
                int at = p.pos;
                p.pos += len;
                switch (field) {
                    case 2 -> {
                        String text = ascii(b, at, len);
                        if (text != null && text.matches("[A-Z]{2,8}")) {
                            method = text; // Request.Method
                        } else if (nested) {
                            request(b, at, at + len, index, false); // InternalRaftRequest.v2
                        }
                    }
                    case 3 -> {
                        pathAt = at;
                        pathLen = len;
                    }
                    case 4 -> {
                        valAt = at;
                        valLen = len;
                    }
                    case 1300 ->
                        string(b, at, at + len, 1)
                                .ifPresent(v -> versions.add(new VersionSet(index, v, "cluster_version_set")));
                    case 1302 ->
                        string(b, at, at + len, 2)
                                .ifPresent(v -> downgrades.add(new VersionSet(index, v, "downgrade_info_set")));
                    default -> {}
                }
            }
            if (method == null || pathAt < 0) return;
            String path = new String(b, pathAt, pathLen, StandardCharsets.UTF_8);
            if (path.equals("/0/version") && method.equals("PUT") && valAt >= 0) {
                versions.add(
                        new VersionSet(index, new String(b, valAt, valLen, StandardCharsets.UTF_8), "PUT /0/version"));
            } else if (path.startsWith("/1/")
                    && !path.equals("/1" + V2Key.PROBE)
                    && !method.equals("GET")
                    && !method.equals("QGET")
                    && !method.equals("SYNC")) {
                v2UserWrites++;
            }
        }

        private static Optional<String> string(byte[] b, int start, int end, int number) throws IOException {
            Protobuf.Reader p = new Protobuf.Reader(b, start, end);
            while (p.more()) {
                long tag = p.varint();
                int wire = (int) (tag & 7);
                if (wire == 2) {
                    int len = p.length();
                    if (tag >>> 3 == number) return Optional.of(new String(b, p.pos, len, StandardCharsets.UTF_8));
                    p.pos += len;
                } else if (wire == 0) {
                    p.varint();
                } else {
                    p.skip(wire);
                }
            }
            return Optional.empty();
        }

        private static String ascii(byte[] b, int at, int len) {
            if (len > 16) return null;
            for (int i = at; i < at + len; i++) {
                if (b[i] < 0x20 || b[i] > 0x7e) return null;
            }
            return new String(b, at, len, StandardCharsets.US_ASCII);
        }
    }
}
