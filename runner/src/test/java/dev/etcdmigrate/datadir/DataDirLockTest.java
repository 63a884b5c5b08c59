package dev.etcdmigrate.datadir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.log.Log;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataDirLockTest {

    @TempDir
    Path dir;

    final ByteArrayOutputStream logged = new ByteArrayOutputStream();
    final Log log = Log.text(new PrintStream(logged, true, StandardCharsets.UTF_8));

    @Test
    void lockFileLivesInOurOwnOwnerOnlyDir() throws Exception {
        DataDir d = new DataDir(dir);
        try (DataDirLock lock = DataDirLock.acquire(d, Duration.ofSeconds(5), log)) {
            assertTrue(Files.isRegularFile(dir.resolve(".etcd-migrate/lock")));
            assertEquals(
                    "rwx------",
                    PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(".etcd-migrate"))));
            try (var entries = Files.list(dir)) {
                assertEquals(List.of(dir.resolve(".etcd-migrate")), entries.toList(), "nothing else in the data dir");
            }
            assertFalse(d.holdsData(), "the lock is not etcd data");
        }
    }

    @Test
    void acquireCloseAcquire() throws Exception {
        DataDir d = new DataDir(dir);
        DataDirLock first = DataDirLock.acquire(d, Duration.ofSeconds(5), log);
        first.close();
        try (DataDirLock second = DataDirLock.acquire(d, Duration.ofSeconds(5), log)) {
            assertTrue(Files.exists(dir.resolve(".etcd-migrate/lock")));
        }
        DataDirLock third = DataDirLock.acquire(d, Duration.ofSeconds(5), log);
        third.close();
        assertEquals("", logged.toString(StandardCharsets.UTF_8), "no waiting was announced");
    }

    @Test
    void createsTheDataDirWhenMissing() throws Exception {
        DataDir d = new DataDir(dir.resolve("new/data"));
        try (DataDirLock lock = DataDirLock.acquire(d, Duration.ofSeconds(5), log)) {
            assertTrue(Files.isRegularFile(dir.resolve("new/data/.etcd-migrate/lock")));
        }
    }

    /** In one JVM a held lock shows up as an overlap; a zero timeout gives up at once, without waiting. */
    @Test
    void aHeldLockTimesOutWithAMessage() throws Exception {
        DataDir d = new DataDir(dir);
        try (DataDirLock held = DataDirLock.acquire(d, Duration.ofSeconds(5), log)) {
            IOException e = assertThrows(IOException.class, () -> DataDirLock.acquire(d, Duration.ZERO, log));
            assertTrue(
                    e.getMessage().contains("another etcd-migrate holds the lock " + dir.resolve(".etcd-migrate/lock")),
                    e.getMessage());
            assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
        }
        try (DataDirLock again = DataDirLock.acquire(d, Duration.ZERO, log)) {
            assertTrue(Files.exists(dir.resolve(".etcd-migrate/lock")), "released by close");
        }
    }

    /** This process's kernel locks on the file, as /proc/locks lists them (Linux). */
    static List<String> kernelLocks(Path file) throws IOException {
        long inode = (long) Files.getAttribute(file, "unix:ino");
        String pid = Long.toString(ProcessHandle.current().pid());
        return Files.readAllLines(Path.of("/proc/locks")).stream()
                .filter(l -> l.contains(":" + inode + " "))
                .filter(l -> List.of(l.trim().split("\\s+")).contains(pid))
                .toList();
    }

    @Test
    void theHeldLockIsAKernelLock() throws Exception {
        Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/locks")), "needs Linux /proc/locks");
        DataDir d = new DataDir(dir);
        Path file = dir.resolve(".etcd-migrate/lock");
        try (DataDirLock held = DataDirLock.acquire(d, Duration.ofSeconds(5), log)) {
            assertEquals(1, kernelLocks(file).size(), "a second process would see the lock");
        }
        assertEquals(List.of(), kernelLocks(file), "released by close");
    }

    @Test
    void aTimedOutAcquireDoesNotDropTheHoldersKernelLock() throws Exception {
        Assumptions.assumeTrue(Files.isReadable(Path.of("/proc/locks")), "needs Linux /proc/locks");
        DataDir d = new DataDir(dir);
        Path file = dir.resolve(".etcd-migrate/lock");
        try (DataDirLock held = DataDirLock.acquire(d, Duration.ofSeconds(5), log)) {
            assertThrows(IOException.class, () -> DataDirLock.acquire(d, Duration.ZERO, log));
            assertEquals(1, kernelLocks(file).size(), "the holder's lock must still keep other processes out");
        }
    }
}
