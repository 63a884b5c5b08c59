package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** etcd's auth flag as a member's db records it: enabled, disabled, never set, and damaged. */
class BackendAuthTest {

    private static Path db(Path dir, byte[] authEnabled) throws IOException {
        Map<String, Map<String, byte[]>> buckets = new TreeMap<>();
        if (authEnabled != null) {
            buckets.put("auth", new TreeMap<>(Map.of("authEnabled", authEnabled, "authRevision", new byte[8])));
        }
        buckets.put("meta", Map.of("term", new byte[8]));
        return Files.write(dir.resolve("db"), BboltFixture.db(buckets));
    }

    @Test
    void oneByteOneIsEnabledZeroIsNot(@TempDir Path dir) throws IOException {
        assertTrue(BackendAuth.enabled(db(dir, new byte[] {1})));
        assertFalse(BackendAuth.enabled(db(dir, new byte[] {0})));
    }

    @Test
    void aDbWithoutTheFlagOrWithoutADbIsNotEnabled(@TempDir Path dir) throws IOException {
        assertFalse(BackendAuth.enabled(db(dir, null)));
        assertFalse(BackendAuth.enabled(dir.resolve("absent")));
    }

    @Test
    void aValueEtcdNeverWritesIsDamageNamingTheKey(@TempDir Path dir) throws IOException {
        Path db = db(dir, "yes".getBytes(StandardCharsets.US_ASCII));
        DamagedFileException e = assertThrows(DamagedFileException.class, () -> BackendAuth.enabled(db));
        assertEquals("bucket auth, key authEnabled", e.damage().where());
        Path two = db(dir, new byte[] {2});
        assertThrows(DamagedFileException.class, () -> BackendAuth.enabled(two));
    }

    @Test
    void aDamagedPageOnTheWayIsAFindingNotAnUncheckedException(@TempDir Path dir) throws IOException {
        byte[] bytes = Files.readAllBytes(db(dir, new byte[] {1}));
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putShort(2 * BboltFixture.PAGE + 10, (short) 0x7fff);
        Path damaged = Files.write(dir.resolve("db"), bytes);
        DamagedFileException e = assertThrows(DamagedFileException.class, () -> BackendAuth.enabled(damaged));
        assertEquals("page 2", e.damage().where());
    }

    /**
     * Every single-byte change of the meta pages' fields and of the root leaf (which holds the auth bucket
     * inline) is an answer or a finding: nothing else escapes the reader.
     */
    @Test
    void everySingleByteMutationIsAnAnswerOrAFinding(@TempDir Path dir) throws IOException {
        byte[] whole = Files.readAllBytes(db(dir, new byte[] {1}));
        Path file = dir.resolve("mutated");
        List<Integer> offsets = new ArrayList<>();
        for (int page = 0; page < 2; page++) {
            for (int i = 0; i < 80; i++) offsets.add(page * BboltFixture.PAGE + i);
        }
        for (int i = 0; i < 256; i++) offsets.add(2 * BboltFixture.PAGE + i);
        int answers = 0;
        int findings = 0;
        List<Integer> metaAnsweredFalse = new ArrayList<>();
        for (int at : offsets) {
            byte[] bytes = whole.clone();
            bytes[at] ^= (byte) 0xA5;
            Files.write(file, bytes);
            try {
                boolean enabled = BackendAuth.enabled(file);
                answers++;
                if (at < 2 * BboltFixture.PAGE && !enabled) {
                    metaAnsweredFalse.add(at);
                }
            } catch (DamagedFileException finding) {
                findings++; // what the reader must give for a byte it cannot trust
            }
        }
        assertEquals(offsets.size(), answers + findings, "every mutation is an answer or a finding");
        assertTrue(findings > 0, "some mutations are findings (" + answers + " answers)");
        assertTrue(answers > 0, "some mutations leave an answer (" + findings + " findings)");
        // one meta page changed leaves the other (checksummed) one, which still says enabled
        assertEquals(List.of(), metaAnsweredFalse, "a changed meta page never turns enabled into not enabled");
    }
}
