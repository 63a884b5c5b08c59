package dev.etcdmigrate.datadir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/** Owner-only modes: etcd 3.4.10+ refuses a looser data dir, and the data holds cluster secrets. */
public final class Permissions {

    public static final Set<PosixFilePermission> DIR = PosixFilePermissions.fromString("rwx------");
    public static final Set<PosixFilePermission> FILE = PosixFilePermissions.fromString("rw-------");

    private Permissions() {}

    /**
     * Creates the directory (and parents) if missing and sets 0700 on the directory itself. What it
     * creates is made durable (each new directory, then its parent, fsynced): a power cut must not take
     * away a directory that a later rename (a member dir moved into a backup) or marker relies on.
     */
    public static Path ownerOnlyDir(Path dir) throws IOException {
        Path top = dir.toAbsolutePath();
        while (top.getParent() != null && !Files.exists(top.getParent())) top = top.getParent();
        boolean created = !Files.exists(dir);
        Files.createDirectories(dir);
        Files.setPosixFilePermissions(dir, DIR);
        if (created) {
            for (Path p = dir.toAbsolutePath(); p != null && p.startsWith(top); p = p.getParent()) {
                Fsync.path(p);
                Fsync.path(p.getParent());
            }
        }
        return dir;
    }

    /** Sets 0700 on every directory and 0600 on every file of a tree (a member dir moved into a backup). */
    public static void ownerOnlyTree(Path root) throws IOException {
        try (var walk = Files.walk(root)) {
            for (Path p : walk.toList()) {
                if (Files.isSymbolicLink(p)) continue; // chmod would follow it out of the tree
                Files.setPosixFilePermissions(p, Files.isDirectory(p) ? DIR : FILE);
            }
        }
    }
}
