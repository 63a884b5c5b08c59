package dev.etcdmigrate.provision;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.process.ToolRunner;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Builds a pre-module etcd (2.x, 3.0-3.3) from its tagged source with the old Go it was made for.
 * Both the source (github.com/coreos/etcd@vX+incompatible) and the toolchain
 * (golang.org/toolchain@v0.0.1-goX.linux-ARCH) come from the Go module proxy through the host Go.
 * Go 1.22+ cannot be used: the binaries it makes of 2.x-3.2 panic at start in an old codec library.
 * Like upstream's build script of those releases, etcd gets -X .../version.GitSHA (from the catalog);
 * -s -w drop the symbol table and DWARF. The toolchain runs on this machine (hostGoArch) and
 * cross-compiles for goArch.
 */
final class LegacyGoSource implements BinarySource {

    private static final Duration TIMEOUT = Duration.ofMinutes(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path hostGo;
    private final Path cacheDir;
    static final String LDFLAGS = "-s -w";

    private final String hostGoArch;
    private final String goArch;
    private final ToolRunner tools;

    LegacyGoSource(Path hostGo, Path cacheDir, String hostGoArch, String goArch, ToolRunner tools) {
        this.hostGo = hostGo;
        this.cacheDir = cacheDir;
        this.hostGoArch = hostGoArch;
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
    public void fetch(Release release, Path into) throws Skipped, ProvisionException {
        Release.GoLegacy spec = release.source(Release.GoLegacy.class).orElseThrow(() -> new Skipped("the catalog has no legacy Go source for it"));
        if (!Files.isExecutable(hostGo)) {
            throw new Skipped("no Go toolchain at " + hostGo + " to fetch modules with (set --go or GO)");
        }
        Path work = cacheDir.resolve("legacy-build").resolve(release.version());
        try {
            Path goRoot = toolchain(spec.toolchain(), release);
            Path source = download(spec.module() + "@" + spec.moduleVersion(), release);
            Trees.deleteRecursively(work);
            Map<String, String> env = oldGoEnvironment(goRoot);
            Path root;
            if (spec.layout().equals("gopath")) {
                // dependencies ship in Godeps/_workspace with rewritten import paths
                Path gopath = work.resolve("gopath");
                root = gopath.resolve("src").resolve(spec.module());
                copyTree(source, root);
                env.put("GO111MODULE", "off");
                env.put("GOPATH", gopath.toString());
            } else {
                root = work.resolve("src");
                copyTree(source, root);
                Trees.deleteRecursively(root.resolve("cmd")); // the vendor tree module zips omit: a leftover
                copyResource(release, "go.mod", root);
                copyResource(release, "go.sum", root);
                env.put("GO111MODULE", "on");
                env.put("GOPATH", cacheDir.resolve("legacy-gopath").toString());
                env.put("GOFLAGS", "-mod=readonly");
            }
            Path go = goRoot.resolve("bin/go");
            for (String tool : release.toolNames()) {
                String pkg = spec.mains().get(tool);
                if (pkg == null) {
                    throw new ProvisionException("the catalog's legacy Go source names no main package for " + tool);
                }
                String ldflags = tool.equals("etcd") ? LDFLAGS + " -X " + spec.module() + "/version.GitSHA=" + spec.gitSha() : LDFLAGS;
                tools.run(spec.toolchain() + "-" + release.version(), List.of(go.toString(), "build", "-trimpath",
                        "-installsuffix", "cgo", "-ldflags", ldflags, "-o", into.resolve(tool).toString(), pkg), env, root, TIMEOUT);
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

    /** The old Go, unpacked once into the cache; the module zip loses the executable bits. */
    private Path toolchain(String version, Release release) throws IOException, ToolRunner.ToolFailedException, Skipped {
        Path goRoot = cacheDir.resolve("toolchains").resolve(version);
        if (Files.isExecutable(goRoot.resolve("bin/go"))) {
            return goRoot;
        }
        Path zipDir = download("golang.org/toolchain@v0.0.1-" + version + ".linux-" + hostGoArch, release);
        Path partial = goRoot.resolveSibling(version + ".partial");
        Trees.deleteRecursively(partial);
        copyTree(zipDir, partial);
        for (Path dir : List.of(partial.resolve("bin"), partial.resolve("pkg/tool/linux_" + hostGoArch))) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rwxr-xr-x"));
                }
            }
        }
        Trees.deleteRecursively(goRoot);
        Files.move(partial, goRoot, StandardCopyOption.ATOMIC_MOVE);
        return goRoot;
    }

    /** `go mod download -json MODULE@VERSION` with the host Go; returns the extracted directory. */
    private Path download(String moduleAtVersion, Release release) throws ToolRunner.ToolFailedException, IOException, Skipped {
        Path scratch = Files.createDirectories(cacheDir.resolve("legacy-download"));
        Map<String, String> env = new HashMap<>(System.getenv());
        env.put("GO111MODULE", "on");
        env.put("GOTOOLCHAIN", "local");
        env.put("GOFLAGS", "-mod=mod");
        ToolRunner.Result result = tools.run("go-" + release.version(), List.of(hostGo.toString(), "mod", "download", "-json",
                moduleAtVersion), env, scratch, TIMEOUT);
        String dir = JSON.readTree(result.output().substring(result.output().indexOf('{'))).path("Dir").asText("");
        if (dir.isEmpty()) {
            throw new Skipped("go mod download " + moduleAtVersion + " named no directory");
        }
        return Path.of(dir);
    }

    private Map<String, String> oldGoEnvironment(Path goRoot) {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.keySet().removeIf(k -> k.startsWith("GO"));
        env.put("GOENV", "off"); // ~/.config/go/env may hold flags (-buildvcs) that old Go rejects
        env.put("GOROOT", goRoot.toString());
        env.put("GOTOOLCHAIN", "local");
        env.put("CGO_ENABLED", "0");
        env.put("GOOS", "linux");
        env.put("GOARCH", goArch);
        env.put("GOCACHE", cacheDir.resolve("legacy-gocache").toString());
        env.put("GOPROXY", System.getenv().getOrDefault("GOPROXY", "https://proxy.golang.org"));
        env.put("GOFLAGS", "");
        env.put("PATH", goRoot.resolve("bin") + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        return env;
    }

    private static void copyResource(Release release, String name, Path root) throws IOException, Skipped {
        String resource = "/dev/etcdmigrate/catalog/legacy/" + release.version() + "/" + name;
        try (InputStream in = LegacyGoSource.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new Skipped("the runner's jar has no " + resource + " (versions/legacy/" + release.version() + "/" + name + ")");
            }
            Files.copy(in, root.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Copies a read-only module cache tree into a writable one. */
    private static void copyTree(Path from, Path to) throws IOException {
        Files.walkFileTree(from, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
                Path target = to.resolve(from.relativize(dir).toString());
                Files.createDirectories(target);
                Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                Path target = to.resolve(from.relativize(file).toString());
                Files.copy(file, target, StandardCopyOption.REPLACE_EXISTING);
                Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-r--r--"));
                return FileVisitResult.CONTINUE;
            }
        });
    }
}
