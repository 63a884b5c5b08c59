package dev.etcdmigrate.it.support;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/** Every path under a directory with its mode and content digest: "byte-identical afterwards". */
public final class TreeDigest {

    private TreeDigest() {}

    public static Map<String, String> of(Path root) throws Exception {
        Map<String, String> digest = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.toList()) {
                String mode =
                        PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
                String content = Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)
                        ? HexFormat.of()
                                .formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p)))
                        : Files.isDirectory(p) ? "dir" : "other";
                digest.put(root.relativize(p).toString(), mode + " " + content);
            }
        }
        return digest;
    }
}
