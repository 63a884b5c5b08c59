package dev.etcdmigrate.provision;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What one release's provisioning for one platform downloads and makes, each with its hash
 * (versions/pins/&lt;version&gt;/linux-&lt;arch&gt;.pins, one "kind name hash" a line):
 * <pre>
 *   go      path@version   h1:...   a Go module's files (etcd's modules, their dependencies, a toolchain)
 *   go.mod  path@version   h1:...   a Go module's go.mod (read to select versions)
 *   deb     name_version_arch  sha256:...  a Debian package file
 *   from    etcd           go:path@version  which input a binary is built from (or deb:name_version_arch;
 *                          "from toolchain" names the compiler): the image's SBOM and --version read these
 *   bin     etcd           sha256:...  a binary the provisioning installs
 * </pre>
 * Verifying, every input and output must be pinned with the same hash; recording ({@code provision
 * --update-pins}), what was seen becomes the new pins.
 */
final class Pins {

    static final List<String> KINDS = List.of("go", "go.mod", "deb", "from", "bin");

    private final String version;
    private final String platform;
    private final String origin;
    private final Map<String, String> pinned;
    private final boolean recording;
    private final TreeMap<String, String> seen = new TreeMap<>();
    private final Map<String, Source> sources = new java.util.HashMap<>();
    private int checked;

    private Pins(String version, String platform, String origin, Map<String, String> pinned, boolean recording) {
        this.version = version;
        this.platform = platform;
        this.origin = origin;
        this.pinned = pinned;
        this.recording = recording;
    }

    /** The file name of a release's pins for a platform, relative to the pins directory. */
    static String fileName(String version, String platform) {
        return version + "/" + platform.replace('/', '-') + ".pins";
    }

    /** Pins from DIR/&lt;version&gt;/linux-ARCH.pins, or from the runner's jar when dir is empty. */
    static Pins load(Optional<Path> dir, String version, String platform, boolean recording) throws ProvisionException {
        String name = fileName(version, platform);
        String text;
        String origin;
        try {
            if (dir.isPresent()) {
                Path file = dir.get().resolve(name);
                origin = file.toString();
                text = Files.isRegularFile(file) ? Files.readString(file, StandardCharsets.UTF_8) : null;
            } else {
                origin = "versions/pins/" + name + " (in the runner's jar)";
                try (InputStream in = Pins.class.getResourceAsStream("/dev/etcdmigrate/catalog/pins/" + name)) {
                    text = in == null ? null : new String(in.readAllBytes(), StandardCharsets.UTF_8);
                }
            }
        } catch (IOException e) {
            throw new ProvisionException(
                    "cannot read the pins of etcd " + version + " for " + platform + ": " + e.getMessage(), e);
        }
        if (text == null) {
            // nothing can match: a pinned source refuses every input (a tarball, not pinned, still works)
            origin = origin + ", which does not exist";
        }
        return new Pins(version, platform, origin, text == null ? Map.of() : parse(text, origin), recording);
    }

    /** Pins given as text (tests, and a source that pins nothing: empty text). */
    static Pins of(String version, String platform, String text) {
        return new Pins(version, platform, "(given)", parse(text, "(given)"), false);
    }

    static Map<String, String> parse(String text, String origin) {
        TreeMap<String, String> pins = new TreeMap<>();
        int n = 0;
        for (String line : text.split("\n", -1)) {
            n++;
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#")) continue;
            String[] f = l.split("\\s+");
            if (f.length != 3 || !KINDS.contains(f[0])) {
                throw new IllegalArgumentException(
                        origin + ":" + n + ": expected 'KIND NAME HASH' with KIND one of " + KINDS + ", got: " + l);
            }
            if (pins.put(f[0] + " " + f[1], f[2]) != null) {
                throw new IllegalArgumentException(origin + ":" + n + ": " + f[0] + " " + f[1] + " is pinned twice");
            }
        }
        return pins;
    }

    boolean recording() {
        return recording;
    }

    String version() {
        return version;
    }

    String platform() {
        return platform;
    }

    /** A pinned value: e.g. {@code value("from", "etcd")}. */
    Optional<String> value(String kind, String name) {
        return Optional.ofNullable(pinned.get(kind + " " + name));
    }

    /** The pinned name of a kind whose name starts with prefix (e.g. a Debian package's version). */
    Optional<String> pinnedName(String kind, String prefix) {
        return pinned.keySet().stream()
                .filter(k -> k.startsWith(kind + " " + prefix))
                .map(k -> k.substring(kind.length() + 1))
                .findFirst();
    }

    boolean matches(String kind, String name, String actual) {
        return actual.equals(pinned.get(kind + " " + name));
    }

    /**
     * Checks one input or output against its pin (or records it). A differing or missing pin is a
     * refusal: the caller installs nothing of the release.
     */
    void check(String kind, String name, String actual) throws ProvisionException {
        check(kind, name, actual, new Source("", Optional.empty()));
    }

    /**
     * Where a hash was computed: {@code what} in words ("go.sum of the build in DIR", "Go's module
     * cache"), and the directory it hashed, which a refetch removes.
     */
    record Source(String what, Optional<Path> dir) {
        static Source of(String what) {
            return new Source(what, Optional.empty());
        }

