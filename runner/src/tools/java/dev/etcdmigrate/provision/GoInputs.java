package dev.etcdmigrate.provision;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.process.ToolRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
import java.util.Set;
import java.util.stream.Stream;

/**
 * What the Go builds download, checked against the pins by the runner itself: a module's extracted
 * directory (what the compiler reads) is hashed here, and the go.sum lines Go wrote are compared
 * line by line. Go's own checks are not relied on, and the environment that could switch them off
 * (GOFLAGS, GONOSUMDB, GONOSUMCHECK, GOPRIVATE, GOINSECURE, GOSUMDB, the user's go env file) is
 * replaced: when verifying, GOSUMDB=off (the pins are the check, and offline proxies work); when
 * recording pins, GOSUMDB=sum.golang.org, so what gets pinned is what the checksum database knows.
 */
final class GoInputs {

    private static final Duration TIMEOUT = Duration.ofMinutes(30);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Kept from the caller's environment: where modules come from and where Go keeps its caches. */
    private static final Set<String> KEPT = Set.of("GOPROXY", "GOMODCACHE", "GOPATH", "GOCACHE");

    private final Path hostGo;
    private final Path cacheDir;
    private final String hostGoArch;
    private final ToolRunner tools;

    GoInputs(Path hostGo, Path cacheDir, String hostGoArch, ToolRunner tools) {
        this.hostGo = hostGo;
        this.cacheDir = cacheDir;
        this.hostGoArch = hostGoArch;
        this.tools = tools;
    }

    Path hostGo() {
        return hostGo;
    }

    /** The caller's environment without any Go setting but KEPT, then the ones the checks need. */
    static Map<String, String> environment(Pins pins) {
        Map<String, String> env = new HashMap<>(System.getenv());
        env.keySet().removeIf(k -> k.startsWith("GO") && !KEPT.contains(k));
        env.put("GOENV", "off"); // ~/.config/go/env may hold GOFLAGS, GONOSUMDB, GOSUMDB=off
        env.put("GOTOOLCHAIN", "local");
        env.put("GOFLAGS", "-mod=mod");
        env.put("GO111MODULE", "on");
        env.put("GOSUMDB", pins.recording() ? "sum.golang.org" : "off");
        env.putIfAbsent("GOPROXY", "https://proxy.golang.org,direct");
        return env;
    }

    /**
     * A Go toolchain from the module proxy (golang.org/toolchain@v0.0.1-VERSION.linux-HOSTARCH), checked
     * against its pin, unpacked once into the cache (the module zip loses the executable bits) and checked
     * again there on every use: the copy is what runs.
     */
    Path toolchain(String version, Pins pins, String label)
            throws IOException, ToolRunner.ToolFailedException, BinarySource.Skipped, ProvisionException {
        String module = "golang.org/toolchain@v0.0.1-" + version + ".linux-" + hostGoArch;
        pins.check("from", "toolchain", "go:" + module);
        Path goRoot = cacheDir.resolve("toolchains").resolve(version);
        if (Files.isExecutable(goRoot.resolve("bin/go"))) {
            String actual = GoHash.ofModuleDir(goRoot, module);
            if (pins.recording() || pins.matches("go", module, actual)) {
                pins.check("go", module, actual, Pins.Source.dir("the unpacked toolchain", goRoot));
                return goRoot;
            }
            // an unpacked copy that differs: unpack it again from a checked download
            Trees.deleteRecursively(goRoot);
        }
        Path zipDir = download(module, pins, label);
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
        if (!pins.recording()) {
            pins.check(
                    "go",
                    module,
                    GoHash.ofModuleDir(partial, module),
                    Pins.Source.dir("the unpacked toolchain", partial));
        }
        Trees.deleteRecursively(goRoot);
        Files.move(partial, goRoot, StandardCopyOption.ATOMIC_MOVE);
        return goRoot;
    }

    /** `go mod download -json MODULE@VERSION` with the host Go; its directory, checked against the pin. */
    Path download(String moduleAtVersion, Pins pins, String label)
            throws ToolRunner.ToolFailedException, IOException, BinarySource.Skipped, ProvisionException {
        Path scratch = Files.createDirectories(cacheDir.resolve("go-download"));
        Map<String, String> env = environment(pins);
        boolean fileProxy =
                java.util.Arrays.stream(env.get("GOPROXY").split("[,|]")).allMatch(p -> p.startsWith("file://"));
        if (moduleAtVersion.startsWith("golang.org/toolchain@") && !fileProxy) {
            // Go requires the checksum database for toolchain modules (no go.sum can list them) and refuses them
            // with GOSUMDB=off, except from a file:// proxy (which need not serve sumdb/); the pin is checked here
            // either way
            env.put("GOSUMDB", "sum.golang.org");
        }
        ToolRunner.Result result = tools.run(
                label, List.of(hostGo.toString(), "mod", "download", "-json", moduleAtVersion), env, scratch, TIMEOUT);
        String dir = JSON.readTree(result.output().substring(result.output().indexOf('{')))
                .path("Dir")
                .asText("");
        if (dir.isEmpty()) {
            throw new BinarySource.Skipped("go mod download " + moduleAtVersion + " named no directory");
        }
        pins.check(
                "go",
                moduleAtVersion,
                GoHash.ofModuleDir(Path.of(dir), moduleAtVersion),
                Pins.Source.dir("Go's module cache", Path.of(dir)));
        return Path.of(dir);
    }

    /**
     * Checks what a build in dir is about to compile: every line of its go.sum (zip and go.mod hashes,
     * as Go computed them from what it downloaded) and, hashed here, the extracted directory of every
     * module a package of the build comes from. Run after `go list -deps` downloaded them; the build
     * then runs with GOPROXY=off, so it reads nothing that was not checked.
     */
    void checkBuild(Path go, Map<String, String> env, Path dir, List<String> packages, Pins pins, String label)
            throws ToolRunner.ToolFailedException, IOException, ProvisionException {
        List<String> list = new java.util.ArrayList<>(List.of(
                go.toString(),
                "list",
                "-deps",
                "-f",
                "{{with .Module}}{{if .Version}}{{.Path}}@{{.Version}}\t{{.Dir}}{{end}}{{end}}"));
        list.addAll(packages);
        ToolRunner.Result listed = tools.run(label, list, env, dir, TIMEOUT);
        Map<String, Path> modules = new java.util.TreeMap<>();
        for (String line : listed.output().split("\n")) {
            int tab = line.indexOf('\t');
            if (tab > 0)
                modules.put(
                        line.substring(0, tab).strip(),
                        Path.of(line.substring(tab + 1).strip()));
        }
        Path goSum = dir.resolve("go.sum");
        if (Files.isRegularFile(goSum)) {
            for (String line : Files.readAllLines(goSum, StandardCharsets.UTF_8)) {
                String[] f = line.strip().split("\\s+");
                if (f.length != 3) continue;
                if (f[1].endsWith("/go.mod")) {
                    pins.check(
                            "go.mod",
                            f[0] + "@" + f[1].substring(0, f[1].length() - "/go.mod".length()),
                            f[2],
                            Pins.Source.of(goSum.toString()));
                } else {
                    pins.check("go", f[0] + "@" + f[1], f[2], Pins.Source.of(goSum.toString()));
                }
            }
        }
        for (var m : modules.entrySet()) {
            pins.check(
                    "go",
                    m.getKey(),
                    GoHash.ofModuleDir(m.getValue(), m.getKey()),
                    Pins.Source.dir("Go's module cache", m.getValue()));
        }
    }

    /** Copies a read-only module cache tree into a writable one. */
    static void copyTree(Path from, Path to) throws IOException {
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
