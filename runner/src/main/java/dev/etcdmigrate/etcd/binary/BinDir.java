package dev.etcdmigrate.etcd.binary;

import dev.etcdmigrate.version.EtcdVersion;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;

/** The directory of bundled binaries, named etcd-&lt;v&gt;, etcdctl-&lt;v&gt;, etcdutl-&lt;v&gt;. */
public record BinDir(Path dir) {

    public Path etcd(EtcdVersion version) throws MissingBinaryException {
        return tool("etcd", version);
    }

    /** Whether etcd VERSION is here to run (a plan's "bundled"); {@link #etcd} says why not. */
    public boolean hasEtcd(EtcdVersion version) {
        return Files.isExecutable(dir.resolve("etcd-" + version));
    }

    public Path tool(String name, EtcdVersion version) throws MissingBinaryException {
        Path path = dir.resolve(name + "-" + version);
        BasicFileAttributes attributes;
        try {
            attributes = Files.readAttributes(path, BasicFileAttributes.class);
        } catch (AccessDeniedException e) {
            // Seen after switching to the data dir's owner when the bin dir sits under a private home.
            throw new MissingBinaryException(path + " is not reachable by uid " + currentUid()
                    + ": a directory on its path is not searchable by this user (keep the bin dir world-readable,"
                    + " e.g. /usr/local/bin, or chmod o+x each directory above it)");
        } catch (NoSuchFileException e) {
            throw missing(path, name, version);
        } catch (IOException e) {
            throw new MissingBinaryException(path + " cannot be read: " + e.getMessage());
        }
        if (!attributes.isRegularFile()) {
            throw missing(path, name, version);
        }
        if (!Files.isExecutable(path)) {
            throw new MissingBinaryException(path + " is not executable by uid " + currentUid() + " (chmod 0755 it)");
        }
        return path;
    }

    private MissingBinaryException missing(Path path, String name, EtcdVersion version) {
        return new MissingBinaryException(path + " is missing: the bin dir has no " + name + " " + version
                + " (provision it with `etcd-migrate provision --bin-dir " + dir + " " + version + "`)");
    }

    /** The effective uid, from /proc (its directory's owner is root once a process has switched users). */
    private static String currentUid() {
        try (var lines = Files.lines(Path.of("/proc/self/status"))) {
            return lines.filter(l -> l.startsWith("Uid:"))
                    .map(l -> l.split("\\s+")[2])
                    .findFirst()
                    .orElse("?");
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    public static final class MissingBinaryException extends dev.etcdmigrate.error.UsageException {
        public MissingBinaryException(String message) {
            super(message);
        }
    }
}
