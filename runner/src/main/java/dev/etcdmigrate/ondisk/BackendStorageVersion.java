package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Two questions about etcd's v3 backend (member/snap/db) asked without opening it through bbolt: the
 * storage version etcd 3.6+ records (read by {@link BboltFile}, the one reader of the file's pages), and
 * which process holds bbolt's flock on it (from /proc/locks: a running etcd, etcdutl).
 */
public final class BackendStorageVersion {

    private BackendStorageVersion() {}

    /**
     * The recorded storage version (e.g. "3.6.0"), or empty when the db records none (etcd 3.5 and older
     * never write it); a damaged db is a {@link DamagedFileException}.
     */
    public static Optional<String> read(Path db) throws IOException {
        try (BboltFile file = BboltFile.open(db)) {
            return file.storageVersion();
        }
    }

    /**
     * The PID of a process holding a flock on the db (bbolt takes one for as long as it has the file open: a
     * running etcd, etcdutl), from /proc/locks; empty when none, or on a system without /proc/locks.
     */
    public static java.util.OptionalLong lockHolder(Path db) throws IOException {
        Path locks = Path.of("/proc/locks");
        if (!java.nio.file.Files.isReadable(locks)) return java.util.OptionalLong.empty();
        long dev = ((Number) java.nio.file.Files.getAttribute(db, "unix:dev")).longValue();
        long ino = ((Number) java.nio.file.Files.getAttribute(db, "unix:ino")).longValue();
        return lockHolder(java.nio.file.Files.readAllLines(locks), dev, ino);
    }

    /** The holder among /proc/locks lines ("1: FLOCK  ADVISORY  WRITE 4242 fe:00:123 0 EOF") of the file dev:ino. */
    static java.util.OptionalLong lockHolder(java.util.List<String> procLocks, long dev, long ino) {
        // glibc's major()/minor() of st_dev, printed by the kernel as %02x:%02x:%lu
        long major = ((dev >>> 8) & 0xfff) | ((dev >>> 32) & ~0xfffL);
        long minor = (dev & 0xff) | ((dev >>> 12) & ~0xffL);
        for (String line : procLocks) {
            String[] f = line.trim().split("\\s+");
            // "N:" then, for a lock someone waits on, "->"; then type, mode, access, pid, dev:ino, start, end
            int i = 1;
            if (i < f.length && f[i].equals("->")) continue; // a waiter, not a holder
            if (f.length < i + 5 || !f[i].equals("FLOCK")) continue;
            String[] id = f[i + 4].split(":");
            if (id.length != 3) continue;
            try {
                if (Long.parseLong(id[0], 16) == major
                        && Long.parseLong(id[1], 16) == minor
                        && Long.parseLong(id[2]) == ino) {
                    return java.util.OptionalLong.of(Long.parseLong(f[i + 3]));
                }
            } catch (NumberFormatException ignored) {
                // a line of another format
            }
        }
        return java.util.OptionalLong.empty();
    }
}
