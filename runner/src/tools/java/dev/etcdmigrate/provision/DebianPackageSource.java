package dev.etcdmigrate.provision;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.process.ToolRunner;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Debian's build of a release: `apt-get download` the packages, `dpkg-deb -x`, take the binaries. */
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
    public void fetch(Release release, Path into) throws Skipped {
        Release.DebianPackages spec = release.source(Release.DebianPackages.class).orElseThrow(() -> new Skipped("the catalog has no Debian package source for it"));
        if (!Files.isExecutable(Path.of("/usr/bin/apt-get")) || !Files.isExecutable(Path.of("/usr/bin/dpkg-deb"))) {
            throw new Skipped("apt-get and dpkg-deb are needed (a Debian machine)");
        }
        Path work = cacheDir.resolve("debian").resolve(release.version());
        Map<String, String> env = new HashMap<>(System.getenv());
        try {
            Trees.deleteRecursively(work);
            Files.createDirectories(work);
            Set<String> packages = new LinkedHashSet<>(spec.packages().values());
            for (String pkg : packages) {
                tools.run("apt-get", List.of("/usr/bin/apt-get", "download", foreign ? pkg + ":" + arch : pkg), env, work, TIMEOUT);
            }
            Path root = Files.createDirectories(work.resolve("root"));
            try (DirectoryStream<Path> debs = Files.newDirectoryStream(work, "*.deb")) {
                for (Path deb : debs) {
                    tools.run("dpkg-deb", List.of("/usr/bin/dpkg-deb", "-x", deb.toString(), root.toString()), env, work, TIMEOUT);
                }
            }
            for (String tool : release.toolNames()) {
                String path = spec.paths().get(tool);
                if (path == null) throw new Skipped("the catalog names no path for " + tool + " in the packages");
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
}
