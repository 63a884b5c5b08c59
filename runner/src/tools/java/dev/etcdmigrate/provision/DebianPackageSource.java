package dev.etcdmigrate.provision;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.process.ToolRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Debian's build of a release: `apt-get download` the packages at their pinned versions, check each
 * file's SHA-256 against its pin (apt's own signature checks can be switched off by its configuration;
 * this one cannot), `dpkg-deb -x`, take the binaries.
 */
final class DebianPackageSource implements BinarySource {

    private static final Duration TIMEOUT = Duration.ofMinutes(10);

    private final Path cacheDir;
    private final String arch;
    private final boolean foreign;
    private final ToolRunner tools;

    /** arch: Debian's (= Go's) architecture name; another than this machine's needs `dpkg --add-architecture`. */
    DebianPackageSource(Path cacheDir, String arch, boolean foreign, ToolRunner tools) {
        this.cacheDir = cacheDir;
        this.arch = arch;
        this.foreign = foreign;
        this.tools = tools;
    }

    @Override
    public String recipe() {
        return foreign ? "arch=" + arch : ""; // this machine's packages: as stamped before recipes existed
    }

    @Override
    public String name() {
        return "Debian's packages";
    }

    @Override
    public void fetch(Release release, Path into, Pins pins) throws Skipped, ProvisionException {
        Release.DebianPackages spec = release.source(Release.DebianPackages.class)
                .orElseThrow(() -> new Skipped("the catalog has no Debian package source for it"));
        if (!Files.isExecutable(Path.of("/usr/bin/apt-get")) || !Files.isExecutable(Path.of("/usr/bin/dpkg-deb"))) {
            throw new Skipped("apt-get and dpkg-deb are needed (a Debian machine)");
        }
        Path work = cacheDir.resolve("debian").resolve(release.version());
        Map<String, String> env = new HashMap<>(System.getenv());
        try {
            Trees.deleteRecursively(work);
            Files.createDirectories(work);
            Path root = Files.createDirectories(work.resolve("root"));
            Map<String, String> names = new HashMap<>();
            for (String pkg : new LinkedHashSet<>(spec.packages().values())) {
                Path deb = archive(pkg, pins, env);
                names.put(pkg, deb.getFileName().toString().replaceFirst("\\.deb$", ""));
                // unpacked only once its SHA-256 is the pinned one
                tools.run(
                        "dpkg-deb",
                        List.of("/usr/bin/dpkg-deb", "-x", deb.toString(), root.toString()),
                        env,
                        work,
                        TIMEOUT);
            }
            for (String tool : release.toolNames()) {
                String path = spec.paths().get(tool);
                if (path == null) throw new Skipped("the catalog names no path for " + tool + " in the packages");
                pins.check("from", tool, "deb:" + names.get(spec.packages().get(tool)));
                Files.copy(root.resolve(path), into.resolve(tool));
            }
        } catch (ToolRunner.ToolFailedException e) {
            throw new Skipped(e.getMessage() + " (run `apt-get update` first if the package is not found)", e);
        } catch (IOException e) {
            throw new Skipped("cannot unpack the packages: " + e.getMessage(), e);
        } finally {
            try {
                Trees.deleteRecursively(work);
            } catch (IOException ignored) {
                // removed by the next run
            }
        }
    }

    /**
     * The package file at its pinned version (apt's candidate when recording pins), checked against its pin:
     * kept in CACHE/debian-archives, so later runs need no network; a kept file is checked like a new one,
     * and one that differs is removed, so it is neither used nor kept.
     */
    Path archive(String pkg, Pins pins, Map<String, String> env)
            throws IOException, ToolRunner.ToolFailedException, ProvisionException, Skipped {
        Path archives = Files.createDirectories(cacheDir.resolve("debian-archives"));
        Optional<String> pinned = pins.pinnedName("deb", pkg + "_");
        if (pinned.isEmpty() && !pins.recording()) {
            throw new ProvisionException("etcd " + pins.version() + " (" + pins.platform() + "): Debian package " + pkg
                    + " has no pin; refusing it (`provision --update-pins` records one)");
        }
        Path deb;
        String name;
        if (pinned.isPresent() && !pins.recording()) {
            name = pinned.get();
            deb = archives.resolve(name + ".deb");
            if (!Files.isRegularFile(deb)) {
                String[] f = name.split("_");
                Path fresh = Files.createDirectories(archives.resolve(".download"));
                Trees.deleteRecursively(fresh);
                Files.createDirectories(fresh);
                tools.run(
                        "apt-get",
                        List.of(
                                "/usr/bin/apt-get",
                                "download",
                                "-o",
                                "APT::Sandbox::User=root",
                                f[0] + ":" + f[2] + "=" + f[1]),
                        env,
                        fresh,
                        TIMEOUT);
                moveSingleDeb(fresh, deb);
            }
        } else {
            Path fresh = Files.createDirectories(archives.resolve(".download"));
            Trees.deleteRecursively(fresh);
            Files.createDirectories(fresh);
            tools.run(
                    "apt-get",
                    List.of("/usr/bin/apt-get", "download", "-o", "APT::Sandbox::User=root", pkg + ":" + arch),
                    env,
                    fresh,
                    TIMEOUT);
            String version = tools.run(
                            "dpkg-deb",
                            List.of("/usr/bin/dpkg-deb", "-f", onlyDeb(fresh).toString(), "Version"),
                            env,
                            fresh,
                            TIMEOUT)
                    .output()
                    .strip();
            name = pkg + "_" + version + "_" + arch;
            deb = archives.resolve(name + ".deb");
            moveSingleDeb(fresh, deb);
        }
        String actual = "sha256:" + GoHash.sha256(deb);
        try {
            pins.check("deb", name, actual);
        } catch (ProvisionException e) {
            Files.deleteIfExists(deb);
            throw e;
        }
        return deb;
    }

    private static Path onlyDeb(Path dir) throws IOException, Skipped {
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> debs = files.filter(f -> f.getFileName().toString().endsWith(".deb"))
                    .toList();
            if (debs.size() != 1)
                throw new Skipped("apt-get download left " + debs.size() + " package files in " + dir);
            return debs.get(0);
        }
    }

    private static void moveSingleDeb(Path dir, Path to) throws IOException, Skipped {
        Files.move(onlyDeb(dir), to, StandardCopyOption.REPLACE_EXISTING);
        Trees.deleteRecursively(dir);
    }
}
