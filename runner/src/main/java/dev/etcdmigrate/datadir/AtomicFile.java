package dev.etcdmigrate.datadir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The one recipe for a small file that must be either old or new after a crash: an owner-only temp file
 * beside it, written and fsynced, renamed over it, then the directory fsynced.
 */
public final class AtomicFile {

    private AtomicFile() {}

    public static void write(Path file, String text) throws IOException {
        Path temp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.deleteIfExists(temp);
        Files.createFile(temp, PosixFilePermissions.asFileAttribute(Permissions.FILE));
        try {
            Files.writeString(temp, text, StandardCharsets.UTF_8, StandardOpenOption.WRITE, StandardOpenOption.SYNC);
        } catch (IOException e) {
            throw Fsync.naming(temp, "write", e); // a write's error (ENOSPC, EIO) does not say which file
        }
        Fsync.path(temp);
        Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        Fsync.path(file.getParent());
    }
}
