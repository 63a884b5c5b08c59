package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DbSnapshotTest {

    /** A 3.5 db: its cluster version, keys at revisions 2..{@code newest}, two members (one removed). */
    static byte[] db35(long newest) {
        Map<String, byte[]> keys = new LinkedHashMap<>();
        for (long rev = 2; rev <= newest; rev++) keys.put(revisionKey(rev), keyValue(rev));
        Map<String, Map<String, byte[]>> buckets = new LinkedHashMap<>();
        buckets.put("cluster", Map.of("clusterVersion", "3.5.0".getBytes(StandardCharsets.UTF_8)));
        buckets.put("key", keys);
        Map<String, byte[]> members = new LinkedHashMap<>();
        members.put(
                "1a", "{\"id\":26,\"peerURLs\":[\"https://a:2380\"],\"name\":\"a\"}".getBytes(StandardCharsets.UTF_8));
        members.put(
                "2b", "{\"id\":43,\"peerURLs\":[\"https://b:2380\"],\"name\":\"b\"}".getBytes(StandardCharsets.UTF_8));
        buckets.put("members", members);
        buckets.put("members_removed", Map.of("2b", new byte[0]));
        return BboltFixture.db(buckets);
    }

    /** mvcc's key: the main revision big-endian, '_', the sub revision (as ASCII chars: every byte below 0x80). */
    private static String revisionKey(long rev) {
        ByteBuffer b = ByteBuffer.allocate(17);
        b.putLong(rev).put((byte) '_').putLong(0);
        return new String(b.array(), StandardCharsets.ISO_8859_1);
    }

    /**
     * An mvccpb.KeyValue as etcd writes it (key "k", created and modified at {@code rev}, version 1, value "v"), so
     * the db passes the start's check of the key bucket's values; {@code rev} below 128 keeps each varint one byte.
     */
    private static byte[] keyValue(long rev) {
        return new byte[] {0x0a, 1, 'k', 0x10, (byte) rev, 0x18, (byte) rev, 0x20, 1, 0x2a, 1, 'v'};
    }

    static byte[] withEtcdHash(byte[] db) throws Exception {
        byte[] hash = MessageDigest.getInstance("SHA-256").digest(db);
        byte[] file = new byte[db.length + hash.length];
        System.arraycopy(db, 0, file, 0, db.length);
        System.arraycopy(hash, 0, file, db.length, hash.length);
        return file;
    }

    @Test
    void readsTheLineTheNewestRevisionAndTheMembers(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("db");
        Files.write(file, db35(9));
        DbSnapshot read = DbSnapshot.read(file);
        assertEquals(Optional.of("3.5.0"), read.writtenBy());
        assertEquals(9, read.revision());
        assertEquals(List.of("a=https://a:2380"), read.members(), "the removed member is left out");
        assertFalse(read.hashAppended(), "a bare db carries no integrity hash");
        assertEquals(
                HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file))),
                read.sha256());
    }

    @Test
    void etcdsAppendedHashIsCheckedAgainstTheRest(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("snapshot.db");
        byte[] saved = withEtcdHash(db35(5));
        Files.write(file, saved);
        DbSnapshot read = DbSnapshot.read(file);
        assertTrue(read.hashAppended());
        assertEquals(5, read.revision());

        saved[saved.length - 1] ^= 1; // the hash no longer matches
        Files.write(file, saved);
        DamagedFileException damaged = assertThrows(DamagedFileException.class, () -> DbSnapshot.read(file));
        assertEquals("its last 32 bytes", damaged.damage().where());
        assertArrayEquals(saved, Files.readAllBytes(file), "read only");
    }
}
