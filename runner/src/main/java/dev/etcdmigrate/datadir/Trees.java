package dev.etcdmigrate.datadir;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;

/** Owner-only tree copies, and a recursive delete that never follows symbolic links out of the tree. */
public final class Trees {

    private Trees() {}

    /**
     * Copies a tree (a member dir) keeping times, cloning files where the file system can ({@link
     * FileClone}: no data blocks, no time); {@code to} must not exist yet. Member data holds the
     * cluster's secrets, so every copy is owner-only (0700 dirs, 0600 files) whatever the source's modes.
     * A failure names the file or directory whose copy failed and its target (a full disk fails the write with
     * only "No space left on device").
     */
    public static void copy(Path from, Path to) throws IOException {
        copy(from, to, false);
    }

    /** The same, with every file and directory fsynced: for a backup that must survive a crash. Returns whether every file was cloned. */
    public static boolean copyDurably(Path from, Path to) throws IOException {
        return copy(from, to, true);
    }

    private static boolean copy(Path from, Path to, boolean sync) throws IOException {
        try {
            return copyTree(from, to, sync);
        } catch (EntryCopyFailed e) {
            throw e;
        } catch (IOException e) {
            throw new IOException("could not copy " + from + " to " + to + ": " + e.getMessage(), e);
        }
    }

    /** The copy of one entry failed: its message names that entry and its target already. */
    private static final class EntryCopyFailed extends IOException {
        EntryCopyFailed(Path entry, Path copy, IOException cause) {
            super("could not copy " + entry + " to " + copy + ": " + cause.getMessage(), cause);
        }
    }

    /** Returns whether every regular file was cloned (none needed a byte copy). */
    private static boolean copyTree(Path from, Path to, boolean sync) throws IOException {
        boolean[] cloning = {true}; // until the file system says it cannot: then plain copies for the rest
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Path copy = to.resolve(from.relativize(dir).toString());
                try {
                    Files.copy(dir, copy, StandardCopyOption.COPY_ATTRIBUTES);
                    Files.setPosixFilePermissions(copy, Permissions.DIR);
                } catch (IOException e) {
                    throw new EntryCopyFailed(dir, copy, e);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Path copy = to.resolve(from.relativize(file).toString());
                try {
                    boolean cloned = cloning[0] && attrs.isRegularFile() && FileClone.clone(file, copy);
                    if (cloned) {
                        Files.setLastModifiedTime(copy, attrs.lastModifiedTime());
                    } else {
                        cloning[0] &= !attrs.isRegularFile();
                        Files.copy(file, copy, StandardCopyOption.COPY_ATTRIBUTES);
                    }
                    Files.setPosixFilePermissions(copy, Permissions.FILE);
                    if (sync) Fsync.path(copy);
                } catch (IOException e) {
                    throw new EntryCopyFailed(file, copy, e);
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                if (exc != null) throw exc;
                Path copy = to.resolve(from.relativize(dir).toString());
                try {
                    if (sync) Fsync.path(copy);
                } catch (IOException e) {
                    throw new EntryCopyFailed(dir, copy, e);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        return cloning[0];
    }

    /** Bytes in the regular files of a tree: what a copy of it needs. */
    public static long size(Path root) throws IOException {
        long[] total = new long[1];
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                if (attrs.isRegularFile()) total[0] += attrs.size();
                return FileVisitResult.CONTINUE;
            }
        });
        return total[0];
    }

    /**
     * {@link #deleteRecursively}, then the parent directory fsynced: for a delete the next step relies on
     * (a work dir that a power cut must not bring back after a step was marked complete).
     */
    public static void deleteDurably(Path root) throws IOException {
        boolean existed = Files.exists(root, LinkOption.NOFOLLOW_LINKS);
        deleteRecursively(root);
        if (existed) Fsync.path(root.toAbsolutePath().getParent());
    }

    /**
     * fsync of every file and directory of a tree, children before their directory, then of the tree's
     * parent: what a tool (etcdutl, an etcd) wrote there is on disk before the runner records it as done.
     * etcd syncs its WAL and db contents but not every directory entry (bbolt never syncs the db's directory).
     */
    public static void syncTree(Path root) throws IOException {
        childrenFirst(
                root,
                (file, attrs) -> {
                    if (attrs.isRegularFile()) Fsync.path(file);
                },
                Fsync::path);
        Fsync.path(root.toAbsolutePath().getParent());
    }

    public static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        childrenFirst(root, (file, attrs) -> Files.delete(file), Files::delete);
    }

    private interface FileAction {
        void apply(Path file, BasicFileAttributes attrs) throws IOException;
    }

    private interface DirAction {
        void apply(Path dir) throws IOException;
    }

    /** Walks a tree without following links: each file (or link), and each directory after its entries. */
    private static void childrenFirst(Path root, FileAction onFile, DirAction onDir) throws IOException {
        Files.walkFileTree(root, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                onFile.apply(file, attrs);
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path dir, IOException exc) throws IOException {
                if (exc != null) throw exc;
                onDir.apply(dir);
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
