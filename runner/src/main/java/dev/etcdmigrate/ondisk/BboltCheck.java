package dev.etcdmigrate.ondisk;

import static dev.etcdmigrate.ondisk.BboltPages.BRANCH;
import static dev.etcdmigrate.ondisk.BboltPages.BUCKET_LEAF;
import static dev.etcdmigrate.ondisk.BboltPages.ELEMENT;
import static dev.etcdmigrate.ondisk.BboltPages.FREELIST;
import static dev.etcdmigrate.ondisk.BboltPages.LEAF;
import static dev.etcdmigrate.ondisk.BboltPages.PAGE_HEADER;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.util.BitSet;
import java.util.HexFormat;

/**
 * Every page of a bbolt file checked the way bbolt's own check ({@code tx_check.go}, and the walk etcd's bbolt makes
 * when it collects the free pages of a db without a freelist on disk) and etcd's reads would meet it, so that what
 * they reject is refused before any etcd runs:
 *
 * <ul>
 *   <li>each page reached from the root, once (bbolt: "multiple references"), below the high water mark ("out of
 *       bounds") and inside the file, identifying as itself, a branch or a leaf page exactly ("invalid type");
 *   <li>each element, key and value inside its page (bbolt reads them unchecked: etcd dies of a fault);
 *   <li>keys ascending in every leaf and branch page, and each child's keys between its branch key and the next
 *       (bbolt: "needs to be > than previous element", "needs to be < than key of the next element");
 *   <li>buckets: a bucket header of 16 bytes, an inline bucket a leaf page inside its value, no bucket below a
 *       top-level bucket (etcd nests none, so a flag set there is damage);
 *   <li>the freelist, where it is on disk: a freelist page, its ids inside the file's pages and listed once
 *       ("already freed"), none reachable ("reachable freed"), and every page below the high water mark either
 *       reachable or free ("unreachable unfreed").
 * </ul>
 *
 * The file is mapped, not copied: one pass over the pages in use, each touched once.
 */
final class BboltCheck {

    private static final ValueLayout.OfLong U64 = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int MAX_DEPTH = 64;
    private static final int KEY_SHOWN = 16;

    private final BboltPages pages;
    private final MemorySegment file;
    private final int pageSize;
    private final long highWater;
    private final long filePages;
    private final BitSet reachable = new BitSet();
    private final BitSet freed = new BitSet();

    private BboltCheck(BboltPages pages, MemorySegment file) {
        this.pages = pages;
        this.file = file;
        this.pageSize = pages.meta.pageSize();
        this.highWater = pages.meta.highWater();
        this.filePages = file.byteSize() / pageSize;
    }

