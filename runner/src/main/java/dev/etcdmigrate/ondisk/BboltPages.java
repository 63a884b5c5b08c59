package dev.etcdmigrate.ondisk;

import java.io.Closeable;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A bbolt file's pages, read and checked ({@link BboltFile} walks its trees over them): the current meta page,
 * a page by id with its overflow, a page's elements. Every id, count, offset and length read from the file is
 * checked before use; what does not hold is a {@link DamagedFileException} naming the page and what was
 * expected, the way bbolt itself would find it ("page N identifies as M", an element outside its page).
 */
final class BboltPages implements Closeable {

    private static final int MAGIC = 0xED0CDAED;
    static final int PAGE_HEADER = 16;
    static final int ELEMENT = 16;
    static final int BRANCH = 0x01;
    static final int LEAF = 0x02;
    static final int FREELIST = 0x10;
    static final int BUCKET_LEAF = 0x01;
    private static final int MAX_DEPTH = 64;
    /** A single page with its overflow read whole: bounded (etcd's values are at most a few MiB). */
    static final long MAX_PAGE_BYTES = 64L << 20;

    private final Path path;
    private final FileChannel file;
    final long fileSize;
    final Meta meta;

    /** The current meta page: the valid one with the higher txid. */
    record Meta(int pageSize, long root, long freelist, long highWater, long txid) {}

    private BboltPages(Path path, FileChannel file) throws IOException {
        this.path = path;
        this.file = file;
        this.fileSize = file.size();
        this.meta = currentMeta();
    }

    /** Opens the db and reads its meta pages; damage there (no valid meta page) is a {@link DamagedFileException}. */
    static BboltPages open(Path db) throws IOException {
        FileChannel channel = FileChannel.open(db, StandardOpenOption.READ);
        try {
            return new BboltPages(db, channel);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        file.close();
    }

    Path path() {
        return path;
    }

    /** Every page of the current tree and the freelist checked as bbolt's own check and etcd's reads meet them. */
    void checkAll() throws IOException {
        BboltCheck.run(this);
    }

    /** The whole file mapped read-only for as long as {@code arena} is open (the page check's view of it). */
    MemorySegment map(Arena arena) throws IOException {
        return file.map(FileChannel.MapMode.READ_ONLY, 0, fileSize, arena);
    }

    DamagedFileException damage(String where, String expected) {
        return new DamagedFileException(new Damage(path, where, expected));
    }

    /** The element count, checked against the page's bytes. */
    int count(ByteBuffer page, long id) throws DamagedFileException {
        int count = Short.toUnsignedInt(page.getShort(10));
        if ((long) PAGE_HEADER + (long) count * ELEMENT > page.limit())
            throw damage(
                    id >= 0 ? "page " + id : where(page),
                    "at most " + (page.limit() - PAGE_HEADER) / ELEMENT + " elements, found a count of " + count);
        return count;
    }

    ByteBuffer leafKey(ByteBuffer page, int e, String where) throws DamagedFileException {
        long at = e + Integer.toUnsignedLong(page.getInt(e + 4));
        long ksize = Integer.toUnsignedLong(page.getInt(e + 8));
        checkRange(page, at, ksize, where);
        return page.slice((int) at, (int) ksize).order(ByteOrder.LITTLE_ENDIAN);
    }

    ByteBuffer leafValue(ByteBuffer page, int e, String where) throws DamagedFileException {
        long at = e + Integer.toUnsignedLong(page.getInt(e + 4)) + Integer.toUnsignedLong(page.getInt(e + 8));
        long vsize = Integer.toUnsignedLong(page.getInt(e + 12));
        checkRange(page, at, vsize, where);
        return page.slice((int) at, (int) vsize).order(ByteOrder.LITTLE_ENDIAN);
    }

    byte[] bytes(ByteBuffer page, long at, int length, String where) throws DamagedFileException {
        checkRange(page, at, Integer.toUnsignedLong(length), where);
        byte[] out = new byte[length];
        page.get((int) at, out);
        return out;
    }

    void checkRange(ByteBuffer page, long at, long length, String where) throws DamagedFileException {
        if (at < PAGE_HEADER || at + length > page.limit())
            throw damage(
                    where,
                    "an element within the page's " + page.limit() + " bytes, found one at [" + at + ", "
                            + (at + length) + ")");
    }

    void checkDepth(int depth, long id) throws DamagedFileException {
        if (depth > MAX_DEPTH)
            throw damage(id >= 0 ? "page " + id : "the tree", "a tree at most " + MAX_DEPTH + " pages deep");
    }

    /** "page N" for a page read from the file (its header's id was checked), "an inline bucket" otherwise. */
    static String where(ByteBuffer page) {
        return page.capacity() == page.limit() && page.arrayOffset() == 0 && page.hasArray()
                ? "page " + page.getLong(0)
                : "an inline bucket";
    }

    /** A page's header, checked: inside the file, not a meta page, and identifying as itself (bbolt's own assertion). */
    ByteBuffer header(long id, String what) throws IOException {
        long pages = fileSize / meta.pageSize();
        if (id < 2 || id >= pages)
            throw damage(what, "a page id in [2, " + pages + ") (the file's pages), found " + id);
        ByteBuffer header = readFully(id * meta.pageSize(), PAGE_HEADER);
        long self = header.getLong(0);
        if (self != id) throw damage("page " + id, "a page that identifies as " + id + ", found " + self);
        return header;
    }

    /** A whole page (with its overflow pages), little-endian, position 0 at its header. */
    ByteBuffer page(long id, String what) throws IOException {
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
    ByteBuffer readFully(long offset, int length) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            if (file.read(b, offset + b.position()) < 0)
                throw damage("offset " + offset, length + " bytes before the end of the file, found " + b.position());
        }
        return b.flip();
    }
}
