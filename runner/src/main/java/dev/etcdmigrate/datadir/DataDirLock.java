package dev.etcdmigrate.datadir;

import dev.etcdmigrate.event.RunEvent;
import dev.etcdmigrate.log.Log;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * An exclusive lock on a data dir (a POSIX record lock on .etcd-migrate/lock), so two runners (a fast-restarting
 * static pod and an operator's docker run) never migrate the same data at once. The kernel drops
 * it when the holder dies; exec closes it, and etcd's own WAL lock takes over. POSIX (fcntl) locks
 * belong to the process, and closing any descriptor of the file drops all of them; so within one JVM
 * (tests run several runners in one) a second acquire first claims the file in {@link #CLAIMED} and,
 * while another holder of this JVM has it, waits without opening a descriptor of its own.
 */
public final class DataDirLock implements AutoCloseable {

    private static final Duration POLL = Duration.ofMillis(100);
    /** Lock files this JVM holds or is taking (absolute, normalised paths). */
    private static final Set<Path> CLAIMED = ConcurrentHashMap.newKeySet();

    private final Path claimed;
    private final FileChannel channel;
    private final FileLock lock;

    private DataDirLock(Path claimed, FileChannel channel, FileLock lock) {
        this.claimed = claimed;
        this.channel = channel;
        this.lock = lock;
    }

    public static DataDirLock acquire(DataDir dataDir, Duration timeout, Log log)
            throws IOException, InterruptedException {
        Permissions.ownerOnlyDir(dataDir.own().path());
        Path file = dataDir.own().lock();
        Path key = file.toAbsolutePath().normalize();
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean announced = false;
        FileChannel channel = null;
        boolean claimed = false;
        try {
            while (true) {
                if (!claimed) {
                    claimed = CLAIMED.add(key);
                }
                if (claimed && channel == null) {
                    channel = FileChannel.open(
                            file,
                            Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE),
                            PosixFilePermissions.asFileAttribute(Permissions.FILE));
                    if (!Files.getPosixFilePermissions(file).equals(Permissions.FILE)) {
                        Files.setPosixFilePermissions(file, Permissions.FILE); // one an older runner made 0644
                    }
                }
                FileLock lock = channel == null ? null : channel.tryLock();
                if (lock != null) {
                    return new DataDirLock(key, channel, lock);
                }
                if (System.nanoTime() >= deadline) {
                    throw new IOException("another etcd-migrate holds the lock " + file
                            + " and did not release it within " + timeout.toSeconds()
                            + " s; is a second runner working on " + dataDir.path() + "?");
                }
                if (!announced) {
                    log.emit(new RunEvent.LockWaiting(file.toString(), timeout.toSeconds()));
                    announced = true;
                }
                Thread.sleep(POLL); // poll interval of a deadline-bound wait
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            // Only a claimer opened a descriptor, so closing it drops no lock of another holder in this JVM.
            try {
                if (channel != null) {
                    channel.close();
                }
            } finally {
                if (claimed) {
                    CLAIMED.remove(key);
                }
            }
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        try {
            lock.release();
        } finally {
            try {
                channel.close();
            } finally {
                CLAIMED.remove(claimed);
            }
        }
    }
}
