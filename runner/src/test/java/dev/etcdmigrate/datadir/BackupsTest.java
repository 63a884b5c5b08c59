package dev.etcdmigrate.datadir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.version.DataVersion;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BackupsTest {

    static final DataVersion V37 = DataVersion.parse("3.7.3/etcd3");
    static final Instant NOW = Instant.parse("2025-06-01T12:00:00Z");

    @TempDir
    Path tmp;

    Path data;
    Path shared;
    DataDir dataDir;
    ByteArrayOutputStream logged;
    List<dev.etcdmigrate.event.Event> events;
    Log log;

    @BeforeEach
    void setUp() throws IOException {
        data = Files.createDirectories(tmp.resolve("data"));
        shared = tmp.resolve("shared");
        dataDir = new DataDir(data);
        logged = new ByteArrayOutputStream();
        events = new java.util.ArrayList<>();
        log = Log.text(new PrintStream(logged, true, StandardCharsets.UTF_8)).subscribe(events::add);
        Files.createDirectories(data.resolve("member/snap"));
        Files.writeString(data.resolve("member/snap/db"), "live data");
        Files.setPosixFilePermissions(data.resolve("member/snap/db"), PosixFilePermissions.fromString("rw-r--r--"));
        Files.setPosixFilePermissions(data.resolve("member/snap"), PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    Backups backups(Optional<Path> location, int retention, Instant now) {
        return new Backups(dataDir, location, retention, "m1", log, Clock.fixed(now, ZoneOffset.UTC));
    }

    /** A complete backup as a run would have left it. */
    static Path backupAt(Path location, String name) throws IOException {
        Path b = Files.createDirectories(location.resolve(name).resolve("member/snap"));
        Files.writeString(b.resolve("db"), name);
        Files.writeString(location.resolve(name).resolve("version.txt"), "3.7.3/etcd3");
        return location.resolve(name);
    }

    static List<String> names(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) return List.of();
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    static void assertOwnerOnly(Path backup) throws IOException {
        try (Stream<Path> walk = Files.walk(backup)) {
            for (Path p : walk.toList()) {
                String mode =
                        PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
                assertEquals(Files.isDirectory(p) ? "rwx------" : "rw-------", mode, p.toString());
            }
        }
    }

    String log() {
        return logged.toString(StandardCharsets.UTF_8);
    }

    @Test
    void backupsOfOneDataDirWithinOneSecondAreOrderedByTheirCounterWhateverTheirVersion() throws Exception {
        Backups b = backups(Optional.empty(), 5, NOW);
        Path first = b.copyOf(dataDir.member(), V37);
        Path second = b.copyOf(dataDir.member(), DataVersion.parse("3.6.16/etcd3"));
        Path third = b.copyOf(dataDir.member(), DataVersion.parse("3.5.35/etcd3"));
        assertTrue(second.getFileName().toString().endsWith("-3.6.16-etcd3.1"), second.toString());
        assertTrue(third.getFileName().toString().endsWith("-3.5.35-etcd3.2"), third.toString());
        assertEquals(List.of(first, second, third), BackupNames.sortedOldestFirst(List.of(third, first, second)));
    }

    @Test
    void aNameCarriesTheStampTheMemberTheDataDirAndTheVersion() throws IOException {
        Backups b = backups(Optional.empty(), 3, NOW);
        String name = b.newName(V37);
        assertEquals("20250601T120000Z-m1-" + BackupNames.pathHash(data) + "-3.7.3-etcd3", name);
        assertTrue(BackupNames.pathHash(data).matches("[0-9a-f]{8}"), BackupNames.pathHash(data));
        assertNotEquals(
                BackupNames.pathHash(data),
                BackupNames.pathHash(tmp.resolve("data-events")),
                "main and events data dirs differ");
        assertEquals("etcd-a_b_c", BackupNames.safeName("etcd-a b/c"));
        assertEquals("member", BackupNames.safeName(""));
    }

    @Test
    void twoBackupsInOneSecondGetACounterAndSortInOrder() throws Exception {
        Backups b = backups(Optional.empty(), 20, NOW);
        Path first = b.copyOf(dataDir.member(), V37);
        Path second = b.copyOf(dataDir.member(), V37);
        assertEquals(first.getFileName() + ".1", second.getFileName().toString());
        List<Path> unsorted = List.of(
                Path.of("20250601T120000Z-x.10"),
                Path.of("20250601T120000Z-x.2"),
                Path.of("20250601T120000Z-x"),
                Path.of("20240101T000000Z-x.3"));
        assertEquals(
                List.of(
                        Path.of("20240101T000000Z-x.3"),
                        Path.of("20250601T120000Z-x"),
                        Path.of("20250601T120000Z-x.2"),
                        Path.of("20250601T120000Z-x.10")),
                BackupNames.sortedOldestFirst(unsorted));
    }

    @Test
    void aCopyIsOwnerOnlyHoldsVersionTxtAndLeavesTheMemberAlone() throws Exception {
        Backups b = backups(Optional.empty(), 3, NOW);
        Path backup = b.copyOf(dataDir.member(), V37);

        assertEquals(dataDir.backupsDir(), backup.getParent());
        assertEquals("live data", Files.readString(backup.resolve("member/snap/db")));
        assertEquals("3.7.3/etcd3", Files.readString(backup.resolve("version.txt")));
        assertOwnerOnly(backup);
        assertEquals(List.of(backup.getFileName().toString()), names(dataDir.backupsDir()), "no .partial left");
        assertEquals(
                "rw-r--r--",
                PosixFilePermissions.toString(Files.getPosixFilePermissions(data.resolve("member/snap/db"))),
                "the live member dir is not touched");
        assertEquals(
                List.of(new dev.etcdmigrate.event.BackupEvent.BackupMade(backup.toString(), "3.7.3/etcd3", "copied")),
                events);
    }

    @Test
    void retentionDeletesTheOldestBeyondTheCountOneLogLineEach() throws Exception {
        Path own = dataDir.backupsDir();
        Path oldest = backupAt(own, "20240101T000000Z-3.5.35-etcd3"); // a name from before the identity was added
        Path older = backupAt(own, "20240201T000000Z-m1-" + BackupNames.pathHash(data) + "-3.6.16-etcd3");
        Path newer = backupAt(own, "20240301T000000Z-m1-" + BackupNames.pathHash(data) + "-3.6.16-etcd3");

        Path made = backups(Optional.empty(), 2, NOW).copyOf(dataDir.member(), V37);

        assertEquals(List.of(newer.getFileName().toString(), made.getFileName().toString()), names(own));
        assertTrue(
                events.contains(new dev.etcdmigrate.event.BackupEvent.BackupDeleted(oldest.toString(), 2)),
                events.toString());
        assertTrue(
                events.contains(new dev.etcdmigrate.event.BackupEvent.BackupDeleted(older.toString(), 2)),
                events.toString());
        assertEquals(
                2,
                events.stream()
                        .filter(e -> e instanceof dev.etcdmigrate.event.BackupEvent.BackupDeleted)
                        .count(),
                log());
    }

    @Test
    void retentionNeverDeletesTheBackupJustMadeEvenWhenTheClockWentBack() throws Exception {
        Path own = dataDir.backupsDir();
        backupAt(own, "20300101T000000Z-m1-" + BackupNames.pathHash(data) + "-3.6.16-etcd3");

        Path made = backups(Optional.empty(), 1, NOW).copyOf(dataDir.member(), V37);

        assertEquals(List.of(made.getFileName().toString()), names(own));
    }

    /** Found by PowerCutIT: a backup dir a crashed swap left empty is debris, not one of the kept backups. */
    @Test
    void retentionDoesNotCountABackupDirWithoutMember() throws Exception {
        Path own = dataDir.backupsDir();
        backupAt(own, "20240101T000000Z-3.7.3-etcd3");
        backupAt(own, "20240102T000000Z-3.7.3-etcd3");
        Path empty = Files.createDirectories(own.resolve("20240103T000000Z-3.7.3-etcd3"));
        Files.writeString(empty.resolve("version.txt"), "3.7.3/etcd3"); // a swap crashed before member/ was moved in
        Path made = backupAt(own, "20240104T000000Z-3.7.3-etcd3");

        backups(Optional.empty(), 3, NOW).retain(made);

        assertEquals(
                List.of(
                        "20240101T000000Z-3.7.3-etcd3",
                        "20240102T000000Z-3.7.3-etcd3",
                        "20240103T000000Z-3.7.3-etcd3",
                        "20240104T000000Z-3.7.3-etcd3"),
                names(own),
                "no complete backup deleted while only 3 are complete");
    }

    /** Found by PowerCutIT: a power cut can undo the delete of a file-clone probe; recovery removes it. */
    @Test
    void recoverDeletesAFileCloneProbeACrashLeft() throws Exception {
        Path probe = Files.writeString(data.resolve(FileClone.PROBE_PREFIX + "12345"), "x");

        backups(Optional.empty(), 3, NOW).recover();

        assertFalse(Files.exists(probe));
        assertTrue(
                events.stream()
                        .anyMatch(e -> e instanceof dev.etcdmigrate.event.StepEvent.Recovered r
                                && r.what().equals("clone-probe")
                                && r.path().equals(probe.toString())),
                log());
    }

    /** What inspect lists and a restore can use: this data dir's complete backups, oldest first, nothing else. */
    @Test
    void theCompleteBackupsAreThisDataDirsWithAMemberDirOldestFirst() throws Exception {
        Path mine2 = backupAt(shared, "20240102T000000Z-m1-" + BackupNames.pathHash(data) + "-3.6.16-etcd3");
        Path mine1 = backupAt(shared, "20240101T000000Z-m1-" + BackupNames.pathHash(data) + "-3.5.35-etcd3");
        backupAt(shared, "20240101T000000Z-m2-" + BackupNames.pathHash(data) + "-3.6.16-etcd3");
        backupAt(shared, "20240101T000000Z-m1-" + BackupNames.pathHash(tmp.resolve("events")) + "-3.6.16-etcd3");
        backupAt(shared, "20240103T000000Z-m1-" + BackupNames.pathHash(data) + "-3.6.16-etcd3.partial");
        Files.createDirectories(shared.resolve("20240104T000000Z-m1-" + BackupNames.pathHash(data) + "-3.7.3-etcd3"));
        Files.createDirectories(shared.resolve("notes"));

        assertEquals(List.of(mine1, mine2), backups(Optional.of(shared), 3, NOW).complete());
        assertEquals(List.of(), backups(Optional.empty(), 3, NOW).complete(), "none in the data dir's own");
    }

    @Test
    void retentionBelowOneIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> backups(Optional.empty(), 0, NOW));
    }

    @Test
    void aSharedLocationCountsAndCleansOnlyThisDataDirsBackups() throws Exception {
        Path theirs = backupAt(shared, "20240101T000000Z-m2-" + BackupNames.pathHash(data) + "-3.6.16-etcd3");
        Path sameMemberOtherDir = backupAt(
                shared, "20240101T000000Z-m1-" + BackupNames.pathHash(tmp.resolve("events")) + "-3.6.16-etcd3");
        Path theirPartial = backupAt(shared, "20240102T000000Z-m2-00000000-3.6.16-etcd3.partial");
        Path mine = backupAt(shared, "20240101T000000Z-m1-" + BackupNames.pathHash(data) + "-3.6.16-etcd3");
        Backups b = backups(Optional.of(shared), 1, NOW);

        b.recover();
        Path made = b.copyOf(dataDir.member(), V37);

        assertTrue(
                Files.isDirectory(theirs) && Files.isDirectory(sameMemberOtherDir) && Files.isDirectory(theirPartial),
                "another data dir's backups, complete or not, are not ours to delete");
        assertFalse(Files.exists(mine), "ours beyond the count is deleted");
        assertTrue(Files.isDirectory(made));
        assertFalse(Files.exists(dataDir.backupsDir()), "nothing kept in the data dir");
    }

    @Test
    void recoverDeletesDebrisAndMovesBackupsLeftInTheDataDir() throws Exception {
        Path own = dataDir.backupsDir();
        backupAt(own, "20240101T000000Z-3.5.35-etcd3");
        Path half = Files.createDirectories(
                own.resolve("20240102T000000Z-m1-" + BackupNames.pathHash(data) + "-3.5.35-etcd3"));
        Files.writeString(half.resolve("version.txt"), "3.5.35/etcd3"); // crashed before member/ was moved in
        backupAt(own, "20240103T000000Z-m1-" + BackupNames.pathHash(data) + "-3.5.35-etcd3.partial");
        backupAt(shared, "20240104T000000Z-m1-" + BackupNames.pathHash(data) + "-3.5.35-etcd3.partial");
        Backups b = backups(Optional.of(shared), 3, NOW);

        b.recover();

        String relocated = "20240101T000000Z-m1-" + BackupNames.pathHash(data) + "-3.5.35-etcd3";
        assertEquals(List.of(relocated), names(shared));
        assertEquals(
                "20240101T000000Z-3.5.35-etcd3",
                Files.readString(shared.resolve(relocated).resolve("member/snap/db")));
        assertOwnerOnly(shared.resolve(relocated));
        assertFalse(Files.exists(own), "nothing left in .etcd-migrate/backups");
        List<dev.etcdmigrate.event.StepEvent.Recovered> recovered = events.stream()
                .filter(e -> e instanceof dev.etcdmigrate.event.StepEvent.Recovered)
                .map(e -> (dev.etcdmigrate.event.StepEvent.Recovered) e)
                .toList();
        assertEquals(
                2,
                recovered.stream()
                        .filter(r ->
                                r.what().equals("partial-backup") && r.action().equals("deleted"))
                        .count(),
                log());
        assertTrue(
                recovered.stream()
                        .anyMatch(r ->
                                r.what().equals("empty-backup-dir") && r.path().equals(half.toString())),
                log());
        assertTrue(
                recovered.stream()
                        .anyMatch(r -> r.what().equals("backup")
                                && r.action().equals("moved")
                                && r.path().equals(shared.resolve(relocated).toString())),
                log());
    }

    @Test
    void recoverFinishesARelocationInterruptedAfterItsRename() throws Exception {
        String name = "20240101T000000Z-m1-" + BackupNames.pathHash(data) + "-3.5.35-etcd3";
        backupAt(dataDir.backupsDir(), name);
        Path copied = backupAt(shared, name);
        Files.writeString(copied.resolve("member/snap/db"), "the renamed copy");

        backups(Optional.of(shared), 3, NOW).recover();

        assertEquals(
                "the renamed copy",
                Files.readString(copied.resolve("member/snap/db")),
                "the complete copy is kept, not redone");
        assertFalse(Files.exists(dataDir.backupsDir()));
    }

    @Test
    void recoverInTheDataDirMakesBackupsOwnerOnlyAndKeepsThem() throws Exception {
        Path backup =
                backupAt(dataDir.backupsDir(), "20240101T000000Z-m1-" + BackupNames.pathHash(data) + "-3.5.35-etcd3");
        Files.setPosixFilePermissions(backup.resolve("member/snap/db"), PosixFilePermissions.fromString("rw-r--r--"));

        backups(Optional.empty(), 1, NOW).recover();

        assertOwnerOnly(backup);
        assertEquals(
                "20240101T000000Z-m1-" + BackupNames.pathHash(data) + "-3.5.35-etcd3",
                Files.readString(backup.resolve("member/snap/db")));
    }

    @Test
    void aLocationInsideTheDataDirOrUnwritableIsRefused() throws Exception {
        var inside = assertThrows(
                DataDir.UnusableDataDirException.class,
                () -> backups(Optional.of(data.resolve("backups")), 3, NOW).refuseUnusableLocation());
        assertTrue(inside.getMessage().contains(data.resolve("backups").toString()), inside.getMessage());
        assertTrue(inside.getMessage().contains("--backup-dir"), inside.getMessage()); // the way out
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        var notDir = assertThrows(
                DataDir.UnusableDataDirException.class,
                () -> backups(Optional.of(file.resolve("backups")), 3, NOW).refuseUnusableLocation());
        assertTrue(notDir.getMessage().contains(file.toString()), notDir.getMessage());
        backups(Optional.of(tmp.resolve("new/backups")), 3, NOW).refuseUnusableLocation();
        backups(Optional.of(dataDir.backupsDir()), 3, NOW).refuseUnusableLocation();
        assertFalse(Files.exists(tmp.resolve("new")), "checking creates nothing");
    }
}
