package dev.etcdmigrate.datadir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** fsync for files and directories (a rename is durable only once its directory is synced). */
final class Fsync {

    private Fsync() {}

    /** A failure names the path: fsync's own error (EIO, ENOSPC) says only what went wrong, not where. */
    static void path(Path path) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            throw Fsync.naming(path, "sync", e);
        }
    }

    /** e itself when its message names the file already; otherwise an IOException that does, with e as cause. */
    static IOException naming(Path path, String what, IOException e) {
        String message = String.valueOf(e.getMessage());
        if (path.getFileName() != null && message.contains(path.getFileName().toString())) return e;
        return new IOException("could not " + what + " " + path + ": " + message, e);
    }
}
