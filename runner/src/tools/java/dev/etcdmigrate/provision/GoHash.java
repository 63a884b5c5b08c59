package dev.etcdmigrate.provision;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The hashes the pins hold, computed here rather than asked of Go or apt, so no setting of theirs
 * (GOFLAGS, GONOSUMDB, GOSUMDB=off, an unsigned apt source) can skip the check. Go's "h1:" (its
 * dirhash Hash1): SHA-256 over the lines "sha256hex  name\n" of a module's files sorted by name, where a
 * module's files are named "path@version/relative/name" and a go.mod file plain "go.mod"; base64.
 */
final class GoHash {

    private GoHash() {}

    /** h1 of an extracted module directory (what the build reads), as Go's HashDir with prefix path@version. */
    static String ofModuleDir(Path dir, String moduleAtVersion) throws IOException {
        // Go sorts the names as byte strings: compare their UTF-8 bytes, not Java's UTF-16 units
        TreeMap<String, Path> files = new TreeMap<>((a, b) -> java.util.Arrays.compareUnsigned(
                a.getBytes(StandardCharsets.UTF_8), b.getBytes(StandardCharsets.UTF_8)));
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path f : walk.filter(Files::isRegularFile).toList()) {
                files.put(moduleAtVersion + "/" + dir.relativize(f).toString().replace('\\', '/'), f);
            }
        }
        List<String> lines = new ArrayList<>();
        for (var e : files.entrySet()) {
            if (e.getKey().contains("\n")) {
                throw new IOException("file name with a newline in " + dir);
            }
            lines.add(sha256(e.getValue()) + "  " + e.getKey() + "\n");
        }
        return h1(lines);
    }

    /** h1 of a go.mod file (the go.sum line "path version/go.mod h1:..."). */
    static String ofGoMod(Path goMod) throws IOException {
        return h1(List.of(sha256(goMod) + "  go.mod\n"));
    }

    private static String h1(List<String> sortedLines) {
        MessageDigest sum = sha();
        for (String line : sortedLines) {
            sum.update(line.getBytes(StandardCharsets.UTF_8));
        }
        return "h1:" + Base64.getEncoder().encodeToString(sum.digest());
    }

    /** SHA-256 of a file, lower-case hex. */
    static String sha256(Path file) throws IOException {
        MessageDigest sum = sha();
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), sum)) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(sum.digest());
    }

    private static MessageDigest sha() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
