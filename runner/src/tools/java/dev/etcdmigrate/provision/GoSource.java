package dev.etcdmigrate.provision;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.process.ToolRunner;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the two source builds of etcd share: the host Go that fetches through the module proxy, a work dir per
 * release that is gone afterwards (also after a failure), the main packages the catalog names, and a static
 * build environment for goArch around the checked toolchain.
 */
abstract sealed class GoSource implements BinarySource permits GoModuleSource, LegacyGoSource {

    static final String LDFLAGS = "-s -w";

    final GoInputs inputs;
    final Path cacheDir;
    final String goArch;
    final ToolRunner tools;

    GoSource(GoInputs inputs, Path cacheDir, String goArch, ToolRunner tools) {
        this.inputs = inputs;
        this.cacheDir = cacheDir;
        this.goArch = goArch;
        this.tools = tools;
    }

    /** A build in its work dir. */
    interface Build {
        void run() throws IOException, ToolRunner.ToolFailedException, Skipped, ProvisionException;
    }

    /** Runs the build with a fresh work dir and deletes that dir afterwards; a failed tool or I/O skips the release. */
    final void inWorkDir(Path work, Build build) throws Skipped, ProvisionException {
        if (!Files.isExecutable(inputs.hostGo())) {
            throw new Skipped("no Go toolchain at " + inputs.hostGo() + " to fetch modules with (set --go or GO)");
        }
        try {
            Trees.deleteRecursively(work);
            build.run();
        } catch (ToolRunner.ToolFailedException e) {
            throw new Skipped("the build failed: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new Skipped("cannot prepare the build in " + work + ": " + e.getMessage(), e);
        } finally {
            try {
                Trees.deleteRecursively(work);
            } catch (IOException ignored) {
                // a leftover work dir is removed by the next build of this version
            }
        }
    }

    /** The catalog's main package of each tool of the release, in the release's tool order. */
    static List<String> mainPackages(Release release, Map<String, String> mains, String source)
            throws ProvisionException {
        List<String> packages = new ArrayList<>();
        for (String tool : release.toolNames()) {
            String pkg = mains.get(tool);
            if (pkg == null) {
                throw new ProvisionException("the catalog's " + source + " names no main package for " + tool);
            }
            packages.add(pkg);
        }
        return packages;
    }

    /** The pins' Go settings (GoInputs), the checked toolchain as GOROOT and first on PATH, a static build for goArch. */
    final Map<String, String> environment(Pins pins, Path goRoot) {
        Map<String, String> env = GoInputs.environment(pins);
        env.put("GOROOT", goRoot.toString());
        env.put("PATH", goRoot.resolve("bin") + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        env.put("CGO_ENABLED", "0");
        env.put("GOOS", "linux");
        env.put("GOARCH", goArch);
        return env;
    }
}
