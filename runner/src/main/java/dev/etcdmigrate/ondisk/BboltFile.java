package dev.etcdmigrate.ondisk;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * etcd's v3 backend (member/snap/db), a bbolt file, read offline: opened once, its current meta page read
 * once, then only the pages a question needs (a path from the root to a key: a few KiB whatever the db's
 * size). {@code etcdutl snapshot status} answers the same questions but hashes every page first.
 *
 * <p>Read-only and lock-free: it does not wait on bbolt's flock (whether an etcd holds the file is
 * {@link BackendStorageVersion#lockHolder}). Every page id, count, offset and length read from the file is
 * checked before use; what does not hold is a {@link DamagedFileException} naming the page and what was
 * expected, the way bbolt itself would find it ("page N identifies as M", an element outside its page).
 *
 * <p>bbolt's layout (go.etcd.io/bbolt, little-endian on the platforms etcd ships for): a page starts with
 * {id u64, flags u16, count u16, overflow u32}; pages 0 and 1 are meta pages {magic u32, version u32,
 * pageSize u32, flags u32, root bucket {root u64, sequence u64}, freelist u64, pgid u64, txid u64, checksum
 * u64}, the valid one with the higher txid is current; branch elements are {pos u32, ksize u32, pgid u64},
 * leaf elements {flags u32, pos u32, ksize u32, vsize u32}, pos counted from the element; a bucket's value
 * is {root u64, sequence u64}, followed by its page when root is 0 (an inline bucket).
 */
public final class BboltFile implements Closeable {

    private static final int MAGIC = 0xED0CDAED;
    private static final int PAGE_HEADER = 16;
    private static final int ELEMENT = 16;
    private static final int BRANCH = 0x01;
    private static final int LEAF = 0x02;
    private static final int FREELIST = 0x10;
    private static final int BUCKET_LEAF = 0x01;
    private static final int MAX_DEPTH = 64;
    /** A single page with its overflow read whole: bounded (etcd's values are at most a few MiB). */
    private static final long MAX_PAGE_BYTES = 64L << 20;

    private final Path path;
    private final FileChannel file;
    private final long fileSize;
    private final Meta meta;

    /** A key and its value in a bucket (copies). */
    public record Entry(byte[] key, byte[] value) {}

    /** Visits the plain entries of a bucket until the visitor returns false. */
    public interface Visitor {
        boolean visit(ByteBuffer key, ByteBuffer value) throws IOException;
    }

    /** The db's size and the bytes its pages in use take (see {@link #size}). */
    public record Size(long bytes, OptionalLong inUse) {}

    private record Meta(int pageSize, long root, long freelist, long highWater, long txid) {}

    private BboltFile(Path path, FileChannel file) throws IOException {
        this.path = path;
        this.file = file;
        this.fileSize = file.size();
        this.meta = currentMeta();
    }

    /** Opens the db and reads its meta pages; damage there (no valid meta page) is a {@link DamagedFileException}. */
    public static BboltFile open(Path db) throws IOException {
        FileChannel channel = FileChannel.open(db, StandardOpenOption.READ);
        try {
            return new BboltFile(db, channel);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        file.close();
    }

    public Path path() {
        return path;
    }

    private DamagedFileException damage(String where, String expected) {
        return new DamagedFileException(new Damage(path, where, expected));
    }

    /** The storage version 3.6+ records (bucket meta, key storageVersion), e.g. "3.6.0"; empty before 3.6. */
    public Optional<String> storageVersion() throws IOException {
        return value("meta", "storageVersion").map(v -> new String(v, StandardCharsets.UTF_8));
    }

    /** One plain value of a top-level bucket, or empty when the bucket or key is missing (or the key names a bucket). */
    public Optional<byte[]> value(String bucket, String key) throws IOException {
        Optional<ByteBuffer> header = lookup(rootPage(), ascii(bucket), true, 0);
        if (header.isEmpty()) return Optional.empty();
        return lookup(bucketRoot(header.get()), ascii(key), false, 0).map(BboltFile::copy);
    }

    /** Whether a top-level bucket exists. */
    public boolean hasBucket(String bucket) throws IOException {
        return lookup(rootPage(), ascii(bucket), true, 0).isPresent();
    }

    /** The plain entries of a top-level bucket in key order, at most {@code limit}; empty when the bucket is missing. */
    public List<Entry> entries(String bucket, int limit) throws IOException {
        List<Entry> out = new ArrayList<>();
        walk(bucket, (k, v) -> {
            if (out.size() >= limit) return false;
            out.add(new Entry(copy(k), copy(v)));
            return true;
        });
        return out;
    }

    /** Visits the plain entries of a top-level bucket in key order until the visitor returns false. */
    public void walk(String bucket, Visitor visitor) throws IOException {
        Optional<ByteBuffer> header = lookup(rootPage(), ascii(bucket), true, 0);
        if (header.isEmpty()) return;
        walkTree(bucketRoot(header.get()), visitor, 0, new HashSet<>());
    }

    /**
     * The db's size and the bytes its pages in use take: size less the free pages bbolt's freelist lists, as
     * etcd's dbSizeInUse reports, or where the freelist is not on disk (NoFreelistSync) the pages reachable
     * from the root.
     */
    public Size size() throws IOException {
        long freelist = meta.freelist();
        if (freelist == -1L || freelist <= 1) return new Size(fileSize, reachable());
        ByteBuffer list = page(freelist, "the freelist");
        if ((Short.toUnsignedInt(list.getShort(8)) & FREELIST) == 0) return new Size(fileSize, reachable());
        long free = Short.toUnsignedInt(list.getShort(10));
        if (free == 0xFFFF) free = list.getLong(PAGE_HEADER); // the real count sits in the first element
        if (free < 0 || free > meta.highWater())
            throw damage("freelist page " + freelist, "at most " + meta.highWater() + " free pages, found " + free);
        long used = Math.min(fileSize, Math.max(0, meta.highWater() - free) * meta.pageSize());
        return new Size(fileSize, OptionalLong.of(used));
    }

    /**
     * Every page reachable from the root read as far as it says what it is (the header of each tree page and its
     * overflow count, branch pages and the root tree's leaves whole): a page that identifies as another, a cycle,
     * an element or overflow outside the file is a {@link DamagedFileException}. Values are not checked (bbolt
     * keeps no checksum of them). One small read per page: what a start whose etcd will read the whole db pays.
     */
    public void checkPages() throws IOException {
        reachable();
    }

    /**
     * Without a freelist on disk (bbolt's NoFreelistSync, etcd's default since 3.4): the bytes of the pages
     * reachable from the root (the two meta pages, every tree page with its overflow). Top-level leaves are
     * read whole to find the buckets; a bucket's own pages only by their headers (etcd nests no buckets).
     */
    private OptionalLong reachable() throws IOException {
        long[] pages = {2};
        countTree(meta.root(), true, pages, 0, new HashSet<>());
        return OptionalLong.of(Math.min(fileSize, pages[0] * meta.pageSize()));
    }

    private void countTree(long id, boolean rootTree, long[] pages, int depth, Set<Long> seen) throws IOException {
        checkDepth(depth, id);
        if (!seen.add(id)) throw damage("page " + id, "a tree in which each page is reached once; reached twice");
        ByteBuffer header = header(id, "a tree page");
        int flags = Short.toUnsignedInt(header.getShort(8));
        pages[0] += 1 + Integer.toUnsignedLong(header.getInt(12));
        if ((flags & BRANCH) != 0) {
            ByteBuffer page = page(id, "a branch page");
            int count = count(page, id);
            for (int i = 0; i < count; i++) {
                countTree(page.getLong(PAGE_HEADER + i * ELEMENT + 8), rootTree, pages, depth + 1, seen);
            }
        } else if ((flags & LEAF) != 0 && rootTree) {
            ByteBuffer page = page(id, "a leaf page");
            int count = count(page, id);
            for (int i = 0; i < count; i++) {
                int e = PAGE_HEADER + i * ELEMENT;
                if ((page.getInt(e) & BUCKET_LEAF) == 0) continue;
                ByteBuffer value = leafValue(page, e, "page " + id);
                if (value.remaining() < 16)
                    throw damage("page " + id, "a bucket header of 16 bytes, found " + value.remaining());
                long bucketRoot = value.getLong(value.position());
                if (bucketRoot != 0) countTree(bucketRoot, false, pages, depth + 1, seen); // 0: inline in this leaf
            }
        } else if ((flags & (BRANCH | LEAF)) == 0) {
            throw damage("page " + id, "a branch or leaf page, found flags 0x" + Integer.toHexString(flags));
        }
    }

    private boolean walkTree(ByteBuffer page, Visitor visitor, int depth, Set<Long> seen) throws IOException {
        String where = where(page);
        checkDepth(depth, -1);
        int flags = Short.toUnsignedInt(page.getShort(8));
        int count = count(page, -1);
        if ((flags & BRANCH) != 0) {
            for (int i = 0; i < count; i++) {
                long child = page.getLong(PAGE_HEADER + i * ELEMENT + 8);
                if (!seen.add(child))
                    throw damage("page " + child, "a tree in which each page is reached once; reached twice");
                if (!walkTree(page(child, "a tree page"), visitor, depth + 1, seen)) return false;
            }
            return true;
        }
        if ((flags & LEAF) == 0)
            throw damage(where, "a branch or leaf page, found flags 0x" + Integer.toHexString(flags));
        for (int i = 0; i < count; i++) {
            int e = PAGE_HEADER + i * ELEMENT;
            if ((page.getInt(e) & BUCKET_LEAF) != 0) continue; // a nested bucket: etcd keeps none
            ByteBuffer key = leafKey(page, e, where);
            ByteBuffer value = leafValue(page, e, where);
            if (!visitor.visit(key, value)) return false;
        }
        return true;
    }

    /** The value under key in the tree rooted at this page: a bucket's header (bucket = true) or a plain value. */
    private Optional<ByteBuffer> lookup(ByteBuffer page, byte[] key, boolean bucket, int depth) throws IOException {
        String where = where(page);
        checkDepth(depth, -1);
        int flags = Short.toUnsignedInt(page.getShort(8));
        int count = count(page, -1);
        if ((flags & BRANCH) != 0) {
            if (count == 0) throw damage(where, "a branch page with at least one element, found none");
            // the last element whose key is <= key (bbolt's own descent)
            int chosen = 0;
            for (int i = 0; i < count; i++) {
                int e = PAGE_HEADER + i * ELEMENT;
                byte[] k = bytes(page, (long) e + Integer.toUnsignedLong(page.getInt(e)), page.getInt(e + 4), where);
                int c = Arrays.compareUnsigned(k, key);
                if (c <= 0) chosen = i;
                if (c >= 0) break;
            }
            long child = page.getLong(PAGE_HEADER + chosen * ELEMENT + 8);
            return lookup(page(child, "a tree page"), key, bucket, depth + 1);
        }
        if ((flags & LEAF) == 0)
            throw damage(where, "a branch or leaf page, found flags 0x" + Integer.toHexString(flags));
        for (int i = 0; i < count; i++) {
            int e = PAGE_HEADER + i * ELEMENT;
            ByteBuffer k = leafKey(page, e, where);
            if (k.equals(ByteBuffer.wrap(key))) {
                if (((page.getInt(e) & BUCKET_LEAF) != 0) != bucket) return Optional.empty();
                return Optional.of(leafValue(page, e, where));
            }
        }
        return Optional.empty();
    }

    /** The root page of the bucket whose value (its header) is given: inline after the header, or on its own page. */
    private ByteBuffer bucketRoot(ByteBuffer value) throws IOException {
        if (value.remaining() < 16) throw damage("a bucket header", "16 bytes or more, found " + value.remaining());
        long root = value.getLong(value.position());
        if (root != 0) return page(root, "a bucket's root page");
        ByteBuffer inline =
                value.slice(value.position() + 16, value.remaining() - 16).order(ByteOrder.LITTLE_ENDIAN);
        if (inline.limit() < PAGE_HEADER)
            throw damage("an inline bucket", "a page header of 16 bytes, found " + inline.limit());
        return inline;
    }

    private ByteBuffer rootPage() throws IOException {
        return page(meta.root(), "the root bucket's page");
    }

    /** The element count, checked against the page's bytes. */
    private int count(ByteBuffer page, long id) throws DamagedFileException {
        int count = Short.toUnsignedInt(page.getShort(10));
        if ((long) PAGE_HEADER + (long) count * ELEMENT > page.limit())
            throw damage(
                    id >= 0 ? "page " + id : where(page),
                    "at most " + (page.limit() - PAGE_HEADER) / ELEMENT + " elements, found a count of " + count);
        return count;
    }

    private ByteBuffer leafKey(ByteBuffer page, int e, String where) throws DamagedFileException {
        long at = e + Integer.toUnsignedLong(page.getInt(e + 4));
        long ksize = Integer.toUnsignedLong(page.getInt(e + 8));
        checkRange(page, at, ksize, where);
        return page.slice((int) at, (int) ksize).order(ByteOrder.LITTLE_ENDIAN);
    }

    private ByteBuffer leafValue(ByteBuffer page, int e, String where) throws DamagedFileException {
        long at = e + Integer.toUnsignedLong(page.getInt(e + 4)) + Integer.toUnsignedLong(page.getInt(e + 8));
        long vsize = Integer.toUnsignedLong(page.getInt(e + 12));
        checkRange(page, at, vsize, where);
        return page.slice((int) at, (int) vsize).order(ByteOrder.LITTLE_ENDIAN);
    }

    private byte[] bytes(ByteBuffer page, long at, int length, String where) throws DamagedFileException {
        checkRange(page, at, Integer.toUnsignedLong(length), where);
        byte[] out = new byte[length];
        page.get((int) at, out);
        return out;
    }

    private void checkRange(ByteBuffer page, long at, long length, String where) throws DamagedFileException {
        if (at < PAGE_HEADER || at + length > page.limit())
            throw damage(
                    where,
                    "an element within the page's " + page.limit() + " bytes, found one at [" + at + ", "
                            + (at + length) + ")");
    }

    private void checkDepth(int depth, long id) throws DamagedFileException {
        if (depth > MAX_DEPTH)
            throw damage(id >= 0 ? "page " + id : "the tree", "a tree at most " + MAX_DEPTH + " pages deep");
    }

    /** "page N" for a page read from the file (its header's id was checked), "an inline bucket" otherwise. */
    private static String where(ByteBuffer page) {
        return page.capacity() == page.limit() && page.arrayOffset() == 0 && page.hasArray()
                ? "page " + page.getLong(0)
                : "an inline bucket";
    }

    /** A page's header, checked: inside the file, not a meta page, and identifying as itself (bbolt's own assertion). */
    private ByteBuffer header(long id, String what) throws IOException {
        long pages = fileSize / meta.pageSize();
        if (id < 2 || id >= pages)
            throw damage(what, "a page id in [2, " + pages + ") (the file's pages), found " + id);
        ByteBuffer header = readFully(id * meta.pageSize(), PAGE_HEADER);
        long self = header.getLong(0);
        if (self != id) throw damage("page " + id, "a page that identifies as " + id + ", found " + self);
        return header;
    }

    /** A whole page (with its overflow pages), little-endian, position 0 at its header. */
    private ByteBuffer page(long id, String what) throws IOException {
        ByteBuffer header = header(id, what);
        long overflow = Integer.toUnsignedLong(header.getInt(12));
        long size = (overflow + 1) * meta.pageSize();
        if (size > MAX_PAGE_BYTES || id * meta.pageSize() + size > fileSize)
            throw damage(
                    "page " + id,
                    "overflow pages within the file's " + fileSize + " bytes, found " + overflow + " of them");
        return readFully(id * meta.pageSize(), (int) size);
    }

    private Meta currentMeta() throws IOException {
        Meta first = metaAt(0);
        int pageSize = first != null ? first.pageSize() : 4096; // a torn meta 0: bbolt tries the OS page size too
        Meta second = metaAt(pageSize);
        Meta best = null;
        for (Meta m : new Meta[] {first, second}) {
            if (m != null && (best == null || m.txid() > best.txid())) best = m;
        }
        if (best == null)
            throw damage(
                    "meta pages 0 and 1",
                    fileSize < 2L * 512
                            ? "a bbolt file of two meta pages at least, found " + fileSize + " bytes"
                            : "a valid bbolt meta page (magic, version 2, checksum): neither is (etcd says \"invalid database\")");
        return best;
    }

    /** The meta page at this offset if its magic, version, checksum and page size hold. */
    private Meta metaAt(long offset) throws IOException {
        if (offset + 80 > fileSize) return null;
        ByteBuffer b = readFully(offset, 80);
        if (b.getInt(16) != MAGIC || b.getInt(20) != 2) return null;
        if (fnv1a64(b, 16, 72) != b.getLong(72)) return null;
        int pageSize = b.getInt(24);
        if (pageSize < 512 || pageSize > (1 << 20) || Integer.bitCount(pageSize) != 1) return null;
        return new Meta(pageSize, b.getLong(32), b.getLong(48), b.getLong(56), b.getLong(64));
    }

    private static long fnv1a64(ByteBuffer b, int from, int to) {
        long hash = 0xcbf29ce484222325L;
        for (int i = from; i < to; i++) {
            hash ^= b.get(i) & 0xff;
            hash *= 0x100000001b3L;
        }
        return hash;
    }

    /** length bytes at offset; the callers checked that they lie inside the file (it may shrink meanwhile: damage then). */
    private ByteBuffer readFully(long offset, int length) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            if (file.read(b, offset + b.position()) < 0)
                throw damage("offset " + offset, length + " bytes before the end of the file, found " + b.position());
        }
        return b.flip();
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] copy(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.get(b.position(), out);
        return out;
    }
}
