package dev.etcdmigrate.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The largest number of bytes a tree held while it was watched: its regular files' sizes summed every
 * 50 ms by a daemon thread (etcd preallocates WAL segments, so sizes are what the disk holds).
 */
final class DiskPeak implements AutoCloseable {

    private final Path root;
    private final AtomicLong peak = new AtomicLong();
    private final Thread thread;
    private volatile boolean stop;

    private DiskPeak(Path root) {
        this.root = root;
        this.thread = Thread.ofPlatform().daemon().name("disk-peak").unstarted(this::loop);
    }

    static DiskPeak watch(Path root) {
        DiskPeak watcher = new DiskPeak(root);
        watcher.peak.set(watcher.sample());
        watcher.thread.start();
        return watcher;
    }

    private void loop() {
        while (!stop) {
            peak.accumulateAndGet(sample(), Math::max);
            try {
                Thread.sleep(50); // a sampling period, not a synchronisation
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Bytes in the tree now; files that vanish while it is walked count as gone. */
    long sample() {
        long[] total = new long[1];
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                    if (attrs.isRegularFile()) total[0] += attrs.size();
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) {
                    if (e instanceof NoSuchFileException) return FileVisitResult.CONTINUE;
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return total[0];
    }

    long peak() {
        return Math.max(peak.get(), sample());
    }

    static String mib(long bytes) {
        return String.format("%.1f MiB", bytes / 1048576.0);
    }

    @Override
    public void close() throws InterruptedException {
        stop = true;
        thread.interrupt();
        thread.join();
    }
}