        static Source dir(String what, Path dir) {
            return new Source(what, Optional.of(dir));
        }

        @Override
        public String toString() {
            return what.isEmpty()
                    ? "an earlier check"
                    : what + dir.map(d -> " (" + d + ")").orElse("");
        }
    }

    /** {@link #check(String, String, String)}, saying where {@code actual} came from for a refusal that names two. */
    void check(String kind, String name, String actual, Source source) throws ProvisionException {
        String key = kind + " " + name;
        String before = seen.put(key, actual);
        Source beforeSource = sources.put(key, source);
        if (before != null && !before.equals(actual)) {
            // e.g. Go's go.sum line for a module and the hash of its extracted directory
            throw new ProvisionException(twoHashes(kind, name, before, beforeSource, actual, source));
        }
        if (recording) return;
        String expected = pinned.get(key);
        checked++;
        if (expected == null) {
            throw new ProvisionException("etcd " + version + " (" + platform + "): " + describe(kind) + " " + name
                    + " (" + actual + ") is not pinned in " + origin
                    + "; refusing it (a new input needs `provision --update-pins` and review)");
        }
        if (!expected.equals(actual)) {
            throw new ProvisionException("etcd " + version + " (" + platform + "): " + describe(kind) + " " + name
                    + " differs from its pin in " + origin + ": expected " + expected + ", got " + actual
                    + "; refusing it");
        }
    }

    /**
     * Two hashes of one input: which one is pinned, which was found and where, and how to fetch it again
     * (a module cache copy that differs from what Go downloaded was changed after the download).
     */
    private String twoHashes(
            String kind, String name, String before, Source beforeSource, String actual, Source source) {
        String pin = pinned.get(kind + " " + name);
        String what;
        if (pin != null && pin.equals(before)) {
            what = "pinned " + pin + " in " + origin + " (and so says " + beforeSource + "), found " + actual + " in "
                    + source;
        } else if (pin != null && pin.equals(actual)) {
            what = "pinned " + pin + " in " + origin + " (and so says " + source + "), found " + before + " in "
                    + beforeSource;
        } else {
            what = (pin == null
                            ? "not pinned" + (recording ? " (recording)" : " in " + origin)
                            : "pinned " + pin + " in " + origin + ", matching neither")
                    + "; found " + before + " in " + beforeSource + " and " + actual + " in " + source;
        }
        Optional<Path> copy = source.dir().or(beforeSource::dir);
        String refetch = copy.map(d -> " The copy in " + d + " is not what was downloaded: remove it (chmod -R u+w " + d
                        + " && rm -rf " + d + ", or `go clean -modcache` with that cache's GOMODCACHE) and run"
                        + " `etcd-migrate provision` again to fetch it afresh")
                .orElse(" Run `etcd-migrate provision` again to fetch it afresh");
        return "etcd " + version + " (" + platform + "): " + describe(kind) + " " + name + " has two hashes: " + what
                + "; refusing it." + refetch;
    }

    /** Forgets what was checked so far: an installed release that did not match is built again from scratch. */
    void reset() {
        checked = 0;
        seen.clear();
        sources.clear();
    }

    int recordedCount() {
        return seen.size();
    }

    /** How many hashes were compared with a pin so far. */
    int checked() {
        return checked;
    }

    private static String describe(String kind) {
        return switch (kind) {
            case "go" -> "Go module";
            case "go.mod" -> "the go.mod of Go module";
            case "deb" -> "Debian package";
            case "bin" -> "built binary";
            case "from" -> "the source of";
            default -> kind;
        };
    }

    /** The recorded pins as the file's text. */
    String recordedText() {
        StringBuilder b = new StringBuilder(
                (version.equals("sysroot")
                                ? "# " + platform
                                        + ": the glibc package whose loader runs the binaries' version check under qemu-user-static.\n"
                                : "# etcd " + version + " for " + platform
                                        + ": every input `provision` downloads and every binary it installs, with its hash.\n")
                        + "# Written by `etcd-migrate provision --update-pins`; review the diff it prints. Lines: KIND NAME HASH.\n");
        List<String> kinds = new ArrayList<>(KINDS);
        for (String kind : kinds) {
            seen.forEach((k, v) -> {
                if (k.substring(0, k.indexOf(' ')).equals(kind)) {
                    b.append(k).append(' ').append(v).append('\n');
                }
            });
        }
        return b.toString();
    }

    /** Lines removed (-) and added (+) against the pins loaded: what a reviewer reads. */
    String diff() {
        StringBuilder b = new StringBuilder();
        TreeMap<String, String> recorded = new TreeMap<>();
        seen.forEach(recorded::put);
        pinned.forEach((k, v) -> {
            if (!v.equals(recorded.get(k)))
                b.append("- ").append(k).append(' ').append(v).append('\n');
        });
        recorded.forEach((k, v) -> {
            if (!v.equals(pinned.get(k)))
                b.append("+ ").append(k).append(' ').append(v).append('\n');
        });
        return b.toString();
    }
}
