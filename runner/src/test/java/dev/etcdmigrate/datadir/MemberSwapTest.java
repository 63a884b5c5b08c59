package dev.etcdmigrate.datadir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.version.DataVersion;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MemberSwapTest {

    static final DataVersion OLD = DataVersion.parse("3.5.35/etcd3");
    static final DataVersion NEW = DataVersion.parse("3.4.23/etcd3");

    @TempDir
    Path dir;

    DataDir dataDir;
    ByteArrayOutputStream logged;
    MemberSwap swap;
    final List<dev.etcdmigrate.event.Event> events = new java.util.ArrayList<>();

    @BeforeEach
    void setUp() throws IOException {
        dataDir = new DataDir(dir);
        logged = new ByteArrayOutputStream();
        Log log =
                Log.text(new PrintStream(logged, true, StandardCharsets.UTF_8)).subscribe(events::add);
        swap = new MemberSwap(dataDir, new Backups(dataDir, Optional.empty(), 3, "m1", log), log);
        // the member the data dir holds now
        Files.createDirectories(dir.resolve("member/snap"));
        Files.writeString(dir.resolve("member/snap/db"), "old data");
        dataDir.writeVersion(OLD);
    }

    /** What a restore tool does: write a member/ into the staged data dir. */
    Path stage() throws IOException {
        Path staged = swap.prepare();
        assertEquals(dir.resolve(".etcd-migrate/staging/data"), staged);
        Files.createDirectories(staged.resolve("member/snap"));
        Files.writeString(staged.resolve("member/snap/db"), "new data");
        return staged;
    }

    List<Path> backups() throws IOException {
        if (!Files.isDirectory(dataDir.backupsDir())) return List.of();
        try (Stream<Path> s = Files.list(dataDir.backupsDir())) {
            return s.sorted().toList();
        }
    }

    @Test
    void swapMovesTheStagedMemberInAndKeepsTheOldOne() throws Exception {
        stage();
        swap.markComplete(NEW);
        assertEquals("3.4.23/etcd3", Files.readString(dir.resolve(".etcd-migrate/staging/complete")));

        Path backup = swap.swap(OLD, NEW);

        assertEquals("new data", Files.readString(dir.resolve("member/snap/db")));
        assertNotNull(backup);
        assertEquals(dataDir.backupsDir(), backup.getParent());
        assertTrue(backup.getFileName().toString().endsWith("-3.5.35-etcd3"), backup.toString());
        assertEquals("old data", Files.readString(backup.resolve("member/snap/db")));
        assertEquals(
                "3.5.35/etcd3",
                Files.readString(backup.resolve("version.txt")),
                "what a restore writes into version.txt");
        assertEquals(List.of(backup), backups());
        assertEquals(Optional.of(NEW), dataDir.readVersion());
        assertFalse(Files.exists(dataDir.staging()), "staging is removed once the swap is done");
    }

    @Test
    void theSwappedOutMemberBecomesOwnerOnly() throws Exception {
        // an old etcd may have written looser modes; the backup holds the cluster's secrets
        Files.setPosixFilePermissions(
                dir.resolve("member/snap/db"), java.nio.file.attribute.PosixFilePermissions.fromString("rw-r--r--"));
        Files.setPosixFilePermissions(
                dir.resolve("member/snap"), java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        stage();
        swap.markComplete(NEW);

        Path backup = swap.swap(OLD, NEW);

        BackupsTest.assertOwnerOnly(backup);
    }

    @Test
    void aSwapWithAnotherBackupLocationLeavesNothingInTheDataDir() throws Exception {
        Path elsewhere = dir.resolveSibling(dir.getFileName() + "-backups");
        Log log = Log.text(new PrintStream(logged, true, StandardCharsets.UTF_8));
        MemberSwap relocating =
                new MemberSwap(dataDir, new Backups(dataDir, Optional.of(elsewhere), 3, "m1", log), log);
        try {
            stage();
            relocating.markComplete(NEW);

            Path backup = relocating.swap(OLD, NEW);

            assertEquals(elsewhere, backup.getParent());
            assertEquals("old data", Files.readString(backup.resolve("member/snap/db")));
            assertEquals("3.5.35/etcd3", Files.readString(backup.resolve("version.txt")));
            BackupsTest.assertOwnerOnly(backup);
            assertFalse(Files.exists(dataDir.backupsDir()), "moved out of .etcd-migrate/backups");
            assertEquals("new data", Files.readString(dir.resolve("member/snap/db")));
        } finally {
            Trees.deleteRecursively(elsewhere);
        }
    }

    @Test
    void twoSwapsKeepTwoBackups() throws Exception {
        stage();
        swap.markComplete(NEW);
        Path first = swap.swap(OLD, NEW);
        stage();
        swap.markComplete(NEW);
        Path second = swap.swap(NEW, NEW);
        assertFalse(first.equals(second));
        assertEquals(2, backups().size());
        assertEquals("old data", Files.readString(first.resolve("member/snap/db")));
        assertEquals("new data", Files.readString(second.resolve("member/snap/db")));
    }

    @Test
    void markCompleteNeedsAStagedMember() throws IOException {
        swap.prepare();
        IOException e = assertThrows(IOException.class, () -> swap.markComplete(NEW));
        assertTrue(e.getMessage().contains(swap.stagedMember().toString()), e.getMessage()); // where it found nothing
        assertFalse(Files.exists(dir.resolve(".etcd-migrate/staging/complete")));
    }

    @Test
    void prepareDiscardsAnOldStaging() throws IOException {
        stage();
        swap.markComplete(NEW);
        Path staged = swap.prepare();
        assertFalse(Files.exists(staged), "the restore tool creates the data dir itself");
        assertFalse(Files.exists(dir.resolve(".etcd-migrate/staging/complete")));
        assertTrue(Files.isDirectory(dataDir.staging()));
    }

    @Test
    void recoverWithoutStagingDoesNothing() throws Exception {
        assertEquals(Optional.empty(), swap.recover());
        assertEquals("old data", Files.readString(dir.resolve("member/snap/db")));
        assertEquals(Optional.of(OLD), dataDir.readVersion());
    }

    @Test
    void recoverDiscardsAnIncompleteStaging() throws Exception {
        stage(); // the restore crashed before markComplete

        assertEquals(Optional.empty(), swap.recover());

        assertFalse(Files.exists(dataDir.staging()));
        assertEquals("old data", Files.readString(dir.resolve("member/snap/db")));
        assertEquals(Optional.of(OLD), dataDir.readVersion());
        assertEquals(List.of(), backups());
        assertEquals(
                List.of(new dev.etcdmigrate.event.StepEvent.Recovered(
                        "staging",
                        dataDir.staging().toString(),
                        "discarded",
                        "discarding an incomplete staging dir a previous run left: " + dataDir.staging())),
                events);
    }

    @Test
    void recoverFinishesACompleteStagingThatWasNotSwappedYet() throws Exception {
        stage();
        swap.markComplete(NEW); // crash right after the marker

        assertEquals(Optional.of(NEW), swap.recover());

        assertEquals("new data", Files.readString(dir.resolve("member/snap/db")));
        assertEquals(1, backups().size());
        assertEquals("old data", Files.readString(backups().getFirst().resolve("member/snap/db")));
        assertEquals(Optional.of(NEW), dataDir.readVersion());
        assertFalse(Files.exists(dataDir.staging()));
    }

    @Test
    void recoverFinishesASwapInterruptedAfterTheFirstRename() throws Exception {
        stage();
        swap.markComplete(NEW);
        // the first rename of swap(): member/ -> backups/<stamp>/member; then the crash
        Path backup = Files.createDirectories(dataDir.backupsDir().resolve("20250101T000000Z-3.5.35-etcd3"));
        Files.move(dataDir.member(), backup.resolve("member"), StandardCopyOption.ATOMIC_MOVE);
        assertFalse(Files.exists(dataDir.member()));

        assertEquals(Optional.of(NEW), swap.recover());

        assertEquals("new data", Files.readString(dir.resolve("member/snap/db")));
        assertEquals(List.of(backup), backups(), "no second backup: there was no member/ to keep");
        assertEquals("old data", Files.readString(backup.resolve("member/snap/db")));
        assertEquals(Optional.of(NEW), dataDir.readVersion());
        assertFalse(Files.exists(dataDir.staging()));
    }

    @Test
    void recoverFinishesASwapInterruptedAfterBothRenames() throws Exception {
        stage();
        swap.markComplete(NEW);
        Path backup = Files.createDirectories(dataDir.backupsDir().resolve("20250101T000000Z-3.5.35-etcd3"));
        Files.move(dataDir.member(), backup.resolve("member"), StandardCopyOption.ATOMIC_MOVE);
        Files.move(swap.stagedMember(), dataDir.member(), StandardCopyOption.ATOMIC_MOVE);
        // crash before version.txt was written

        assertEquals(Optional.of(NEW), swap.recover());

        assertEquals("new data", Files.readString(dir.resolve("member/snap/db")));
        assertEquals(List.of(backup), backups());
        assertEquals(Optional.of(NEW), dataDir.readVersion());
        assertFalse(Files.exists(dataDir.staging()));
    }

    @Test
    void recoverAfterTheSwapWroteVersionTxtOnlyCleansUp() throws Exception {
        stage();
        swap.markComplete(NEW);
        Path backup = Files.createDirectories(dataDir.backupsDir().resolve("20250101T000000Z-3.5.35-etcd3"));
        Files.move(dataDir.member(), backup.resolve("member"), StandardCopyOption.ATOMIC_MOVE);
        Files.move(swap.stagedMember(), dataDir.member(), StandardCopyOption.ATOMIC_MOVE);
        dataDir.writeVersion(NEW);

        assertEquals(Optional.of(NEW), swap.recover());

        assertEquals("new data", Files.readString(dir.resolve("member/snap/db")));
        assertEquals(Optional.of(NEW), dataDir.readVersion());
        assertFalse(Files.exists(dataDir.staging()));
        assertEquals(Optional.empty(), swap.recover(), "a second recover has nothing to do");
    }

    @Test
    void recoverDiscardsAStagingWithAnEmptyMarker() throws Exception {
        stage();
        Files.writeString(dataDir.staging().resolve("complete"), "");

        assertEquals(Optional.empty(), swap.recover());

        assertFalse(Files.exists(dataDir.staging()));
        assertEquals("old data", Files.readString(dir.resolve("member/snap/db")));
        assertEquals(Optional.of(OLD), dataDir.readVersion());
    }

    @Test
    void swapWithoutAnOldMemberReturnsNoBackup() throws Exception {
        stage();
        swap.markComplete(NEW);
        Files.writeString(dataDir.member().resolve("snap/db"), "x");
        try (Stream<Path> walk = Files.walk(dataDir.member())) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) Files.delete(p);
        }
        assertNull(swap.swap(OLD, NEW));
        assertEquals("new data", Files.readString(dir.resolve("member/snap/db")));
        assertEquals(List.of(), backups());
    }
}
