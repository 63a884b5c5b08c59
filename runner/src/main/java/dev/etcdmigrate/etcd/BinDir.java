package dev.etcdmigrate.etcd;

import dev.etcdmigrate.version.EtcdVersion;
import java.nio.file.Files;
import java.nio.file.Path;

/** The directory of bundled binaries, named etcd-&lt;v&gt;, etcdctl-&lt;v&gt;, etcdutl-&lt;v&gt;. */
public record BinDir(Path dir) {

    public Path etcd(EtcdVersion version) throws MissingBinaryException {
        return tool("etcd", version);
    }

    public Path tool(String name, EtcdVersion version) throws MissingBinaryException {
        Path path = dir.resolve(name + "-" + version);
        if (!Files.isRegularFile(path)) {
            throw new MissingBinaryException(path + " is missing: the bin dir has no " + name + " " + version
                    + " (provision it with `etcd-migrate provision --bin-dir " + dir + " " + version + "`)");
        }
        if (!Files.isExecutable(path)) {
            throw new MissingBinaryException(path + " is not executable (chmod 0755 it)");
        }
        return path;
    }

    public static final class MissingBinaryException extends Exception {
        public MissingBinaryException(String message) {
            super(message);
        }
    }
}
