package dev.etcdmigrate.provision;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.process.ToolRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds etcd from upstream source through the Go module proxy. etcd's own go.mod files carry
 * replace directives, so `go install MODULE@VERSION` refuses them; a throwaway wrapper module that
 * requires every etcd module at the same version (replace directives of dependencies are ignored)
 * builds each main package instead. CGO off and -trimpath for reproducible binaries; -s -w drops
 * the symbol table and DWARF (about a third of each binary), which nothing at run time reads.
 * Upstream's release build adds only -X .../api/v3/version.GitSHA from its git checkout; module zips
 * carry no git data, so that field stays at its default, as in an unstripped `go build`, and
 * {@code --version} reports what it did before.
 */
final class GoModuleSource implements BinarySource {

    private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(30);
    static final String LDFLAGS = "-s -w";

    private final Path go;
    private final Path cacheDir;
    private final String goArch;
    private final ToolRunner tools;

    GoModuleSource(Path go, Path cacheDir, String goArch, ToolRunner tools) {
        this.go = go;
        this.cacheDir = cacheDir;
        this.goArch = goArch;
        this.tools = tools;
    }

    @Override
    public String recipe() {
        return "go build -trimpath -ldflags=" + LDFLAGS + " GOARCH=" + goArch;
    }

    @Override
    public String name() {
        return "a source build through the Go module proxy";
    }

    @Override
    public void fetch(Release release, Path into) throws Skipped, ProvisionException {
        Release.GoModules spec = release.source(Release.GoModules.class).orElseThrow(() -> new Skipped("the catalog has no Go module source for it"));
        if (!Files.isExecutable(go)) {
            throw new Skipped("no Go toolchain at " + go + " (set --go or GO)");
        }
        Path work = cacheDir.resolve("go-build").resolve(release.version());
        try {
            Trees.deleteRecursively(work);
            Files.createDirectories(work);
            Files.writeString(work.resolve("go.mod"), "module etcd-migrate.invalid/build\n\ngo 1.23\n", StandardCharsets.UTF_8);
            Map<String, String> env = goEnvironment(goArch);
            List<String> get = new ArrayList<>(List.of(go.toString(), "get"));
            spec.modules().forEach(m -> get.add(m + "@" + spec.moduleVersion()));
            tools.run("go-" + release.version(), get, env, work, BUILD_TIMEOUT);
            for (String tool : release.toolNames()) {
                String pkg = spec.mains().get(tool);
                if (pkg == null) {
                    throw new ProvisionException("the catalog's Go module source names no main package for " + tool);
                }
                tools.run("go-" + release.version(), List.of(go.toString(), "build", "-trimpath", "-ldflags", LDFLAGS, "-o",
                        into.resolve(tool).toString(), pkg), env, work, BUILD_TIMEOUT);
            }
        } catch (ToolRunner.ToolFailedException e) {
            throw new Skipped("the build failed: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new Skipped("cannot prepare " + work + ": " + e.getMessage(), e);
        } finally {
            try {
                Trees.deleteRecursively(work);
            } catch (IOException ignored) {
                // a leftover work dir is removed by the next build of this version
            }
        }
    }

    private static Map<String, String> goEnvironment(String goArch) {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("CGO_ENABLED", "0");
        env.put("GOOS", "linux");
        env.put("GOARCH", goArch);
        env.put("GOFLAGS", "-mod=mod");
        env.put("GO111MODULE", "on");
        return env;
    }
}
