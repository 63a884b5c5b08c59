package dev.etcdmigrate.ondisk;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A bbolt file laid out as bbolt writes it (two meta pages, the root leaf on page 2, its buckets inline),
 * small enough for unit tests of {@link BboltFile}; the ITs read files real etcds wrote.
 */
public final class BboltFixture {

    static final int PAGE = 4096;

    private BboltFixture() {}

    /** A db whose top-level buckets (in key order) hold these plain entries. */
    public static byte[] db(Map<String, Map<String, byte[]>> buckets) {
        ByteBuffer b = ByteBuffer.allocate(3 * PAGE).order(ByteOrder.LITTLE_ENDIAN);
        meta(b, 0, 1);
        meta(b, 1, 2);
        Map<byte[], byte[]> top = new LinkedHashMap<>();
        for (var e : buckets.entrySet()) {
            Map<byte[], byte[]> inner = new LinkedHashMap<>();
            e.getValue().forEach((k, v) -> inner.put(k.getBytes(StandardCharsets.US_ASCII), v));
            byte[] page = leaf(0, inner, false);
            byte[] value = new byte[16 + page.length]; // {root 0, sequence 0}: an inline bucket
            System.arraycopy(page, 0, value, 16, page.length);
            top.put(e.getKey().getBytes(StandardCharsets.US_ASCII), value);
        }
        byte[] root = leaf(2, top, true);
        b.put(2 * PAGE, root);
        return b.array();
    }

    static byte[] leaf(long id, Map<byte[], byte[]> entries, boolean buckets) {
        List<byte[]> keys = new ArrayList<>(entries.keySet());
        int size = 16 + 16 * keys.size();
        for (byte[] k : keys) size += k.length + entries.get(k).length;
        ByteBuffer p = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
        p.putLong(0, id)
                .putShort(8, (short) 0x02)
                .putShort(10, (short) keys.size())
                .putInt(12, 0);
        int data = 16 + 16 * keys.size();
        for (int i = 0; i < keys.size(); i++) {
            int e = 16 + 16 * i;
            byte[] k = keys.get(i);
            byte[] v = entries.get(k);
            p.putInt(e, buckets ? 1 : 0)
                    .putInt(e + 4, data - e)
                    .putInt(e + 8, k.length)
                    .putInt(e + 12, v.length);
            p.put(data, k);
            p.put(data + k.length, v);
            data += k.length + v.length;
        }
        return p.array();
    }

    private static void meta(ByteBuffer b, int page, long txid) {
        int o = page * PAGE;
        b.putLong(o, page).putShort(o + 8, (short) 0x04);
        b.putInt(o + 16, 0xED0CDAED).putInt(o + 20, 2).putInt(o + 24, PAGE).putInt(o + 28, 0);
        b.putLong(o + 32, 2).putLong(o + 40, 0); // root bucket on page 2
        b.putLong(o + 48, -1L); // no freelist on disk (etcd's default since 3.4)
        b.putLong(o + 56, 3).putLong(o + 64, txid);
        b.putLong(o + 72, checksum(b, o + 16, o + 72));
    }

    /** Rewrites both meta pages' checksums after a test edited them. */
    static void resum(byte[] db) {
        ByteBuffer b = ByteBuffer.wrap(db).order(ByteOrder.LITTLE_ENDIAN);
        for (int o : new int[] {0, PAGE}) b.putLong(o + 72, checksum(b, o + 16, o + 72));
    }

    private static long checksum(ByteBuffer b, int from, int to) {
        long hash = 0xcbf29ce484222325L;
        for (int i = from; i < to; i++) {
            hash ^= b.get(i) & 0xff;
            hash *= 0x100000001b3L;
        }
        return hash;
    }
}
