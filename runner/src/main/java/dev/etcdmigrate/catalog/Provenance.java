package dev.etcdmigrate.catalog;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;

/**
 * Where a bundled binary came from, as the release's pins in the runner's jar say (versions/pins/&lt;v&gt;/
 * linux-&lt;arch&gt;.pins, "KIND NAME HASH" lines; provision writes and checks them), for `--version`.
 */
public final class Provenance {

    private Provenance() {}

    /**
     * One line per tool of the release present in binDir: its source with that source's pinned hash, the
     * compiler, and whether the binary's SHA-256 (hashed here) is the pinned one.
     */
    public static String describe(Release release, Path binDir) {
        String platform = "linux-"
                + switch (System.getProperty("os.arch").toLowerCase(Locale.ROOT)) {
                    case "aarch64", "arm64" -> "arm64";
                    case "amd64", "x86_64" -> "amd64";
                    default -> System.getProperty("os.arch");
                };
        String resource = "/dev/etcdmigrate/catalog/pins/" + release.version() + "/" + platform + ".pins";
        Map<String, String> pins = new HashMap<>();
        try (InputStream in = Provenance.class.getResourceAsStream(resource)) {
            if (in == null) {
                return "    etcd " + release.version() + ": no pins for " + platform + " in this runner\n";
            }
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                String[] f = line.strip().split("\\s+");
                if (f.length == 3 && !f[0].startsWith("#")) pins.put(f[0] + " " + f[1], f[2]);
            }
        } catch (IOException e) {
            return "    etcd " + release.version() + ": cannot read its pins: " + e.getMessage() + "\n";
        }
        String toolchain = pins.get("from toolchain");
        String compiler = toolchain == null
                ? ""
                : ", built with " + toolchain.substring(toolchain.indexOf(':') + 1) + " " + hashOf(pins, toolchain);
        StringBuilder b = new StringBuilder();
        for (String tool : release.toolNames()) {
            Path binary = binDir.resolve(tool + "-" + release.version());
            if (!Files.isRegularFile(binary)) continue;
            String from = pins.get("from " + tool);
            String pinned = pins.get("bin " + tool);
            String state;
            try {
                state = pinned == null
                        ? "not pinned"
                        : pinned.equals("sha256:" + sha256(binary))
                                ? "matches its pin " + pinned
                                : "DIFFERS from its pin " + pinned;
            } catch (IOException e) {
                state = "unreadable: " + e.getMessage();
            }
            b.append("    ")
                    .append(tool)
                    .append('-')
                    .append(release.version())
                    .append(": ")
                    .append(from == null ? "no pinned source" : "from " + from + " " + hashOf(pins, from) + compiler)
                    .append("; ")
                    .append(state)
                    .append('\n');
        }
        return b.toString();
    }

    /** go:path@version names a "go" pin, deb:name a "deb" pin. */
    private static String hashOf(Map<String, String> pins, String source) {
        int colon = source.indexOf(':');
        String hash = colon < 0 ? null : pins.get(source.substring(0, colon) + " " + source.substring(colon + 1));
        return hash == null ? "(no pinned hash)" : hash;
    }

    private static String sha256(Path file) throws IOException {
        MessageDigest sum;
        try {
            sum = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), sum)) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(sum.digest());
    }
}