    /** Checks every page of the db's current tree and its freelist; the first damage found is thrown. */
    static void run(BboltPages pages, FileChannel channel) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment file = channel.map(FileChannel.MapMode.READ_ONLY, 0, pages.fileSize, arena);
            new BboltCheck(pages, file).check();
        }
    }

    private void check() throws IOException {
        if (highWater < 2 || highWater > Integer.MAX_VALUE)
            throw damage("meta page", "a high water mark of 2 pages or more, found " + highWater);
        reachable.set(0, 2);
        long freelist = pages.meta.freelist();
        if (freelist != -1L) readFreelist(freelist);
        tree(pages.meta.root(), null, null, 0, true, "the root bucket");
        if (freelist != -1L) {
            for (long id = 2; id < highWater; id++) {
                if (!reachable.get((int) id) && !freed.get((int) id))
                    throw damage(
                            "page " + id,
                            "a page either in use or on the freelist (bbolt's check: \"unreachable unfreed\"),"
                                    + " found neither");
            }
        }
    }

    private void readFreelist(long id) throws IOException {
        MemorySegment page = page(id, "the freelist");
        int flags = flags(page);
        if (flags != FREELIST)
            throw damage("page " + id, "the freelist page (flags 0x10), found flags 0x" + Integer.toHexString(flags));
        mark(id, page, "the freelist");
        long count = Short.toUnsignedInt(page.get(U16, 10));
        long at = PAGE_HEADER;
        if (count == 0xFFFF) {
            count = page.get(U64, PAGE_HEADER);
            at += 8;
        }
        if (count < 0 || at + count * 8 > page.byteSize())
            throw damage("page " + id, "a freelist within its page, found a count of " + count);
        for (long i = 0; i < count; i++) {
            long free = page.get(U64, at + i * 8);
            if (free < 2 || free >= highWater)
                throw damage(
                        "page " + id, "free page ids in [2, " + highWater + ") (the high water mark), found " + free);
            if (freed.get((int) free))
                throw damage("page " + id, "each free page listed once (bbolt: \"already freed\"); " + free + " twice");
            freed.set((int) free);
        }
    }

    /**
     * Checks the subtree rooted at page {@code id}, whose keys must lie in [{@code min}, {@code max}) (null: open),
     * and returns its greatest key (bbolt's recursivelyCheckPageKeyOrderInternal).
     */
    private MemorySegment tree(
            long id, MemorySegment min, MemorySegment max, int depth, boolean rootBucket, String what)
            throws IOException {
        if (depth > MAX_DEPTH) throw damage("page " + id, "a tree at most " + MAX_DEPTH + " pages deep");
        MemorySegment page = page(id, what);
        int flags = flags(page);
        if (flags != BRANCH && flags != LEAF)
            throw damage(
                    "page " + id,
                    "a branch or leaf page (bbolt's check: \"invalid type\"), found flags 0x"
                            + Integer.toHexString(flags));
        mark(id, page, what);
        String where = "page " + id;
        int count = count(page, where);
        if (flags == LEAF) return leaf(page, where, min, max, rootBucket, depth);
        if (count == 0) throw damage(where, "a branch page with at least one element, found none");
        MemorySegment running = min;
        MemorySegment greatest = null;
        for (int i = 0; i < count; i++) {
            long e = PAGE_HEADER + (long) i * ELEMENT;
            MemorySegment key = slice(page, e + Integer.toUnsignedLong(page.get(U32, e)), page.get(U32, e + 4), where);
            order(where, "branch", i, key, running, max);
            MemorySegment next = max;
            if (i + 1 < count) {
                long n = PAGE_HEADER + (long) (i + 1) * ELEMENT;
                next = slice(page, n + Integer.toUnsignedLong(page.get(U32, n)), page.get(U32, n + 4), where);
            }
            long child = page.get(U64, e + 8);
            greatest = tree(child, key, next, depth + 1, rootBucket, "a child of page " + id);
            running = greatest;
        }
        return greatest;
    }

    /** A leaf's elements inside it, its keys in order and in range, its buckets checked; returns its last key. */
    private MemorySegment leaf(
            MemorySegment page, String where, MemorySegment min, MemorySegment max, boolean rootBucket, int depth)
            throws IOException {
        int count = count(page, where);
        MemorySegment running = min;
        for (int i = 0; i < count; i++) {
            long e = PAGE_HEADER + (long) i * ELEMENT;
            int flags = page.get(U32, e);
            long pos = e + Integer.toUnsignedLong(page.get(U32, e + 4));
            MemorySegment key = slice(page, pos, page.get(U32, e + 8), where);
            MemorySegment value = slice(page, pos + key.byteSize(), page.get(U32, e + 12), where);
            order(where, "leaf", i, key, running, max);
            running = key;
            if ((flags & BUCKET_LEAF) == 0) continue;
            String bucket = "bucket " + shown(key);
            if (!rootBucket)
                throw damage(where, "no bucket below a top-level bucket (etcd nests none), found " + bucket);
            if (value.byteSize() < 16)
                throw damage(where, "a bucket header of 16 bytes for " + bucket + ", found " + value.byteSize());
            long root = value.get(U64, 0);
            if (root != 0) {
                tree(root, null, null, depth + 1, false, "the root of " + bucket);
                continue;
            }
            MemorySegment inline = value.asSlice(16);
            String at = where + ", " + bucket + "'s inline page";
            if (inline.byteSize() < PAGE_HEADER)
                throw damage(at, "a page header of 16 bytes, found " + inline.byteSize());
            if (flags(inline) != LEAF)
                throw damage(at, "a leaf page, found flags 0x" + Integer.toHexString(flags(inline)));
            leaf(inline, at, null, null, false, depth + 1);
        }
        return count > 0 ? running : null;
    }

    /** bbolt's verifyKeyOrder: the first key at or above the ancestor's, each next one above it, all below max. */
    private void order(String where, String kind, int i, MemorySegment key, MemorySegment previous, MemorySegment max)
            throws DamagedFileException {
        if (previous != null) {
            int c = compare(previous, key);
            if (i == 0 && c > 0)
                throw damage(
                        where,
                        "its first key at or above its parent's (bbolt's check), found " + shown(key) + " below "
                                + shown(previous));
            if (i > 0 && c >= 0)
                throw damage(
                        where,
                        "keys in ascending order (bbolt's check): " + kind + " element " + i + "'s key " + shown(key)
                                + (c == 0 ? " equals" : " is below") + " the previous " + shown(previous));
        }
        if (max != null && compare(key, max) >= 0)
            throw damage(
                    where,
                    "keys below the next key of its parent (bbolt's check): " + kind + " element " + i + "'s key "
                            + shown(key) + " is not below " + shown(max));
    }

    /** The page at id with its overflow, its header checked: inside the file, below the high water mark, itself. */
    private MemorySegment page(long id, String what) throws DamagedFileException {
        long limit = Math.min(highWater, filePages);
        if (id < 2 || id >= limit)
            throw damage(
                    what,
                    "a page id in [2, " + limit + ") ("
                            + (limit == highWater ? "the high water mark" : "the file's pages") + "), found " + id);
        long offset = id * pageSize;
        long self = file.get(U64, offset);
        if (self != id) throw damage("page " + id, "a page that identifies as " + id + ", found " + self);
        long overflow = Integer.toUnsignedLong(file.get(U32, offset + 12));
        if (id + overflow >= limit)
            throw damage("page " + id, "overflow pages below page " + limit + ", found " + overflow + " of them");
        return file.asSlice(offset, (overflow + 1) * pageSize);
    }

    /** bbolt's "multiple references" and "reachable freed": each page and its overflow reached once, none free. */
    private void mark(long id, MemorySegment page, String what) throws DamagedFileException {
        long pagesOf = page.byteSize() / pageSize;
        if (freed.get((int) id))
            throw damage("page " + id, "a page in use off the freelist (bbolt: \"reachable freed\"): " + what);
        for (long i = 0; i < pagesOf; i++) {
            int p = (int) (id + i);
            if (reachable.get(p))
                throw damage(
                        "page " + p,
                        "a page reached once (bbolt's check: \"multiple references\"), reached again as " + what);
            reachable.set(p);
        }
    }

    private int count(MemorySegment page, String where) throws DamagedFileException {
        int count = Short.toUnsignedInt(page.get(U16, 10));
        if ((long) PAGE_HEADER + (long) count * ELEMENT > page.byteSize())
            throw damage(
                    where,
                    "at most " + (page.byteSize() - PAGE_HEADER) / ELEMENT + " elements, found a count of " + count);
        return count;
    }

    private static int flags(MemorySegment page) {
        return Short.toUnsignedInt(page.get(U16, 8));
    }

    private MemorySegment slice(MemorySegment page, long at, int length, String where) throws DamagedFileException {
        long size = Integer.toUnsignedLong(length);
        if (at < PAGE_HEADER || at + size > page.byteSize())
            throw damage(
                    where,
                    "an element within the page's " + page.byteSize() + " bytes, found one at [" + at + ", "
                            + (at + size) + ")");
        return page.asSlice(at, size);
    }

    /** Unsigned lexicographic order, as bbolt's bytes.Compare. */
    private static int compare(MemorySegment a, MemorySegment b) {
        long at = a.mismatch(b);
        if (at < 0) return 0;
        if (at == a.byteSize()) return -1;
        if (at == b.byteSize()) return 1;
        return Integer.compare(
                Byte.toUnsignedInt(a.get(ValueLayout.JAVA_BYTE, at)),
                Byte.toUnsignedInt(b.get(ValueLayout.JAVA_BYTE, at)));
    }

    /** A key in hex, its first bytes only: keys are names and revisions, never values. */
    private static String shown(MemorySegment key) {
        byte[] bytes = key.asSlice(0, Math.min(key.byteSize(), KEY_SHOWN)).toArray(ValueLayout.JAVA_BYTE);
        return "0x" + HexFormat.of().formatHex(bytes) + (key.byteSize() > KEY_SHOWN ? "..." : "");
    }

    private DamagedFileException damage(String where, String expected) {
        return pages.damage(where, expected);
    }
}
