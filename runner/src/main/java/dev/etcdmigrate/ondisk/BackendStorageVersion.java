package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Optional;

/**
 * The storage version etcd 3.6+ records in its backend (bucket {@code meta}, key {@code storageVersion}),
 * read straight from the bbolt file: the two meta pages, then one path of pages from the root down to the
 * key (a few KiB whatever the db's size). {@code etcdutl snapshot status} answers the same question but
 * hashes every page of the db first (0.5 s at 100 MiB, seconds at 4 GiB).
 *
 * <p>Read-only and lock-free: unlike etcdutl it does not wait on bbolt's file lock. Whether an etcd holds
 * the db open is asked separately ({@link #lockHolder}): bbolt's flock shows in /proc/locks.
 *
 * <p>bbolt's layout (go.etcd.io/bbolt, little-endian on the platforms etcd ships for): a page starts with
 * {id u64, flags u16, count u16, overflow u32}; pages 0 and 1 are meta pages {magic u32, version u32,
 * pageSize u32, flags u32, root bucket {root u64, sequence u64}, freelist u64, pgid u64, txid u64, checksum
 * u64}, the valid one with the higher txid is current; branch elements are {pos u32, ksize u32, pgid u64},
 * leaf elements {flags u32, pos u32, ksize u32, vsize u32}, pos counted from the element; a bucket's value
 * is {root u64, sequence u64}, followed by its page when root is 0 (an inline bucket).
 */
public final class BackendStorageVersion {

