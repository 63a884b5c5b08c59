package dev.etcdmigrate.datadir;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** fsync for files and directories (a rename is durable only once its directory is synced). */
final class Fsync {

    private Fsync() {}

    static void path(Path path) throws IOException {
        try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }
}
