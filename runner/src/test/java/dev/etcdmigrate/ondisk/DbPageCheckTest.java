package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link DbPageCheck}: a finding is reused only for the same, unchanged, settled file. */
class DbPageCheckTest {

    private static byte[] healthy() {
        return BboltFixture.db(Map.of("meta", Map.of("term", new byte[8])));
    }

    /** The root leaf (page 2) identifying as page 7: damage bbolt itself asserts on. */
    private static byte[] damaged() {
        byte[] db = healthy();
        ByteBuffer.wrap(db).order(ByteOrder.LITTLE_ENDIAN).putLong(2 * BboltFixture.PAGE, 7);
        return db;
    }

    private static void replace(Path db, byte[] bytes) throws IOException {
        Path next = db.resolveSibling("db.next");
        Files.write(next, bytes);
        Files.move(next, db, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    @Test
    void aDbWrittenJustBeforeItsCheckIsWalkedAgainEvenAtTheSameSize(@TempDir Path dir) throws IOException {
        Path db = dir.resolve("db");
        Files.write(db, healthy());
        DbPageCheck check = new DbPageCheck();
        assertDoesNotThrow(() -> check.check(db));
        Files.write(db, damaged()); // in place, the same size, possibly within the same timestamp tick
        DamagedFileException e = assertThrows(DamagedFileException.class, () -> check.check(db));
        assertEquals("page 2", e.damage().where(), e.damage().describe());
    }

    @Test
    void aReplacedDbIsWalkedAgain(@TempDir Path dir) throws IOException {
        Path db = dir.resolve("db");
        Files.write(db, healthy());
        DbPageCheck check = new DbPageCheck(() -> Long.MAX_VALUE); // every file settled
        assertDoesNotThrow(() -> check.check(db));
        replace(db, damaged());
        assertThrows(DamagedFileException.class, () -> check.check(db));
        replace(db, healthy());
        assertDoesNotThrow(() -> check.check(db));
    }

    @Test
    void aDamagedDbUnchangedStaysDamage(@TempDir Path dir) throws IOException {
        Path db = dir.resolve("db");
        Files.write(db, damaged());
        DbPageCheck check = new DbPageCheck(() -> Long.MAX_VALUE);
        assertThrows(DamagedFileException.class, () -> check.check(db));
        DamagedFileException again = assertThrows(DamagedFileException.class, () -> check.check(db));
        assertEquals("page 2", again.damage().where(), again.damage().describe());
    }

    @Test
    void anotherDbIsWalkedOnItsOwn(@TempDir Path dir) throws IOException {
        Path good = dir.resolve("good");
        Path bad = dir.resolve("bad");
        Files.write(good, healthy());
        Files.write(bad, damaged());
        DbPageCheck check = new DbPageCheck(() -> Long.MAX_VALUE);
        assertDoesNotThrow(() -> check.check(good));
        assertThrows(DamagedFileException.class, () -> check.check(bad));
        assertDoesNotThrow(() -> check.check(good));
    }
}