    private static final int MAGIC = 0xED0CDAED;
    private static final int PAGE_HEADER = 16;
    private static final int ELEMENT = 16;
    private static final int BRANCH = 0x01;
    private static final int LEAF = 0x02;
    private static final int BUCKET_LEAF = 0x01;
    private static final byte[] META_BUCKET = "meta".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] STORAGE_VERSION = "storageVersion".getBytes(StandardCharsets.US_ASCII);
    private static final int MAX_DEPTH = 64;

    private BackendStorageVersion() {}

    /** A db file that is not a bbolt file this reader understands. */
    public static final class UnreadableBackendException extends IOException {
        UnreadableBackendException(String message) {
            super(message);
        }
    }

    /**
     * The recorded storage version (e.g. "3.6.0"), or empty when the db records none (etcd 3.5 and older
     * never write it).
     */
    public static Optional<String> read(Path db) throws IOException {
        try (FileChannel file = FileChannel.open(db, StandardOpenOption.READ)) {
            Meta meta = currentMeta(file, db);
            Optional<ByteBuffer> bucket =
                    lookup(file, meta.pageSize(), page(file, meta.pageSize(), meta.root()), META_BUCKET, true, 0, db);
            if (bucket.isEmpty()) return Optional.empty();
            Optional<ByteBuffer> value = lookup(
                    file,
                    meta.pageSize(),
                    bucketRoot(file, meta.pageSize(), bucket.get(), db),
                    STORAGE_VERSION,
                    false,
                    0,
                    db);
            return value.map(v -> StandardCharsets.UTF_8.decode(v).toString());
        }
    }

    /** A key and its value in a bucket (copies). */
    public record Entry(byte[] key, byte[] value) {}

    /** One plain value of a top-level bucket, or empty when the bucket or key is missing (or the key names a bucket). */
    public static Optional<byte[]> value(Path db, String bucket, String key) throws IOException {
        try (FileChannel file = FileChannel.open(db, StandardOpenOption.READ)) {
            Meta meta = currentMeta(file, db);
            Optional<ByteBuffer> header = lookup(
                    file,
                    meta.pageSize(),
                    page(file, meta.pageSize(), meta.root()),
                    bucket.getBytes(StandardCharsets.US_ASCII),
                    true,
                    0,
                    db);
            if (header.isEmpty()) return Optional.empty();
            Optional<ByteBuffer> value = lookup(
                    file,
                    meta.pageSize(),
                    bucketRoot(file, meta.pageSize(), header.get(), db),
                    key.getBytes(StandardCharsets.US_ASCII),
                    false,
                    0,
                    db);
            return value.map(v -> {
                byte[] out = new byte[v.remaining()];
                v.get(v.position(), out);
                return out;
            });
        }
    }

    /**
     * The plain entries of a top-level bucket in key order, at most {@code limit} of them (a bound on what an
     * offline report reads); empty when the bucket is missing. {@link #count} counts without copying.
     */
    public static java.util.List<Entry> entries(Path db, String bucket, int limit) throws IOException {
        java.util.List<Entry> out = new java.util.ArrayList<>();
        walk(db, bucket, (k, v) -> {
            if (out.size() >= limit) return false;
            byte[] key = new byte[k.remaining()];
            k.get(k.position(), key);
            byte[] value = new byte[v.remaining()];
            v.get(v.position(), value);
            out.add(new Entry(key, value));
            return true;
        });
        return out;
    }

    /** Whether a top-level bucket exists. */
    public static boolean hasBucket(Path db, String bucket) throws IOException {
        try (FileChannel file = FileChannel.open(db, StandardOpenOption.READ)) {
            Meta meta = currentMeta(file, db);
            return lookup(
                            file,
                            meta.pageSize(),
                            page(file, meta.pageSize(), meta.root()),
                            bucket.getBytes(StandardCharsets.US_ASCII),
                            true,
                            0,
                            db)
                    .isPresent();
        }
    }

    /** Visits the plain entries of a bucket until the visitor returns false. */
    public interface Visitor {
        boolean visit(ByteBuffer key, ByteBuffer value) throws IOException;
    }

    public static void walk(Path db, String bucket, Visitor visitor) throws IOException {
        try (FileChannel file = FileChannel.open(db, StandardOpenOption.READ)) {
            Meta meta = currentMeta(file, db);
            Optional<ByteBuffer> header = lookup(
                    file,
                    meta.pageSize(),
                    page(file, meta.pageSize(), meta.root()),
                    bucket.getBytes(StandardCharsets.US_ASCII),
                    true,
                    0,
                    db);
            if (header.isEmpty()) return;
            walkTree(file, meta.pageSize(), bucketRoot(file, meta.pageSize(), header.get(), db), visitor, 0, db);
        }
    }

    private static boolean walkTree(
            FileChannel file, int pageSize, ByteBuffer page, Visitor visitor, int depth, Path db) throws IOException {
        if (depth > MAX_DEPTH)
            throw new UnreadableBackendException(db + ": the tree is deeper than " + MAX_DEPTH + " pages");
        int flags = Short.toUnsignedInt(page.getShort(8));
        int count = Short.toUnsignedInt(page.getShort(10));
        if ((flags & BRANCH) != 0) {
            for (int i = 0; i < count; i++) {
                int e = PAGE_HEADER + i * ELEMENT;
                if (!walkTree(file, pageSize, page(file, pageSize, page.getLong(e + 8)), visitor, depth + 1, db))
                    return false;
            }
            return true;
        }
        if ((flags & LEAF) == 0)
            throw new UnreadableBackendException(db + ": page of flags " + flags + " where a tree page was expected");
        for (int i = 0; i < count; i++) {
            int e = PAGE_HEADER + i * ELEMENT;
            if ((page.getInt(e) & BUCKET_LEAF) != 0) continue; // a nested bucket: etcd keeps none
            int pos = page.getInt(e + 4);
            int ksize = page.getInt(e + 8);
            int vsize = page.getInt(e + 12);
            if (e + pos < 0 || ksize < 0 || vsize < 0 || e + pos + ksize + vsize > page.limit()) {
                throw new UnreadableBackendException("an element points outside its page");
            }
            ByteBuffer key = page.slice(e + pos, ksize).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer value = page.slice(e + pos + ksize, vsize).order(ByteOrder.LITTLE_ENDIAN);
            if (!visitor.visit(key, value)) return false;
        }
        return true;
    }

    /**
     * The db's size and the bytes its pages in use take: size less the free pages bbolt's freelist lists, as
     * etcd's dbSizeInUse reports, or where the freelist is not on disk (NoFreelistSync) the pages reachable
     * from the root.
     */
    public record Size(long bytes, java.util.OptionalLong inUse) {}

    public static Size size(Path db) throws IOException {
        try (FileChannel file = FileChannel.open(db, StandardOpenOption.READ)) {
            long bytes = file.size();
            ByteBuffer raw = readFully(file, 0, 80);
            Meta meta = currentMeta(file, db);
            // the current meta's freelist page id (offset 48 of the meta page of the higher txid)
            ByteBuffer m0 = raw;
            ByteBuffer m1 = readFully(file, meta.pageSize(), 80);
            ByteBuffer current = m1 != null && m1.getLong(64) == meta.txid() ? m1 : m0;
            long freelist = current.getLong(48);
            long highWater = current.getLong(56);
            if (freelist == -1L || freelist <= 1) return new Size(bytes, reachable(file, meta, db));
            ByteBuffer list = page(file, meta.pageSize(), freelist);
            if ((Short.toUnsignedInt(list.getShort(8)) & 0x10) == 0) return new Size(bytes, reachable(file, meta, db));
            long free = Short.toUnsignedInt(list.getShort(10));
            if (free == 0xFFFF) free = list.getLong(PAGE_HEADER); // the real count sits in the first element
            long used = Math.min(bytes, Math.max(0, highWater - free) * meta.pageSize());
            return new Size(bytes, java.util.OptionalLong.of(used));
        }
    }

    /**
     * Without a freelist on disk (bbolt's NoFreelistSync, etcd's default since 3.4): the bytes of the pages
     * reachable from the root (the two meta pages, every tree page with its overflow). Top-level leaves are
     * read whole to find the buckets; a bucket's own pages only by their headers (etcd nests no buckets).
     */
    private static java.util.OptionalLong reachable(FileChannel file, Meta meta, Path db) throws IOException {
        long[] pages = {2};
        countTree(file, meta.pageSize(), meta.root(), true, pages, 0, db);
        return java.util.OptionalLong.of(Math.min(file.size(), pages[0] * meta.pageSize()));
    }

    private static void countTree(
            FileChannel file, int pageSize, long id, boolean rootTree, long[] pages, int depth, Path db)
            throws IOException {
        if (depth > MAX_DEPTH)
            throw new UnreadableBackendException(db + ": the tree is deeper than " + MAX_DEPTH + " pages");
        ByteBuffer header = readFully(file, id * pageSize, PAGE_HEADER);
        if (header == null) throw new UnreadableBackendException("page " + id + " lies past the end of the db");
        int flags = Short.toUnsignedInt(header.getShort(8));
        pages[0] += 1 + Integer.toUnsignedLong(header.getInt(12));
        if ((flags & BRANCH) != 0) {
            ByteBuffer page = page(file, pageSize, id);
            int count = Short.toUnsignedInt(page.getShort(10));
            for (int i = 0; i < count; i++) {
                countTree(file, pageSize, page.getLong(PAGE_HEADER + i * ELEMENT + 8), rootTree, pages, depth + 1, db);
            }
        } else if ((flags & LEAF) != 0 && rootTree) {
            ByteBuffer page = page(file, pageSize, id);
            int count = Short.toUnsignedInt(page.getShort(10));
            for (int i = 0; i < count; i++) {
                int e = PAGE_HEADER + i * ELEMENT;
                if ((page.getInt(e) & BUCKET_LEAF) == 0) continue;
                int at = e + page.getInt(e + 4) + page.getInt(e + 8);
                if (at + 8 > page.limit()) throw new UnreadableBackendException("an element points outside its page");
                long bucketRoot = page.getLong(at);
                if (bucketRoot != 0)
                    countTree(file, pageSize, bucketRoot, false, pages, depth + 1, db); // 0: inline in this leaf
            }
        }
    }

    /**
     * The PID of a process holding a flock on the db (bbolt takes one for as long as it has the file open: a
     * running etcd, etcdutl), from /proc/locks; empty when none, or on a system without /proc/locks.
     */
    public static java.util.OptionalLong lockHolder(Path db) throws IOException {
        Path locks = Path.of("/proc/locks");
        if (!java.nio.file.Files.isReadable(locks)) return java.util.OptionalLong.empty();
        long dev = ((Number) java.nio.file.Files.getAttribute(db, "unix:dev")).longValue();
        long ino = ((Number) java.nio.file.Files.getAttribute(db, "unix:ino")).longValue();
        return lockHolder(java.nio.file.Files.readAllLines(locks), dev, ino);
    }

    /** The holder among /proc/locks lines ("1: FLOCK  ADVISORY  WRITE 4242 fe:00:123 0 EOF") of the file dev:ino. */
    static java.util.OptionalLong lockHolder(java.util.List<String> procLocks, long dev, long ino) {
        // glibc's major()/minor() of st_dev, printed by the kernel as %02x:%02x:%lu
        long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
        long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
        for (String line : procLocks) {
            String[] f = line.trim().split("\\s+");
            // "N:" then, for a lock someone waits on, "->"; then type, mode, access, pid, dev:ino, start, end
            int i = 1;
            if (i < f.length && f[i].equals("->")) continue; // a waiter, not a holder
            if (f.length < i + 5 || !f[i].equals("FLOCK")) continue;
            String[] id = f[i + 4].split(":");
            if (id.length != 3) continue;
            try {
                if (Long.parseLong(id[0], 16) == major
                        && Long.parseLong(id[1], 16) == minor
                        && Long.parseLong(id[2]) == ino) {
                    return java.util.OptionalLong.of(Long.parseLong(f[i + 3]));
                }
            } catch (NumberFormatException ignored) {
                // a line of another format
            }
        }
        return java.util.OptionalLong.empty();
    }

    private record Meta(int pageSize, long root, long txid) {}

    private static Meta currentMeta(FileChannel file, Path db) throws IOException {
        Meta best = null;
        Meta first = metaAt(file, 0);
        int pageSize = first != null ? first.pageSize() : 4096; // a torn meta 0: bbolt tries the OS page size too
        for (Meta m : new Meta[] {first, metaAt(file, pageSize)}) {
            if (m != null && (best == null || m.txid() > best.txid())) best = m;
        }
        if (best == null) throw new UnreadableBackendException(db + " has no valid bbolt meta page");
        return best;
    }

    /** The meta page at this offset if its magic, version and checksum hold. */
    private static Meta metaAt(FileChannel file, long offset) throws IOException {
        ByteBuffer b = readFully(file, offset, 80);
        if (b == null) return null;
        if (b.getInt(16) != MAGIC || b.getInt(20) != 2) return null;
        long sum = fnv1a64(b, 16, 72);
        if (sum != b.getLong(72)) return null;
        int pageSize = b.getInt(24);
        if (pageSize < 512 || pageSize > (1 << 20) || Integer.bitCount(pageSize) != 1) return null;
        return new Meta(pageSize, b.getLong(32), b.getLong(64));
    }

    private static long fnv1a64(ByteBuffer b, int from, int to) {
        long hash = 0xcbf29ce484222325L;
        for (int i = from; i < to; i++) {
            hash ^= b.get(i) & 0xff;
            hash *= 0x100000001b3L;
        }
        return hash;
    }

    /** A whole page (with its overflow pages), little-endian, position 0 at its header. */
    private static ByteBuffer page(FileChannel file, int pageSize, long id) throws IOException {
        ByteBuffer header = readFully(file, id * pageSize, PAGE_HEADER);
        if (header == null) throw new UnreadableBackendException("page " + id + " lies past the end of the db");
        long overflow = Integer.toUnsignedLong(header.getInt(12));
        long size = (overflow + 1) * pageSize;
        if (size > (64L << 20)) throw new UnreadableBackendException("page " + id + " claims " + size + " bytes");
        ByteBuffer whole = readFully(file, id * pageSize, (int) size);
        if (whole == null) throw new UnreadableBackendException("page " + id + " lies past the end of the db");
        return whole;
    }

    /** The root page of the bucket whose value (its header) is given: inline after the header, or on its own page. */
    private static ByteBuffer bucketRoot(FileChannel file, int pageSize, ByteBuffer value, Path db) throws IOException {
        if (value.remaining() < 16)
            throw new UnreadableBackendException(db + ": a bucket value of " + value.remaining() + " bytes");
        long root = value.getLong(value.position());
        if (root != 0) return page(file, pageSize, root);
        ByteBuffer inline =
                value.slice(value.position() + 16, value.remaining() - 16).order(ByteOrder.LITTLE_ENDIAN);
        return inline;
    }

    /** The value under key in the tree rooted at this page: a bucket's header (bucket = true) or a plain value. */
    private static Optional<ByteBuffer> lookup(
            FileChannel file, int pageSize, ByteBuffer page, byte[] key, boolean bucket, int depth, Path db)
            throws IOException {
        if (depth > MAX_DEPTH)
            throw new UnreadableBackendException(db + ": the tree is deeper than " + MAX_DEPTH + " pages");
        int flags = Short.toUnsignedInt(page.getShort(8));
        int count = Short.toUnsignedInt(page.getShort(10));
        if ((flags & BRANCH) != 0) {
            // the last element whose key is <= key (bbolt's own descent)
            int chosen = 0;
            for (int i = 0; i < count; i++) {
                int e = PAGE_HEADER + i * ELEMENT;
                byte[] k = bytes(page, e + page.getInt(e), page.getInt(e + 4));
                int c = Arrays.compareUnsigned(k, key);
                if (c <= 0) chosen = i;
                if (c >= 0) break;
            }
            int e = PAGE_HEADER + chosen * ELEMENT;
            return lookup(file, pageSize, page(file, pageSize, page.getLong(e + 8)), key, bucket, depth + 1, db);
        }
        if ((flags & LEAF) == 0)
            throw new UnreadableBackendException(db + ": page of flags " + flags + " where a tree page was expected");
        for (int i = 0; i < count; i++) {
            int e = PAGE_HEADER + i * ELEMENT;
            int elementFlags = page.getInt(e);
            int pos = page.getInt(e + 4);
            int ksize = page.getInt(e + 8);
            int vsize = page.getInt(e + 12);
            if (Arrays.equals(bytes(page, e + pos, ksize), key)) {
                if (((elementFlags & BUCKET_LEAF) != 0) != bucket) return Optional.empty();
                return Optional.of(page.slice(e + pos + ksize, vsize).order(ByteOrder.LITTLE_ENDIAN));
            }
        }
        return Optional.empty();
    }

    private static byte[] bytes(ByteBuffer page, int at, int length) throws UnreadableBackendException {
        if (at < 0 || length < 0 || at + length > page.limit()) {
            throw new UnreadableBackendException("an element points outside its page");
        }
        byte[] out = new byte[length];
        page.get(at, out);
        return out;
    }

    /** length bytes at offset, or null when the file ends first. */
    private static ByteBuffer readFully(FileChannel file, long offset, int length) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            if (file.read(b, offset + b.position()) < 0) return null;
        }
        return b.flip();
    }
}
