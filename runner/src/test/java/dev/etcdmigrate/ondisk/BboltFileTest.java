package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bbolt reader on a file laid out like bbolt's, whole and damaged: damage is a finding, never an unchecked exception. */
class BboltFileTest {

    private static byte[] sample() {
        Map<String, Map<String, byte[]>> buckets = new TreeMap<>();
        buckets.put("cluster", Map.of("clusterVersion", "3.6.0".getBytes(StandardCharsets.US_ASCII)));
        buckets.put(
                "meta",
                new TreeMap<>(
                        Map.of("storageVersion", "3.6.0".getBytes(StandardCharsets.US_ASCII), "term", new byte[8])));
        return BboltFixture.db(buckets);
    }

    private static Path write(Path dir, byte[] db) throws IOException {
        return Files.write(dir.resolve("db"), db);
    }

    @Test
    void readsValuesAndBucketsOfAWholeFile(@TempDir Path dir) throws IOException {
        try (BboltFile db = BboltFile.open(write(dir, sample()))) {
            assertEquals(Optional.of("3.6.0"), db.storageVersion());
            assertEquals(
                    "3.6.0",
                    new String(db.value("cluster", "clusterVersion").orElseThrow(), StandardCharsets.US_ASCII));
            assertTrue(db.hasBucket("meta"));
            assertEquals(Optional.empty(), db.value("key", "x"));
            assertEquals(2, db.entries("meta", 10).size());
            assertEquals(3L * BboltFixture.PAGE, db.size().inUse().orElseThrow());
        }
    }

    @Test
    void aPageThatIdentifiesAsAnotherIsDamageNamingThePage(@TempDir Path dir) throws IOException {
        byte[] db = sample();
        ByteBuffer.wrap(db)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putLong(2 * BboltFixture.PAGE, 0); // bbolt's "Page expected to be: 2, but self identifies as 0"
        DamagedFileException e = assertThrows(DamagedFileException.class, () -> storageVersion(write(dir, db)));
        assertEquals("page 2", e.damage().where());
        assertTrue(e.damage().expected().contains("identifies as 2, found 0"), e.getMessage());
    }

    @Test
    void aCountBeyondThePageIsDamage(@TempDir Path dir) throws IOException {
        byte[] db = sample();
        ByteBuffer.wrap(db).order(ByteOrder.LITTLE_ENDIAN).putShort(2 * BboltFixture.PAGE + 10, (short) 0xFFFF);
        DamagedFileException e = assertThrows(DamagedFileException.class, () -> storageVersion(write(dir, db)));
        assertEquals("page 2", e.damage().where());
        assertTrue(e.damage().expected().contains(String.valueOf(0xFFFF)), e.getMessage()); // the count found
    }

    @Test
    void anElementPointingOutsideItsPageIsDamage(@TempDir Path dir) throws IOException {
        byte[] db = sample();
        ByteBuffer.wrap(db).order(ByteOrder.LITTLE_ENDIAN).putInt(2 * BboltFixture.PAGE + 16 + 4, 0x7FFFFF00);
        assertThrows(DamagedFileException.class, () -> storageVersion(write(dir, db)));
    }

    @Test
    void aRootPastTheEndAndAFileWithoutAValidMetaAreDamage(@TempDir Path dir) throws IOException {
        byte[] db = sample();
        ByteBuffer b = ByteBuffer.wrap(db).order(ByteOrder.LITTLE_ENDIAN);
        b.putLong(32, 99).putLong(BboltFixture.PAGE + 32, 99);
        BboltFixture.resum(db);
        DamagedFileException past = assertThrows(DamagedFileException.class, () -> storageVersion(write(dir, db)));
        assertTrue(past.damage().expected().contains("found 99"), past.getMessage());
        DamagedFileException meta =
                assertThrows(DamagedFileException.class, () -> BboltFile.open(write(dir, Arrays.copyOf(sample(), 60))));
        assertEquals("meta pages 0 and 1", meta.damage().where());
    }

    @Test
    void aBranchReachingItselfIsDamageNotAHang(@TempDir Path dir) throws IOException {
        byte[] db = Arrays.copyOf(sample(), 4 * BboltFixture.PAGE);
        ByteBuffer b = ByteBuffer.wrap(db).order(ByteOrder.LITTLE_ENDIAN);
        int p = 3 * BboltFixture.PAGE; // page 3: a branch whose two elements both point to itself
        b.putLong(p, 3).putShort(p + 8, (short) 0x01).putShort(p + 10, (short) 2);
        for (int i = 0; i < 2; i++)
            b.putInt(p + 16 + 16 * i, 48 - 16 * i).putInt(p + 20 + 16 * i, 1).putLong(p + 24 + 16 * i, 3);
        b.put(p + 64, (byte) 'a');
        b.putLong(32, 3).putLong(BboltFixture.PAGE + 32, 3).putLong(56, 4).putLong(BboltFixture.PAGE + 56, 4);
        BboltFixture.resum(db);
        try (BboltFile f = BboltFile.open(write(dir, db))) {
            assertThrows(DamagedFileException.class, f::size);
        }
    }

    /** Every byte of the pages' used parts set to two values in turn: an answer or a finding, never anything else. */
    @Test
    void everySingleByteMutationIsAnAnswerOrAFinding(@TempDir Path dir) throws IOException {
        byte[] whole = sample();
        int findings = 0;
        for (int i = 0; i < whole.length; i++) {
            if (i % BboltFixture.PAGE > 300) continue; // past the data of each page: zeros nobody reads
            for (byte value : new byte[] {(byte) 0xFF, (byte) (whole[i] ^ 0x10)}) {
                byte[] db = whole.clone();
                db[i] = value;
                Path file = write(dir, db);
                try (BboltFile f = BboltFile.open(file)) {
                    f.storageVersion();
                    f.size();
                    f.entries("meta", 100);
                    f.walk("cluster", (k, v) -> true);
                } catch (DamagedFileException expected) {
                    findings++;
                } catch (RuntimeException e) {
                    fail("byte " + i + " set to " + value + ": " + e, e);
                }
            }
        }
        assertTrue(findings > 0);
    }

    private static Optional<String> storageVersion(Path db) throws IOException {
        try (BboltFile f = BboltFile.open(db)) {
            return f.storageVersion();
        }
    }
}
