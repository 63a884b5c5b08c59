package dev.etcdmigrate.datadir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Room a step needs before it starts. Running out half-way is worse than refusing: an online downgrade
 * whose backup fitted but whose etcd then met ENOSPC left too little room for the original etcd to start
 * again. Counted: copies (backups, work copies), and for every etcd start the WAL segment it may
 * preallocate (64 MB, etcd's wal.SegmentSizeBytes) plus its snapshot files, and a margin.
 */
public final class DiskSpace {

    /** etcd preallocates each new WAL segment at this size (every line since 2.x). */
    public static final long WAL_SEGMENT = 64L << 20;
    /** For snapshot files, probe writes, etcd's own bookkeeping and the file system's. */
    public static final long MARGIN = 64L << 20;

    private DiskSpace() {}

    /** What a step that copies {@code copied} bytes and starts etcd {@code etcdStarts} times writes, with the margin. */
    public static long needed(long copied, int etcdStarts) {
        return copied + etcdStarts * WAL_SEGMENT + MARGIN;
    }

    /** Fails, before anything is written, when {@code dir}'s file system has less than {@code bytes} free. */
    public static void require(Path dir, long bytes, String forWhat) throws NotEnoughSpaceException, IOException {
        long free = Files.getFileStore(dir).getUsableSpace();
        if (free < bytes) {
            throw new NotEnoughSpaceException(
                    forWhat + " needs " + mib(bytes) + " free in " + dir + " but only " + mib(free)
                            + " are: refused before anything was written (free space there, or move the backups elsewhere with"
                            + " --backup-dir / BACKUP_DIR)");
        }
    }

    public static String mib(long bytes) {
        return (bytes + (1 << 20) - 1) / (1 << 20) + " MiB";
    }

    public static final class NotEnoughSpaceException extends dev.etcdmigrate.error.FailedException {
        public NotEnoughSpaceException(String message) {
            super(message);
        }
    }
}
