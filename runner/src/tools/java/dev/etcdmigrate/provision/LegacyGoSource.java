package dev.etcdmigrate.provision;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.process.ToolRunner;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Builds a pre-module etcd (2.x, 3.0-3.3) from its tagged source with the old Go it was made for.
 * Both the source (github.com/coreos/etcd@vX+incompatible) and the toolchain
 * (golang.org/toolchain@v0.0.1-goX.linux-ARCH) come from the Go module proxy through the host Go.
 * Go 1.22+ cannot be used: the binaries it makes of 2.x-3.2 panic at start in an old codec library.
 * Like upstream's build script of those releases, etcd gets -X .../version.GitSHA (from the catalog);
 * -s -w drop the symbol table and DWARF. The toolchain runs on this machine and cross-compiles for
 * goArch. The toolchain, the source and (3.0-3.3) every module of the pinned go.sum the build reads are
 * checked against the pins before anything is compiled ({@link GoInputs}).
 */
final class LegacyGoSource implements BinarySource {

    private static final Duration TIMEOUT = Duration.ofMinutes(30);

    private final GoInputs inputs;
    private final Path cacheDir;
    static final String LDFLAGS = "-s -w";

    private final String goArch;
    private final ToolRunner tools;

    LegacyGoSource(GoInputs inputs, Path cacheDir, String goArch, ToolRunner tools) {
        this.inputs = inputs;
        this.cacheDir = cacheDir;
        this.goArch = goArch;
        this.tools = tools;
    }

    @Override
    public String recipe() {
        return "go build -trimpath -ldflags=" + LDFLAGS + " -X version.GitSHA GOARCH=" + goArch;
    }

    @Override
    public String name() {
        return "a source build of the tagged release with its era's Go";
    }

    @Override
    public void fetch(Release release, Path into, Pins pins) throws Skipped, ProvisionException {
        Release.GoLegacy spec = release.source(Release.GoLegacy.class)
                .orElseThrow(() -> new Skipped("the catalog has no legacy Go source for it"));
        if (!Files.isExecutable(inputs.hostGo())) {
            throw new Skipped("no Go toolchain at " + inputs.hostGo() + " to fetch modules with (set --go or GO)");
        }
        Path work = cacheDir.resolve("legacy-build").resolve(release.version());
        String label = spec.toolchain() + "-" + release.version();
        try {
            Path goRoot = inputs.toolchain(spec.toolchain(), pins, label);
            Path source = inputs.download(spec.module() + "@" + spec.moduleVersion(), pins, label);
            for (String tool : release.toolNames()) {
                pins.check("from", tool, "go:" + spec.module() + "@" + spec.moduleVersion());
            }
            Trees.deleteRecursively(work);
            Map<String, String> env = oldGoEnvironment(goRoot, pins);
            Path root;
            Path go = goRoot.resolve("bin/go");
            List<String> packages = new ArrayList<>();
            for (String tool : release.toolNames()) {
                String pkg = spec.mains().get(tool);
                if (pkg == null) {
                    throw new ProvisionException("the catalog's legacy Go source names no main package for " + tool);
                }
                packages.add(pkg);
            }
            if (spec.layout().equals("gopath")) {
                // dependencies ship in Godeps/_workspace with rewritten import paths: the source's pin covers them
                Path gopath = work.resolve("gopath");
                root = gopath.resolve("src").resolve(spec.module());
                GoInputs.copyTree(source, root);
                env.put("GO111MODULE", "off");
                env.put("GOPATH", gopath.toString());
            } else {
                root = work.resolve("src");
                GoInputs.copyTree(source, root);
                Trees.deleteRecursively(root.resolve("cmd")); // the vendor tree module zips omit: a leftover
                copyResource(release, "go.mod", root);
                copyResource(release, "go.sum", root);
                env.put("GO111MODULE", "on");
                env.put("GOPATH", cacheDir.resolve("legacy-gopath").toString());
                env.remove("GOMODCACHE");
                env.put("GOFLAGS", "-mod=readonly");
                // the pinned go.sum's lines and the directory of every module the build reads
                inputs.checkBuild(go, env, root, packages, pins, label);
                env.put("GOPROXY", "off");
            }
            for (int i = 0; i < packages.size(); i++) {
                String tool = release.toolNames().get(i);
                String ldflags = tool.equals("etcd")
                        ? LDFLAGS + " -X " + spec.module() + "/version.GitSHA=" + spec.gitSha()
                        : LDFLAGS;
                tools.run(
                        label,
                        List.of(
                                go.toString(),
                                "build",
                                "-trimpath",
                                "-installsuffix",
                                "cgo",
                                "-ldflags",
                                ldflags,
                                "-o",
                                into.resolve(tool).toString(),
                                packages.get(i)),
                        env,
                        root,
                        TIMEOUT);
            }
        } catch (ToolRunner.ToolFailedException e) {
            throw new Skipped("the build failed: " + e.getMessage(), e);
        } catch (IOException e) {
            throw new Skipped("cannot prepare the build in " + work + ": " + e.getMessage(), e);
        } finally {
            try {
                Trees.deleteRecursively(work);
            } catch (IOException ignored) {
                // removed by the next build of this version
            }
        }
    }

    /** The pins' Go settings (GoInputs), for the old Go: no user go env (it may hold flags, -buildvcs, that it rejects). */
    private Map<String, String> oldGoEnvironment(Path goRoot, Pins pins) {
        Map<String, String> env = GoInputs.environment(pins);
        env.put("GOROOT", goRoot.toString());
        // The old go command hashes GOROOT_FINAL (default: GOROOT, here a path in the cache dir) into the link
        // action ID, which becomes the binary's build ID even with -trimpath: a constant keeps the binary
        // the same wherever the cache dir is (-trimpath already records GOROOT's files as go/...).
        env.put("GOROOT_FINAL", "go");
        env.put("GOTOOLCHAIN", "local");
        env.put("CGO_ENABLED", "0");
        env.put("GOOS", "linux");
        env.put("GOARCH", goArch);
        env.put("GOCACHE", cacheDir.resolve("legacy-gocache").toString());
        env.put("GOFLAGS", "");
        env.put("PATH", goRoot.resolve("bin") + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        return env;
    }

    private static void copyResource(Release release, String name, Path root) throws IOException, Skipped {
        String resource = "/dev/etcdmigrate/catalog/legacy/" + release.version() + "/" + name;
        try (InputStream in = LegacyGoSource.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new Skipped("the runner's jar has no " + resource + " (versions/legacy/" + release.version() + "/"
                        + name + ")");
            }
            Files.copy(in, root.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        }
    }
}
