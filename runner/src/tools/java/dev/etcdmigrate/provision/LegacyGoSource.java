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
final class LegacyGoSource extends GoSource {

    private static final Duration TIMEOUT = Duration.ofMinutes(30);

    LegacyGoSource(GoInputs inputs, Path cacheDir, String goArch, ToolRunner tools) {
        super(inputs, cacheDir, goArch, tools);
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
        Path work = cacheDir.resolve("legacy-build").resolve(release.version());
        String label = spec.toolchain() + "-" + release.version();
        inWorkDir(work, () -> {
            Path goRoot = inputs.toolchain(spec.toolchain(), pins, label);
            Path source = inputs.download(spec.module() + "@" + spec.moduleVersion(), pins, label);
            for (String tool : release.toolNames()) {
                pins.check("from", tool, "go:" + spec.module() + "@" + spec.moduleVersion());
            }
            Map<String, String> env = oldGoEnvironment(goRoot, pins);
            Path root;
            Path go = goRoot.resolve("bin/go");
            List<String> packages = mainPackages(release, spec.mains(), "legacy Go source");
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
        });
    }

    /** The pins' Go settings (GoInputs), for the old Go: no user go env (it may hold flags, -buildvcs, that it rejects). */
    private Map<String, String> oldGoEnvironment(Path goRoot, Pins pins) {
        Map<String, String> env = environment(pins, goRoot);
        // The old go command hashes GOROOT_FINAL (default: GOROOT, here a path in the cache dir) into the link
        // action ID, which becomes the binary's build ID even with -trimpath: a constant keeps the binary
        // the same wherever the cache dir is (-trimpath already records GOROOT's files as go/...).
        env.put("GOROOT_FINAL", "go");
        env.put("GOTOOLCHAIN", "local");
        env.put("GOCACHE", cacheDir.resolve("legacy-gocache").toString());
        env.put("GOFLAGS", "");
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
