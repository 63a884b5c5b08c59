package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link BboltFile#checkPages} on a db with a bucket of its own pages (bbolt's layout: page 2 the root leaf, the
 * bucket "data" rooted at branch page 3 over leaves 4 and 5, an inline bucket "meta"), whole and with each fault
 * bbolt's own check ({@code tx_check.go}) reports, or etcd's reads of the pages meet, put in on purpose.
 */
class BboltCheckTest {

    private static final int PAGE = BboltFixture.PAGE;

    /** Keys "a".."f" in leaf 4, "m".."r" in leaf 5; the branch's keys are each leaf's first. */
    private static byte[] tree(long highWater, long freelist) {
        ByteBuffer b = ByteBuffer.allocate((int) Math.max(highWater, 6) * PAGE).order(ByteOrder.LITTLE_ENDIAN);
        Map<byte[], byte[]> top = new LinkedHashMap<>();
        byte[] keyBucket = new byte[16];
        ByteBuffer.wrap(keyBucket).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 3);
        top.put(ascii("data"), keyBucket);
        byte[] metaPage = BboltFixture.leaf(0, Map.of(ascii("term"), new byte[8]), false);
        byte[] meta = new byte[16 + metaPage.length];
        System.arraycopy(metaPage, 0, meta, 16, metaPage.length);
        top.put(ascii("meta"), meta);
        b.put(2 * PAGE, BboltFixture.leaf(2, top, true));
        b.put(4 * PAGE, BboltFixture.leaf(4, entries("a", "b", "c", "d", "e", "f"), false));
        b.put(5 * PAGE, BboltFixture.leaf(5, entries("m", "n", "o", "p", "q", "r"), false));
        int p = 3 * PAGE;
        b.putLong(p, 3).putShort(p + 8, (short) 0x01).putShort(p + 10, (short) 2);
        b.putInt(p + 16, 32).putInt(p + 20, 1).putLong(p + 24, 4); // {pos, ksize, pgid}: "a" -> 4
        b.putInt(p + 32, 17).putInt(p + 36, 1).putLong(p + 40, 5); // "m" -> 5
        b.put(p + 48, (byte) 'a').put(p + 49, (byte) 'm');
        byte[] db = b.array();
        System.arraycopy(BboltFixture.db(Map.of()), 0, db, 0, 2 * PAGE);
        edit(db, m -> {
            for (int o : new int[] {0, PAGE})
                m.putLong(o + 32, 2).putLong(o + 48, freelist).putLong(o + 56, highWater);
        });
        BboltFixture.resum(db);
        return db;
    }

    private static byte[] healthy() {
        return tree(6, -1L);
    }

    private static Map<byte[], byte[]> entries(String... keys) {
        Map<byte[], byte[]> out = new LinkedHashMap<>();
        for (String k : keys) out.put(ascii(k), ascii("v" + k));
        return out;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static void edit(byte[] db, Consumer<ByteBuffer> change) {
        change.accept(ByteBuffer.wrap(db).order(ByteOrder.LITTLE_ENDIAN));
    }

    /** The byte offset of leaf {@code page}'s element {@code i}'s key. */
    private static int keyAt(byte[] db, int page, int i) {
        ByteBuffer b = ByteBuffer.wrap(db).order(ByteOrder.LITTLE_ENDIAN);
        int e = page * PAGE + 16 + 16 * i;
        return e + b.getInt(e + 4);
    }

    private static Damage damage(Path dir, byte[] db) throws IOException {
        Path file = Files.write(dir.resolve("db"), db);
        try (BboltFile f = BboltFile.open(file)) {
            f.checkPages();
        } catch (DamagedFileException e) {
            return e.damage();
        }
        throw new AssertionError("no damage found");
    }

    private static void assertDamage(Path dir, byte[] db, String where, String expected) throws IOException {
        Damage d = damage(dir, db);
        assertEquals(where, d.where(), d.describe());
        assertTrue(d.expected().contains(expected), d.describe());
    }

    @Test
    void aHealthyTreePasses(@TempDir Path dir) throws IOException {
        Path file = Files.write(dir.resolve("db"), healthy());
        try (BboltFile f = BboltFile.open(file)) {
            f.checkPages();
            assertEquals(12, f.entries("data", 100).size());
        }
    }

    @Test
    void leafKeysOutOfOrderAreDamageOfThatLeaf(@TempDir Path dir) throws IOException {
        byte[] db = healthy();
        db[keyAt(db, 4, 3)] = 'b'; // a b c b e f
        assertDamage(dir, db, "page 4", "ascending order");
        db = healthy();
        db[keyAt(db, 4, 2)] = 'b'; // a b b: equal keys
        assertDamage(dir, db, "page 4", "equals");
    }

    @Test
    void aLeafKeyAtOrAboveItsParentsNextKeyIsDamage(@TempDir Path dir) throws IOException {
        byte[] db = healthy();
        db[keyAt(db, 4, 5)] = 'z'; // a..e z in the leaf below "m"
        assertDamage(dir, db, "page 4", "below the next key of its parent");
    }

    @Test
    void aLeafsFirstKeyBelowItsBranchKeyIsDamage(@TempDir Path dir) throws IOException {
        byte[] db = healthy();
        db[keyAt(db, 5, 0)] = 'g'; // page 5 starts with "g" under the branch key "m"
        assertDamage(dir, db, "page 5", "at or above its parent's");
    }

    @Test
    void aBranchKeyBelowThePreviousSubtreesKeysIsFoundWhereTheyCross(@TempDir Path dir) throws IOException {
        byte[] db = healthy();
        db[3 * PAGE + 49] = 'e'; // the second branch key below the first subtree's greatest ("f")
        assertDamage(dir, db, "page 4", "below the next key of its parent");
        db = healthy();
        db[3 * PAGE + 48] = 'm'; // two equal branch keys: the first leaf's keys lie below its own
        assertDamage(dir, db, "page 4", "at or above its parent's");
    }

    @Test
    void aPageReachedTwiceIsDamage(@TempDir Path dir) throws IOException {
        byte[] db = healthy();
        edit(db, b -> b.putLong(3 * PAGE + 40, 4)); // both branch elements lead to page 4
        assertDamage(dir, db, "page 4", "multiple references");
    }

    @Test
    void aPageAtOrAboveTheHighWaterMarkIsDamage(@TempDir Path dir) throws IOException {
        byte[] db = tree(5, -1L);
        byte[] bigger = new byte[6 * PAGE];
        System.arraycopy(db, 0, bigger, 0, db.length);
        assertDamage(dir, bigger, "a child of page 3", "the high water mark");
    }

    @Test
    void aTreePageOfAnotherTypeIsDamage(@TempDir Path dir) throws IOException {
        byte[] db = healthy();
        edit(db, b -> b.putShort(5 * PAGE + 8, (short) 0x03));
        assertDamage(dir, db, "page 5", "invalid type");
    }

    @Test
    void aBucketBelowATopLevelBucketIsDamage(@TempDir Path dir) throws IOException {
        byte[] db = healthy();
        edit(db, b -> b.putInt(4 * PAGE + 16 + 16 * 2, 1)); // "c" flagged as a bucket
        assertDamage(dir, db, "page 4", "no bucket below a top-level bucket");
    }

    @Test
    void anInlineBucketThatIsNoLeafIsDamage(@TempDir Path dir) throws IOException {
        byte[] db = healthy();
        int inline = keyAt(db, 2, 1) + 4 + 16; // after "meta" and its bucket header
        edit(db, b -> b.putShort(inline + 8, (short) 0x01));
        assertDamage(dir, db, "page 2, bucket meta's inline page", "a leaf page");
    }

    @Test
    void theFreelistOnDiskMustAccountForEveryPage(@TempDir Path dir) throws IOException {
        // pages 0-5 in use, 6 the freelist, 7 and 8 free: hwm 9
        byte[] ok = withFreelist(7, 8);
        Path file = Files.write(dir.resolve("db"), ok);
        try (BboltFile f = BboltFile.open(file)) {
            f.checkPages();
        }
        assertDamage(dir, withFreelist(7), "page 8", "unreachable unfreed");
        assertDamage(dir, withFreelist(7, 8, 8), "page 6", "already freed");
        assertDamage(dir, withFreelist(4, 7, 8), "page 4", "reachable freed");
        assertDamage(dir, withFreelist(7, 8, 9), "page 6", "the high water mark");
    }

    private static byte[] withFreelist(long... free) {
        byte[] db = tree(9, 6);
        edit(db, b -> {
            int p = 6 * PAGE;
            b.putLong(p, 6).putShort(p + 8, (short) 0x10).putShort(p + 10, (short) free.length);
            for (int i = 0; i < free.length; i++) b.putLong(p + 16 + 8 * i, free[i]);
        });
        return db;
    }

    /** An mvccpb.KeyValue: key "k", create and mod revision 2, version 1, value "v". */
    private static final byte[] KEY_VALUE = {0x0a, 1, 'k', 0x10, 2, 0x18, 2, 0x20, 1, 0x2a, 1, 'v'};

    /** A db as etcd writes its buckets (inline): one revision in "key", a lease, the meta bucket. */
    private static byte[] etcdDb(byte[] keyValue, String revision, byte[] term) {
        Map<String, Map<String, byte[]>> buckets = new java.util.TreeMap<>();
        buckets.put("key", Map.of(revision, keyValue));
        buckets.put("lease", Map.of("12345678", new byte[] {0x08, 7, 0x10, 60}));
        buckets.put("meta", new java.util.TreeMap<>(Map.of("consistent_index", new byte[8], "term", term)));
        return BboltFixture.db(buckets);
    }

    private static final String REVISION = "00000002_00000000";

    @Test
    void valuesEtcdDecodesAtItsStartAreCheckedAsItDecodesThem(@TempDir Path dir) throws IOException {
        Path file = Files.write(dir.resolve("db"), etcdDb(KEY_VALUE, REVISION, new byte[8]));
        try (BboltFile f = BboltFile.open(file)) {
            f.checkPages();
        }
        byte[] wireType7 = KEY_VALUE.clone();
        wireType7[3] = 0x17; // field 2 with wire type 7
        assertDamage(dir, etcdDb(wireType7, REVISION, new byte[8]), "page 2, bucket key's inline page", "wire type");
        byte[] wrongType = KEY_VALUE.clone();
        wrongType[3] = 0x12; // field 2 (a revision) length-delimited
        assertDamage(
                dir, etcdDb(wrongType, REVISION, new byte[8]), "page 2, bucket key's inline page", "mvccpb.KeyValue");
        byte[] tooLong = KEY_VALUE.clone();
        tooLong[1] = 100; // the key's length past the message
        assertDamage(dir, etcdDb(tooLong, REVISION, new byte[8]), "page 2, bucket key's inline page", "a length");
        byte[] cut = Arrays.copyOf(KEY_VALUE, KEY_VALUE.length + 1);
        cut[KEY_VALUE.length] = (byte) 0x80; // a tag cut short
        assertDamage(dir, etcdDb(cut, REVISION, new byte[8]), "page 2, bucket key's inline page", "cut short");
        assertDamage(
                dir,
                etcdDb(KEY_VALUE, "0000002_00000000", new byte[8]),
                "page 2, bucket key's inline page",
                "17 bytes");
        assertDamage(
                dir, etcdDb(KEY_VALUE, REVISION, new byte[7]), "page 2, bucket meta's inline page", "term of 8 bytes");
        assertDamage(
                dir, etcdDb(KEY_VALUE, "00000002^00000000", new byte[8]), "page 2, bucket key's inline page", "'_'");
    }

    /** Every byte of the tree's used parts set to two values in turn: passes or a finding, never anything else. */
    @Test
    void everySingleByteMutationIsAnAnswerOrAFinding(@TempDir Path dir) throws IOException {
        byte[] whole = healthy();
        int findings = 0;
        for (int i = 0; i < whole.length; i++) {
            if (i % PAGE > 200) continue;
            for (byte value : new byte[] {(byte) 0xFF, (byte) (whole[i] ^ 0x10)}) {
                byte[] db = whole.clone();
                db[i] = value;
                Path file = Files.write(dir.resolve("db"), db);
                try (BboltFile f = BboltFile.open(file)) {
                    f.checkPages();
                } catch (DamagedFileException expected) {
                    findings++;
                } catch (RuntimeException e) {
                    fail("byte " + i + " set to " + value + ": " + e, e);
                }
            }
        }
        assertTrue(findings > 0);
    }
}
