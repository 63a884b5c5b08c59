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
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.HexFormat;
import java.util.Optional;

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
 * The file is mapped read-only for the check: a page is a view of the mapping (no read call, no copy), and of a
 * value in its overflow only the bytes the check asks are touched. A walk that reads a page by read calls into
 * fresh buffers spends most of a fresh JVM's time in the interpreted read path, once per page.
 */
final class BboltCheck {

    private static final int MAX_DEPTH = 64;
    private static final int KEY_SHOWN = 16;

    private final BboltPages pages;
    private final MemorySegment file;
    private final long fileSize;
    private final int pageSize;
    private final long highWater;
    private final long filePages;
    private final BitSet reachable = new BitSet();
    private final BitSet freed = new BitSet();

    private BboltCheck(BboltPages pages, MemorySegment file) {
        this.pages = pages;
        this.file = file;
        this.fileSize = Math.min(pages.fileSize, file.byteSize());
        this.pageSize = pages.meta.pageSize();
        this.highWater = pages.meta.highWater();
        this.filePages = fileSize / pageSize;
    }

    /** Checks every page of the db's current tree and its freelist; the first damage found is thrown. */
    static void run(BboltPages pages) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            new BboltCheck(pages, pages.map(arena)).check();
        } catch (InternalError fault) {
            // a mapped page that is gone: the file shrank while it was checked (the JVM's fault on that access)
            throw new IOException(pages.path() + ": the file changed while its pages were checked", fault);
        }
    }

    /** A page with its overflow ({@code size} bytes, or an inline page's), a little-endian view of its bytes. */
    private final class Page {
        final long size;
        final ByteBuffer loaded;

        Page(long size, ByteBuffer loaded) {
            this.size = size;
            this.loaded = loaded;
        }

        /** The bytes [at, at + length) of the page, checked to lie inside it. */
        ByteBuffer bytes(long at, long length, String where) throws DamagedFileException {
            if (at < PAGE_HEADER || length < 0 || at + length > size)
                throw damage(
                        where,
                        "an element within the page's " + size + " bytes, found one at [" + at + ", " + (at + length)
                                + ")");
            return loaded.slice((int) at, (int) length).order(ByteOrder.LITTLE_ENDIAN);
        }

        /** The byte at {@code at} (inside the page). */
        int byteAt(long at) {
            return loaded.get((int) at) & 0xff;
        }

        /** The element headers checked to lie inside the page. */
        void elements(int count, String where) throws DamagedFileException {
            if ((long) PAGE_HEADER + (long) count * ELEMENT > size)
                throw damage(
                        where, "at most " + (size - PAGE_HEADER) / ELEMENT + " elements, found a count of " + count);
        }
    }

    /**
     * How a page was reached, for the damage found there: its parent page, or the root of a bucket (none: the root
     * bucket), or the freelist. Made into words only when damage is found (a string per page costs the walk).
     */
    private record Reached(long parent, String bucket) {
        static final Reached ROOT = new Reached(-1, null);
        static final Reached FREELIST = new Reached(-2, null);

        @Override
        public String toString() {
            if (parent >= 0) return "a child of page " + parent;
            if (parent == -2) return "the freelist";
            return bucket == null ? "the root bucket" : "the root of bucket " + bucket;
        }
    }

    /** A value inside a page, read through the page as far as it is asked (a large value is not read whole). */
    private record Value(Page page, long at, long length, String where) implements EtcdValues.Bytes {
        @Override
        public int at(long i) {
            return page.byteAt(at + i);
        }

        @Override
        public byte[] all() throws IOException {
            return bytes(page.bytes(at, length, where));
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.limit()];
        b.get(0, out);
        return out;
    }

    private void check() throws IOException {
        if (highWater < 2 || highWater > Integer.MAX_VALUE)
            throw damage("meta page", "a high water mark of 2 pages or more, found " + highWater);
        reachable.set(0, 2);
        long freelist = pages.meta.freelist();
        if (freelist != -1L) readFreelist(freelist);
        tree(pages.meta.root(), null, null, 0, null, Reached.ROOT);
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
        Page page = page(id, Reached.FREELIST);
        int flags = flags(page.loaded);
        if (flags != FREELIST)
            throw damage("page " + id, "the freelist page (flags 0x10), found flags 0x" + Integer.toHexString(flags));
        mark(id, page, Reached.FREELIST);
        long count = Short.toUnsignedInt(page.loaded.getShort(10));
        long at = PAGE_HEADER;
        if (count == 0xFFFF) {
            count = page.bytes(PAGE_HEADER, 8, "page " + id).getLong(0);
            at += 8;
        }
        if (count < 0 || count > (page.size - at) / 8)
            throw damage("page " + id, "a freelist within its page, found a count of " + count);
        ByteBuffer ids = page.bytes(at, count * 8, "page " + id);
        for (int i = 0; i < count; i++) {
            long free = ids.getLong(i * 8);
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
    private ByteBuffer tree(long id, ByteBuffer min, ByteBuffer max, int depth, String bucket, Reached what)
            throws IOException {
        if (depth > MAX_DEPTH) throw damage("page " + id, "a tree at most " + MAX_DEPTH + " pages deep");
        Page page = page(id, what);
        int flags = flags(page.loaded);
        if (flags != BRANCH && flags != LEAF)
            throw damage(
                    "page " + id,
                    "a branch or leaf page (bbolt's check: \"invalid type\"), found flags 0x"
                            + Integer.toHexString(flags));
        mark(id, page, what);
        String where = "page " + id;
        int count = Short.toUnsignedInt(page.loaded.getShort(10));
        page.elements(count, where);
        if (flags == LEAF) return leaf(page, count, where, min, max, bucket, depth);
        if (count == 0) throw damage(where, "a branch page with at least one element, found none");
        ByteBuffer running = min;
        ByteBuffer greatest = null;
        for (int i = 0; i < count; i++) {
            ByteBuffer key = branchKey(page, i, where);
            order(where, "branch", i, key, running, max);
            ByteBuffer next = i + 1 < count ? branchKey(page, i + 1, where) : max;
            long child = page.loaded.getLong(PAGE_HEADER + i * ELEMENT + 8);
            greatest = tree(child, key, next, depth + 1, bucket, new Reached(id, bucket));
            running = greatest;
        }
        return greatest;
    }

    private static ByteBuffer branchKey(Page page, int i, String where) throws IOException {
        int e = PAGE_HEADER + i * ELEMENT;
        long pos = e + Integer.toUnsignedLong(page.loaded.getInt(e));
        return page.bytes(pos, Integer.toUnsignedLong(page.loaded.getInt(e + 4)), where);
    }

    /**
     * A leaf's elements inside it, its keys in order and in range, its buckets checked (in the root bucket, {@code
     * bucket} null) or its values as etcd reads them (in the top-level bucket {@code bucket}); returns its last key.
     */
    private ByteBuffer leaf(
            Page page, int count, String where, ByteBuffer min, ByteBuffer max, String bucket, int depth)
            throws IOException {
        ByteBuffer running = min;
        for (int i = 0; i < count; i++) {
            int e = PAGE_HEADER + i * ELEMENT;
            int flags = page.loaded.getInt(e);
            long pos = e + Integer.toUnsignedLong(page.loaded.getInt(e + 4));
            long ksize = Integer.toUnsignedLong(page.loaded.getInt(e + 8));
            long vsize = Integer.toUnsignedLong(page.loaded.getInt(e + 12));
            if (pos + ksize + vsize > page.size)
                throw damage(
                        where,
                        "an element within the page's " + page.size + " bytes, found one at [" + pos + ", "
                                + (pos + ksize + vsize) + ")");
            ByteBuffer key = page.bytes(pos, ksize, where);
            order(where, "leaf", i, key, running, max);
            running = key;
            if (bucket != null) {
                if ((flags & BUCKET_LEAF) != 0)
                    throw damage(
                            where,
                            "no bucket below a top-level bucket (etcd nests none), found bucket " + shown(key)
                                    + " in bucket " + bucket);
                Optional<String> problem =
                        EtcdValues.problem(pages.path(), bucket, key, new Value(page, pos + ksize, vsize, where));
                if (problem.isPresent())
                    throw damage(where, "bucket " + bucket + ", element " + i + ": " + problem.get());
                continue;
            }
            if ((flags & BUCKET_LEAF) == 0) continue; // a plain value in the root bucket: etcd keeps none, reads none
            String name = new String(bytes(key), StandardCharsets.ISO_8859_1);
            if (vsize < 16) throw damage(where, "a bucket header of 16 bytes for bucket " + name + ", found " + vsize);
            ByteBuffer value = page.bytes(pos + ksize, vsize, where);
            long root = value.getLong(0);
            if (root != 0) {
                tree(root, null, null, depth + 1, name, new Reached(-1, name));
                continue;
            }
            ByteBuffer inline = value.slice(16, value.limit() - 16).order(ByteOrder.LITTLE_ENDIAN);
            String at = where + ", bucket " + name + "'s inline page";
            if (inline.limit() < PAGE_HEADER) throw damage(at, "a page header of 16 bytes, found " + inline.limit());
            if (flags(inline) != LEAF)
                throw damage(at, "a leaf page, found flags 0x" + Integer.toHexString(flags(inline)));
            Page inlinePage = new Page(inline.limit(), inline);
            int inlineCount = Short.toUnsignedInt(inline.getShort(10));
            inlinePage.elements(inlineCount, at);
            leaf(inlinePage, inlineCount, at, null, null, name, depth + 1);
        }
        return count > 0 ? running : null;
    }

    /** bbolt's verifyKeyOrder: the first key at or above the ancestor's, each next one above it, all below max. */
    private void order(String where, String kind, int i, ByteBuffer key, ByteBuffer previous, ByteBuffer max)
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
    private Page page(long id, Reached what) throws IOException {
        long limit = Math.min(highWater, filePages);
        if (id < 2 || id >= limit)
            throw damage(
                    what.toString(),
                    "a page id in [2, " + limit + ") ("
                            + (limit == highWater ? "the high water mark" : "the file's pages") + "), found " + id);
        long offset = id * pageSize;
        ByteBuffer header = view(offset, pageSize);
        long self = header.getLong(0);
        if (self != id) throw damage("page " + id, "a page that identifies as " + id + ", found " + self);
        long overflow = Integer.toUnsignedLong(header.getInt(12));
        if (id + overflow >= limit || (overflow + 1) * pageSize > BboltPages.MAX_PAGE_BYTES)
            throw damage("page " + id, "overflow pages below page " + limit + ", found " + overflow + " of them");
        long size = (overflow + 1) * pageSize;
        return new Page(size, overflow == 0 ? header : view(offset, size));
    }

    /** The mapped bytes [offset, offset + length), little-endian; the callers checked that they lie inside the file. */
    private ByteBuffer view(long offset, long length) throws DamagedFileException {
        if (offset + length > fileSize)
            throw damage(
                    "offset " + offset, length + " bytes before the end of the file, found " + (fileSize - offset));
        return file.asSlice(offset, length).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** bbolt's "multiple references" and "reachable freed": each page and its overflow reached once, none free. */
    private void mark(long id, Page page, Reached what) throws DamagedFileException {
        long pagesOf = page.size / pageSize;
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

    private static int flags(ByteBuffer page) {
        return Short.toUnsignedInt(page.getShort(8));
    }

    /** Unsigned lexicographic order, as bbolt's bytes.Compare. */
    private static int compare(ByteBuffer a, ByteBuffer b) {
        int at = a.mismatch(b);
        if (at < 0) return 0;
        if (at == a.limit()) return -1;
        if (at == b.limit()) return 1;
        return Integer.compare(Byte.toUnsignedInt(a.get(at)), Byte.toUnsignedInt(b.get(at)));
    }

    /** A key in hex, its first bytes only: keys are names and revisions, never values. */
    private static String shown(ByteBuffer key) {
        byte[] bytes = new byte[Math.min(key.limit(), KEY_SHOWN)];
        key.get(0, bytes);
        return "0x" + HexFormat.of().formatHex(bytes) + (key.limit() > KEY_SHOWN ? "..." : "");
    }

    private DamagedFileException damage(String where, String expected) {
        return pages.damage(where, expected);
    }
}
