package dev.etcdmigrate.provision;

import dev.etcdmigrate.catalog.Release;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** Where a bundled binary came from, as the pins in the runner's jar say, for `--version`. */
public final class Provenance {

    private Provenance() {}

    /**
     * One line per tool of the release present in binDir: its source and that source's pinned hash, the
     * compiler, and whether the binary's SHA-256 is the pinned one (it is hashed here).
     */
    public static String describe(Release release, Path binDir) {
        String platform = ProvisionCommand.thisPlatform();
        Pins pins;
        try {
            pins = Pins.load(Optional.empty(), release.version(), platform, false);
        } catch (ProvisionException e) {
            return "    (" + e.getMessage() + ")\n";
        }
        StringBuilder b = new StringBuilder();
        String toolchain = pins.value("from", "toolchain").map(t -> ", built with " + t.substring(t.indexOf('@') + 1) + " " + hashOf(pins, t))
                .orElse("");
        for (String tool : release.toolNames()) {
            Path binary = binDir.resolve(tool + "-" + release.version());
            if (!Files.isRegularFile(binary)) continue;
            String from = pins.value("from", tool).orElse("");
            String pinned = pins.value("bin", tool).orElse("");
            String state;
            try {
                state = pinned.isEmpty() ? "not pinned" : pinned.equals("sha256:" + GoHash.sha256(binary)) ? "matches its pin " + pinned
                        : "DIFFERS from its pin " + pinned;
            } catch (IOException e) {
                state = "unreadable: " + e.getMessage();
            }
            b.append("    ").append(tool).append('-').append(release.version()).append(": ")
                    .append(from.isEmpty() ? "no pinned source (" + platform + ")" : "from " + from + " " + hashOf(pins, from) + toolchain)
                    .append("; ").append(state).append('\n');
        }
        return b.toString();
    }

    private static String hashOf(Pins pins, String source) {
        int colon = source.indexOf(':');
        return pins.value(source.substring(0, colon), source.substring(colon + 1)).orElse("(no pinned hash)");
    }
}
