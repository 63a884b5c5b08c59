package dev.etcdmigrate.datadir;

import dev.etcdmigrate.event.RunEvent;
import dev.etcdmigrate.log.Log;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

/**
 * An exclusive lock on a data dir (a POSIX record lock on .etcd-migrate/lock), so two runners (a fast-restarting
 * static pod and an operator's docker run) never migrate the same data at once. The kernel drops
 * it when the holder dies; exec closes it, and etcd's own WAL lock takes over. Within one JVM the
 * lock is held for the whole JVM: a second acquire there waits, and closing its channel on timeout
 * drops the first holder's kernel lock too (POSIX semantics), so run one runner per JVM.
 */
public final class DataDirLock implements AutoCloseable {

    private static final Duration POLL = Duration.ofMillis(100);

    private final FileChannel channel;
    private final FileLock lock;

    private DataDirLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    public static DataDirLock acquire(DataDir dataDir, Duration timeout, Log log)
            throws IOException, InterruptedException {
        Permissions.ownerOnlyDir(dataDir.own().path());
        Path file = dataDir.own().lock();
        FileChannel channel = FileChannel.open(
                file,
                java.util.Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE),
                java.nio.file.attribute.PosixFilePermissions.asFileAttribute(Permissions.FILE));
        if (!java.nio.file.Files.getPosixFilePermissions(file).equals(Permissions.FILE)) {
            java.nio.file.Files.setPosixFilePermissions(file, Permissions.FILE); // one an older runner made 0644
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean announced = false;
        try {
            while (true) {
                FileLock lock;
                try {
                    lock = channel.tryLock();
                } catch (OverlappingFileLockException e) {
                    lock = null; // held by this JVM already (tests run several runners in one JVM)
                }
                if (lock != null) {
                    return new DataDirLock(channel, lock);
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
            channel.close();
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        try {
            lock.release();
        } finally {
            channel.close();
        }
    }
}
