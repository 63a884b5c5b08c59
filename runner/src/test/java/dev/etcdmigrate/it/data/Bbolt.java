package dev.etcdmigrate.it.data;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Damage put into a bbolt file on purpose, where a test needs it (bbolt's layout: etcd's go.etcd.io/bbolt). */
final class Bbolt {

    private Bbolt() {}

    /**
     * Makes the last child of the key bucket's root branch page identify as page 0 (its header's id zeroed): a page
     * no lookup of the meta, cluster or members buckets and no first-key read passes, only a walk of every page.
     * Returns that page's id. Fails when the key bucket's root is not a branch page (too few keys).
     */
    static long damageADeepPageOfTheKeyBucket(Path db) throws IOException {
        try (FileChannel f = FileChannel.open(db, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer meta0 = read(f, 0, 80);
            int pageSize = meta0.getInt(24);
            ByteBuffer meta1 = read(f, pageSize, 80);
            // the meta with the higher txid is the current one
            ByteBuffer meta = meta1.getLong(64) > meta0.getLong(64) ? meta1 : meta0;
            long root = meta.getLong(32);
            ByteBuffer rootPage = page(f, root, pageSize);
            long keyRoot = -1;
            int count = Short.toUnsignedInt(rootPage.getShort(10));
            for (int i = 0; i < count; i++) {
                int e = 16 + i * 16;
                int pos = rootPage.getInt(e + 4);
                int ksize = rootPage.getInt(e + 8);
                byte[] key = new byte[ksize];
                rootPage.get(e + pos, key);
                if (new String(key, StandardCharsets.UTF_8).equals("key")) {
                    keyRoot = rootPage.getLong(e + pos + ksize); // the bucket header's root page id
                }
            }
            if (keyRoot <= 0) throw new AssertionError("no key bucket with pages of its own in " + db);
            ByteBuffer branch = page(f, keyRoot, pageSize);
            if ((branch.getShort(8) & 0x01) == 0) throw new AssertionError("the key bucket's root is not a branch");
            int children = Short.toUnsignedInt(branch.getShort(10));
            long last = branch.getLong(16 + (children - 1) * 16 + 8);
            f.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 0), last * pageSize);
            f.force(true);
            return last;
        }
    }

    private static ByteBuffer page(FileChannel f, long id, int pageSize) throws IOException {
        ByteBuffer header = read(f, id * pageSize, 16);
        int overflow = header.getInt(12);
        return read(f, id * pageSize, (overflow + 1) * pageSize);
    }

    private static ByteBuffer read(FileChannel f, long at, int length) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
        while (b.hasRemaining()) {
            if (f.read(b, at + b.position()) < 0) throw new IOException("short read at " + at);
        }
        return b.flip();
    }
}
