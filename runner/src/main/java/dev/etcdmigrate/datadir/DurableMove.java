package dev.etcdmigrate.datadir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** A directory moved in one rename within a file system, both parents fsynced: after a crash it is in one place. */
public final class DurableMove {

    private DurableMove() {}

    public static void move(Path from, Path to) throws IOException {
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
        Fsync.path(to.getParent());
        if (!from.getParent().equals(to.getParent())) Fsync.path(from.getParent());
    }
}
