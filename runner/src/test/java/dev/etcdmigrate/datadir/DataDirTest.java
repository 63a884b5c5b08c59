package dev.etcdmigrate.datadir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.datadir.DataDir.MalformedVersionFileException;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataDirTest {

    @TempDir
    Path dir;

    static final DataVersion V35 = DataVersion.parse("3.5.35/etcd3");
    static final DataVersion V36 = DataVersion.parse("3.6.16/etcd3");

    // ---- writeVersion ----------------------------------------------------------------------------

    @Test
    void writeVersionWritesExactlyTheTextOwnerOnly() throws IOException {
        DataDir d = new DataDir(dir);
        assertTrue(d.writeVersion(V35));
        Path file = dir.resolve("version.txt");
        assertArrayEquals("3.5.35/etcd3".getBytes(StandardCharsets.US_ASCII), Files.readAllBytes(file));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        assertFalse(Files.exists(dir.resolve("version.txt.tmp")));
        assertEquals(file, d.versionFile());
    }

    @Test
    void writeVersionReplacesOtherContentAtomically() throws IOException {
        DataDir d = new DataDir(dir);
        Path file = dir.resolve("version.txt");
        Files.writeString(file, "3.4.23/etcd3\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        Object inodeBefore = Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class)
                .fileKey();
        assertTrue(d.writeVersion(V36));
        assertEquals("3.6.16/etcd3", Files.readString(file));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        Object inodeAfter = Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class)
                .fileKey();
        assertNotEquals(inodeBefore, inodeAfter, "replaced by a rename, not rewritten in place");
        assertFalse(Files.exists(dir.resolve("version.txt.tmp")));
    }

    @Test
    void writeVersionLeavesAnUnchangedFileAlone() throws IOException {
        DataDir d = new DataDir(dir);
        Path file = dir.resolve("version.txt");
        assertTrue(d.writeVersion(V35));
        FileTime old = FileTime.from(Instant.parse("2001-02-03T04:05:06Z"));
        Files.setLastModifiedTime(file, old);
        Object inode = Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class)
                .fileKey();

        assertFalse(d.writeVersion(DataVersion.parse("3.5.35/etcd3\n")));

        assertEquals(old, Files.getLastModifiedTime(file));
        assertEquals(
                inode,
                Files.readAttributes(file, java.nio.file.attribute.BasicFileAttributes.class)
                        .fileKey());
        assertEquals("3.5.35/etcd3", Files.readString(file));
        assertFalse(Files.exists(dir.resolve("version.txt.tmp")));
    }

    @Test
    void writeVersionReplacesAStaleTempFile() throws IOException {
        Files.writeString(dir.resolve("version.txt.tmp"), "junk from a crash");
        assertTrue(new DataDir(dir).writeVersion(V35));
        assertEquals("3.5.35/etcd3", Files.readString(dir.resolve("version.txt")));
        assertFalse(Files.exists(dir.resolve("version.txt.tmp")));
    }

    // ---- readVersion -----------------------------------------------------------------------------

    @Test
    void readVersionOfAMissingFileIsEmpty() throws Exception {
        assertEquals(Optional.empty(), new DataDir(dir).readVersion());
    }

    @Test
    void readVersionRoundTrips() throws Exception {
        DataDir d = new DataDir(dir);
        d.writeVersion(V36);
        assertEquals(Optional.of(V36), d.readVersion());
        Files.writeString(d.versionFile(), "2.2.1/etcd2\n");
        assertEquals(Optional.of(DataVersion.parse("2.2.1/etcd2")), d.readVersion());
    }

    @Test
    void readVersionOfGarbageQuotesItAndSaysHowToFix() throws IOException {
        DataDir d = new DataDir(dir);
        Files.writeString(d.versionFile(), "v3.5.21 etcd3\n");
        MalformedVersionFileException e = assertThrows(MalformedVersionFileException.class, d::readVersion);
        assertTrue(e.getMessage().contains(d.versionFile().toString()), e.getMessage());
        assertTrue(e.getMessage().contains("'v3.5.21 etcd3\\n'"), e.getMessage());
        assertTrue(e.getMessage().contains("echo -n 3.5.35/etcd3 > " + d.versionFile()), e.getMessage());
        assertTrue(e.getMessage().contains("--initial-version"), e.getMessage());
    }

    @Test
    void readVersionOfAnEmptyFileIsMalformed() throws IOException {
        DataDir d = new DataDir(dir);
        Files.writeString(d.versionFile(), "");
        MalformedVersionFileException e = assertThrows(MalformedVersionFileException.class, d::readVersion);
        assertTrue(e.getMessage().contains("''"), e.getMessage()); // what was found, quoted: nothing
    }

    @Test
    void readVersionOfBinaryGarbageIsMalformed() throws IOException {
        DataDir d = new DataDir(dir);
        Files.write(d.versionFile(), new byte[] {(byte) 0xff, (byte) 0xfe, 0x00, '3', '.', '5'});
        MalformedVersionFileException e = assertThrows(MalformedVersionFileException.class, d::readVersion);
        assertTrue(e.getMessage().contains("echo -n 3.5.35/etcd3 > " + d.versionFile()), e.getMessage());
    }

    // ---- holdsData / inferStorage ----------------------------------------------------------------

    @Test
    void anEmptyDirHoldsNoData() throws IOException {
        assertFalse(new DataDir(dir).holdsData());
    }

    @Test
    void ourFilesVersionTxtAndLostFoundAreNotData() throws IOException {
        Files.writeString(dir.resolve("version.txt"), "3.5.35/etcd3");
        Files.writeString(dir.resolve("version.txt.tmp"), "3.5.35/etcd3");
        Files.createDirectories(dir.resolve(".etcd-migrate/backups"));
        Files.createDirectory(dir.resolve("lost+found"));
        DataDir d = new DataDir(dir);
        assertFalse(d.holdsData());
        assertEquals("", d.describeContent());
    }

    @Test
    void anythingElseIsData() throws IOException {
        DataDir d = new DataDir(dir);
        Files.createDirectory(dir.resolve("member"));
        assertTrue(d.holdsData());
        assertEquals("member", d.describeContent());
    }

    @Test
    void aStrayFileIsData() throws IOException {
        Files.writeString(dir.resolve(".version.txt.swp"), "x");
        assertTrue(new DataDir(dir).holdsData());
    }

    @Test
    void inferStorageLooksForTheMvccDatabase() throws IOException {
        DataDir d = new DataDir(dir);
        assertEquals(StorageApi.ETCD2, d.inferStorage());
        Files.createDirectories(dir.resolve("member/snap"));
        Files.createDirectories(dir.resolve("member/wal"));
        assertEquals(StorageApi.ETCD2, d.inferStorage());
        Files.createDirectory(dir.resolve("member/snap/db"));
        assertEquals(StorageApi.ETCD2, d.inferStorage(), "a directory named db is not the database");
        Files.delete(dir.resolve("member/snap/db"));
        Files.write(dir.resolve("member/snap/db"), new byte[16]);
        assertEquals(StorageApi.ETCD3, d.inferStorage());
    }

    // ---- the rest --------------------------------------------------------------------------------

    @Test
    void pathsAreAbsoluteAndNormal() {
        DataDir d = new DataDir(dir.resolve("a/../b/."));
        assertEquals(dir.resolve("b"), d.path());
        assertEquals(dir.resolve("b/member"), d.member());
        assertEquals(dir.resolve("b/.etcd-migrate/backups"), d.backupsDir());
        assertEquals(dir.resolve("b/.etcd-migrate/staging"), d.staging());
    }

    @Test
    void createOwnerOnlyMakesA0700Dir() throws IOException {
        DataDir d = new DataDir(dir.resolve("x/data"));
        assertFalse(d.exists());
        d.createOwnerOnly();
        assertTrue(d.exists());
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(d.path())));
    }

    @Test
    void freshWorkDirStartsEmptyAndOwnerOnly() throws IOException {
        DataDir d = new DataDir(dir);
        Path work = d.own().freshWorkDir(d.own().snapshotWork());
        assertEquals(dir.resolve(".etcd-migrate/snapshot"), work);
        Files.writeString(work.resolve("snapshot.db"), "left by a crash");
        Path again = d.own().freshWorkDir(d.own().snapshotWork());
        assertEquals(work, again);
        try (var s = Files.list(again)) {
            assertEquals(0, s.count());
        }
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(again)));
        assertEquals(
                "rwx------",
                PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(".etcd-migrate"))));
        Trees.deleteRecursively(work);
        assertFalse(Files.exists(work));
    }

    @Test
    void deletingAWorkDirDoesNotFollowSymlinksOutOfTheTree() throws IOException {
        Path outside = Files.createDirectory(dir.resolve("outside"));
        Files.writeString(outside.resolve("precious"), "keep");
        DataDir d = new DataDir(dir.resolve("data"));
        Path work = d.own().freshWorkDir(d.own().snapshotWork());
        Files.createSymbolicLink(work.resolve("link"), outside);
        Trees.deleteRecursively(work);
        assertFalse(Files.exists(work, LinkOption.NOFOLLOW_LINKS));
        assertEquals("keep", Files.readString(outside.resolve("precious")));
    }
}
