package dev.etcdmigrate.ondisk;

import static dev.etcdmigrate.ondisk.BboltPages.BRANCH;
import static dev.etcdmigrate.ondisk.BboltPages.BUCKET_LEAF;
import static dev.etcdmigrate.ondisk.BboltPages.ELEMENT;
import static dev.etcdmigrate.ondisk.BboltPages.FREELIST;
import static dev.etcdmigrate.ondisk.BboltPages.LEAF;
import static dev.etcdmigrate.ondisk.BboltPages.PAGE_HEADER;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
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
 * {@link BackendStorageVersion#lockHolder}). The pages are read and checked by {@link BboltPages}; this class
 * walks the trees over them (lookups, bucket walks, the size in use, the whole tree's check).
 *
 * <p>bbolt's layout (go.etcd.io/bbolt, little-endian on the platforms etcd ships for): a page starts with
 * {id u64, flags u16, count u16, overflow u32}; pages 0 and 1 are meta pages {magic u32, version u32,
 * pageSize u32, flags u32, root bucket {root u64, sequence u64}, freelist u64, pgid u64, txid u64, checksum
 * u64}, the valid one with the higher txid is current; branch elements are {pos u32, ksize u32, pgid u64},
 * leaf elements {flags u32, pos u32, ksize u32, vsize u32}, pos counted from the element; a bucket's value
 * is {root u64, sequence u64}, followed by its page when root is 0 (an inline bucket).
 */
public final class BboltFile implements Closeable {

    private final BboltPages pages;

    /** A key and its value in a bucket (copies). */
    public record Entry(byte[] key, byte[] value) {}

    /** Visits the plain entries of a bucket until the visitor returns false. */
    public interface Visitor {
        boolean visit(ByteBuffer key, ByteBuffer value) throws IOException;
    }

    /** The db's size and the bytes its pages in use take (see {@link #size}). */
    public record Size(long bytes, OptionalLong inUse) {}

    private BboltFile(BboltPages pages) {
        this.pages = pages;
    }

    /** Opens the db and reads its meta pages; damage there (no valid meta page) is a {@link DamagedFileException}. */
    public static BboltFile open(Path db) throws IOException {
        return new BboltFile(BboltPages.open(db));
    }

    @Override
    public void close() throws IOException {
        pages.close();
    }

    public Path path() {
        return pages.path();
    }

    private DamagedFileException damage(String where, String expected) {
        return pages.damage(where, expected);
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
        long freelist = pages.meta.freelist();
        if (freelist == -1L || freelist <= 1) return new Size(pages.fileSize, reachable());
        ByteBuffer list = pages.page(freelist, "the freelist");
        if ((Short.toUnsignedInt(list.getShort(8)) & FREELIST) == 0) return new Size(pages.fileSize, reachable());
        long free = Short.toUnsignedInt(list.getShort(10));
        if (free == 0xFFFF) free = list.getLong(PAGE_HEADER); // the real count sits in the first element
        if (free < 0 || free > pages.meta.highWater())
            throw damage(
                    "freelist page " + freelist, "at most " + pages.meta.highWater() + " free pages, found " + free);
        long used = Math.min(pages.fileSize, Math.max(0, pages.meta.highWater() - free) * pages.meta.pageSize());
        return new Size(pages.fileSize, OptionalLong.of(used));
    }

    /**
     * Every page of the db checked as bbolt's own check and etcd's reads meet it ({@link BboltCheck}): each page
     * reached once from the root, below the high water mark, of its type, its elements inside it and its keys in
     * order, the buckets and the freelist. What does not hold is a {@link DamagedFileException} naming the page.
     * Values are not checked here (bbolt keeps no checksum of them).
     */
    public void checkPages() throws IOException {
        pages.checkAll();
    }

    /**
     * Without a freelist on disk (bbolt's NoFreelistSync, etcd's default since 3.4): the bytes of the pages
     * reachable from the root (the two meta pages, every tree page with its overflow). Top-level leaves are
     * read whole to find the buckets; a bucket's own pages only by their headers (etcd nests no buckets).
     */
    private OptionalLong reachable() throws IOException {
        long[] counted = {2};
        countTree(pages.meta.root(), true, counted, 0, new HashSet<>());
        return OptionalLong.of(Math.min(pages.fileSize, counted[0] * pages.meta.pageSize()));
    }

    private void countTree(long id, boolean rootTree, long[] counted, int depth, Set<Long> seen) throws IOException {
        pages.checkDepth(depth, id);
        if (!seen.add(id)) throw damage("page " + id, "a tree in which each page is reached once; reached twice");
        ByteBuffer header = pages.header(id, "a tree page");
        int flags = Short.toUnsignedInt(header.getShort(8));
        counted[0] += 1 + Integer.toUnsignedLong(header.getInt(12));
        if ((flags & BRANCH) != 0) {
            ByteBuffer page = pages.page(id, "a branch page");
            int count = pages.count(page, id);
            for (int i = 0; i < count; i++) {
                countTree(page.getLong(PAGE_HEADER + i * ELEMENT + 8), rootTree, counted, depth + 1, seen);
            }
        } else if ((flags & LEAF) != 0 && rootTree) {
            ByteBuffer page = pages.page(id, "a leaf page");
            int count = pages.count(page, id);
            for (int i = 0; i < count; i++) {
                int e = PAGE_HEADER + i * ELEMENT;
                if ((page.getInt(e) & BUCKET_LEAF) == 0) continue;
                ByteBuffer value = pages.leafValue(page, e, "page " + id);
                if (value.remaining() < 16)
                    throw damage("page " + id, "a bucket header of 16 bytes, found " + value.remaining());
                long bucketRoot = value.getLong(value.position());
                if (bucketRoot != 0) countTree(bucketRoot, false, counted, depth + 1, seen); // 0: inline in this leaf
            }
        } else if ((flags & (BRANCH | LEAF)) == 0) {
            throw damage("page " + id, "a branch or leaf page, found flags 0x" + Integer.toHexString(flags));
        }
    }

    private boolean walkTree(ByteBuffer page, Visitor visitor, int depth, Set<Long> seen) throws IOException {
        String where = BboltPages.where(page);
        pages.checkDepth(depth, -1);
        int flags = Short.toUnsignedInt(page.getShort(8));
        int count = pages.count(page, -1);
        if ((flags & BRANCH) != 0) {
            for (int i = 0; i < count; i++) {
                long child = page.getLong(PAGE_HEADER + i * ELEMENT + 8);
                if (!seen.add(child))
                    throw damage("page " + child, "a tree in which each page is reached once; reached twice");
                if (!walkTree(pages.page(child, "a tree page"), visitor, depth + 1, seen)) return false;
            }
            return true;
        }
        if ((flags & LEAF) == 0)
            throw damage(where, "a branch or leaf page, found flags 0x" + Integer.toHexString(flags));
        for (int i = 0; i < count; i++) {
            int e = PAGE_HEADER + i * ELEMENT;
            if ((page.getInt(e) & BUCKET_LEAF) != 0) continue; // a nested bucket: etcd keeps none
            ByteBuffer key = pages.leafKey(page, e, where);
            ByteBuffer value = pages.leafValue(page, e, where);
            if (!visitor.visit(key, value)) return false;
        }
        return true;
    }

    /** The value under key in the tree rooted at this page: a bucket's header (bucket = true) or a plain value. */
    private Optional<ByteBuffer> lookup(ByteBuffer page, byte[] key, boolean bucket, int depth) throws IOException {
        String where = BboltPages.where(page);
        pages.checkDepth(depth, -1);
        int flags = Short.toUnsignedInt(page.getShort(8));
        int count = pages.count(page, -1);
        if ((flags & BRANCH) != 0) {
            if (count == 0) throw damage(where, "a branch page with at least one element, found none");
            // the last element whose key is <= key (bbolt's own descent)
            int chosen = 0;
            for (int i = 0; i < count; i++) {
                int e = PAGE_HEADER + i * ELEMENT;
                byte[] k =
                        pages.bytes(page, (long) e + Integer.toUnsignedLong(page.getInt(e)), page.getInt(e + 4), where);
                int c = Arrays.compareUnsigned(k, key);
                if (c <= 0) chosen = i;
                if (c >= 0) break;
            }
            long child = page.getLong(PAGE_HEADER + chosen * ELEMENT + 8);
            return lookup(pages.page(child, "a tree page"), key, bucket, depth + 1);
        }
        if ((flags & LEAF) == 0)
            throw damage(where, "a branch or leaf page, found flags 0x" + Integer.toHexString(flags));
        for (int i = 0; i < count; i++) {
            int e = PAGE_HEADER + i * ELEMENT;
            ByteBuffer k = pages.leafKey(page, e, where);
            if (k.equals(ByteBuffer.wrap(key))) {
                if (((page.getInt(e) & BUCKET_LEAF) != 0) != bucket) return Optional.empty();
                return Optional.of(pages.leafValue(page, e, where));
            }
        }
        return Optional.empty();
    }

    /** The root page of the bucket whose value (its header) is given: inline after the header, or on its own page. */
    private ByteBuffer bucketRoot(ByteBuffer value) throws IOException {
        if (value.remaining() < 16) throw damage("a bucket header", "16 bytes or more, found " + value.remaining());
        long root = value.getLong(value.position());
        if (root != 0) return pages.page(root, "a bucket's root page");
        ByteBuffer inline =
                value.slice(value.position() + 16, value.remaining() - 16).order(ByteOrder.LITTLE_ENDIAN);
        if (inline.limit() < PAGE_HEADER)
            throw damage("an inline bucket", "a page header of 16 bytes, found " + inline.limit());
        return inline;
    }

    private ByteBuffer rootPage() throws IOException {
        return pages.page(pages.meta.root(), "the root bucket's page");
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
