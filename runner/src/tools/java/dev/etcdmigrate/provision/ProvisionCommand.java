package dev.etcdmigrate.provision;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.cli.Flag;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.process.ToolRunner;
import dev.etcdmigrate.version.EtcdVersion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** `etcd-migrate provision --bin-dir DIR [VERSION...]`: installs the catalog's binaries into DIR. */
public final class ProvisionCommand {

    public static final List<Flag> FLAGS = List.of(
            Flag.value(
                    "bin-dir", null, "DIR", "required", "directory to fill with etcd-<v>, etcdctl-<v>, etcdutl-<v>."),
            Flag.value(
                    "catalog", null, "FILE", "the catalog in the runner's jar", "versions catalog to provision from."),
            Flag.value(
                    "cache-dir",
                    "XDG_CACHE_HOME",
                    "DIR",
                    "$XDG_CACHE_HOME, else ~/.cache",
                    "base directory for build work; it goes to DIR/etcd-migrate."),
            Flag.value(
                    "go",
                    "GO",
                    "PATH",
                    "go on PATH, else /usr/local/go/bin/go",
                    "the Go toolchain for offline builds from the Go module proxy (build-time only)."),
            Flag.value(
                    "platform",
                    null,
                    "OS/ARCH",
                    "this machine's, e.g. linux/amd64",
                    "which platform's binaries to install (linux/amd64 or linux/arm64; another than this machine's is checked under qemu-user-static)."),
            Flag.value(
                    "pins-dir",
                    null,
                    "DIR",
                    "the pins in the runner's jar (versions/pins)",
                    "where the pins are: DIR/<version>/linux-<arch>.pins, the hash of every input and binary."),
            Flag.toggle(
                    "update-pins",
                    "build as usual, but record every input's and binary's hash as the new pins in --pins-dir (default"
                            + " ./versions/pins) and print the diff; for a new bundled release, then review and commit it."),
            Flag.toggle(
                    "allow-unverified-download",
                    "use an official tarball even when the catalog has no confirmed SHA-256 for it (its SHA-256 is printed)."));

    private final Log log;
    private final Children children;

    public ProvisionCommand(Log log, Children children) {
        this.log = log;
        this.children = children;
    }

    /**
     * {@code ~/.cache/etcd-migrate}, with {@code ~} as the shell and the scripts read it: $HOME, which Java's
     * {@code user.home} (the passwd entry) is not when HOME is set otherwise. A CI run under another HOME once
     * found the Go toolchains and the arm64 sysroot the scripts then looked for elsewhere.
     */
    static Path defaultCacheDir(String homeEnv, String userHome) {
        String home = homeEnv == null || homeEnv.isBlank() ? userHome : homeEnv;
        return Path.of(home, ".cache", "etcd-migrate");
    }

    public int run(ParsedArgs args) throws Exception {
        Path binDir = Path.of(
                        args.get("bin-dir").orElseThrow(() -> new UsageException("provision needs --bin-dir DIR")))
                .toAbsolutePath()
                .normalize();
        Catalog catalog;
        try {
            catalog = args.get("catalog").map(Path::of).map(Catalog::load).orElseGet(Catalog::bundled);
        } catch (RuntimeException e) {
            throw new UsageException(e.getMessage());
        }
        List<Release> releases = new ArrayList<>();
        for (String v : args.positional()) {
            EtcdVersion version;
            try {
                version = EtcdVersion.parse(v);
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
            releases.add(catalog.release(version)
                    .orElseThrow(() -> new UsageException(
                            "etcd " + v + " is not in the catalog (it has " + catalog.versionList() + ")")));
        }
        if (releases.isEmpty()) {
            releases.addAll(catalog.releases());
        }
        Path cacheDir = args.get("cache-dir")
                .map(d -> Path.of(d).resolve("etcd-migrate"))
                .orElse(defaultCacheDir(System.getenv("HOME"), System.getProperty("user.home")));
        Path go = args.get("go").map(Path::of).orElseGet(ProvisionCommand::findGo);
        String platform = args.get("platform").orElseGet(ProvisionCommand::thisPlatform);

        String host = thisPlatform();
        if (!platform.matches("linux/(amd64|arm64)")) {
            throw new UsageException("--platform must be linux/amd64 or linux/arm64, got " + platform);
        }
        String arch = platform.substring("linux/".length());
        String hostArch = host.substring("linux/".length());
        ToolRunner tools = new ToolRunner(log, children);
        boolean update = args.isSet("update-pins");
        Optional<Path> pinsDir = args.get("pins-dir").map(Path::of);
        if (update && pinsDir.isEmpty()) {
            pinsDir = Optional.of(Path.of("versions", "pins"));
        }
        if (update && !Files.isDirectory(pinsDir.get())) {
            throw new UsageException("--update-pins writes into " + pinsDir.get()
                    + ", which is not a directory (run it in the repository, or set --pins-dir)");
        }
        if (update && args.isSet("allow-unverified-download")) {
            throw new UsageException(
                    "--update-pins records what the source builds read and make; --allow-unverified-download would take a tarball instead");
        }
        Optional<Path> pinsFrom = pinsDir;
        // A foreign binary must still prove its version: run it under qemu-user-static's emulator, with a
        // glibc from Debian's pinned libc6 package when this machine has none for arch (versions/pins/sysroot/).
        Pins sysrootPins = Pins.load(pinsFrom, "sysroot", platform, update);
        List<String> runPrefix = platform.equals(host) ? List.of() : emulator(arch, cacheDir, tools, sysrootPins);
        GoInputs goInputs = new GoInputs(go, cacheDir, hostArch, tools);
        Provisioner provisioner = new Provisioner(
                binDir,
                List.of(
                        new TarballSource(platform, args.isSet("allow-unverified-download"), log),
                        new GoModuleSource(goInputs, cacheDir, arch, tools),
                        new LegacyGoSource(goInputs, cacheDir, arch, tools),
                        new DebianPackageSource(cacheDir, arch, !platform.equals(host), tools)),
                runPrefix,
                tools,
                log,
                release -> Pins.load(pinsFrom, release.version(), platform, update));
        Files.createDirectories(binDir);
        List<String> failures = new ArrayList<>();
        int checked = 0;
        StringBuilder diff = new StringBuilder();
        for (Release release : releases) {
            try {
                Pins pins = provisioner.provision(release);
                checked += pins.checked();
                if (update && pins.recordedCount() == 0) {
                    // e.g. a verified tarball was taken: it pins nothing, and an empty file would drop the old pins
                    throw new ProvisionException(
                            "nothing recorded (installed from a source that is not pinned); its pins are left as they were");
                }
                if (update) {
                    Path file = pinsFrom.orElseThrow().resolve(Pins.fileName(release.version(), platform));
                    Files.createDirectories(file.getParent());
                    Files.writeString(file, pins.recordedText(), java.nio.charset.StandardCharsets.UTF_8);
                    String d = pins.diff();
                    diff.append("--- ").append(file).append(d.isEmpty() ? " (unchanged)\n" : "\n" + d);
                }
            } catch (ProvisionException e) {
                failures.add("etcd " + release.version() + ": " + e.getMessage());
            }
        }
        if (update && sysrootPins.recordedCount() > 0) {
            Path file = pinsFrom.orElseThrow().resolve(Pins.fileName("sysroot", platform));
            Files.createDirectories(file.getParent());
            Files.writeString(file, sysrootPins.recordedText(), java.nio.charset.StandardCharsets.UTF_8);
            String d = sysrootPins.diff();
            diff.append("--- ").append(file).append(d.isEmpty() ? " (unchanged)\n" : "\n" + d);
        }
        checked += sysrootPins.checked();
        if (update) {
            // for the reviewer: what the new pins change, per file
            System.out.print(diff);
            System.out.flush();
        } else {
            log.info(checked + " hashes matched their pins (" + platform + "; " + provisioner.recalled()
                    + " of binaries unchanged since their last full hash)");
        }
        if (!failures.isEmpty()) {
            // every release was tried; the run fails with each one's reason (exit 1)
            throw new ProvisionException("could not provision " + String.join("; ", failures) + ". " + binDir
                    + " holds only complete installs");
        }
        log.info("provisioned " + releases.size() + " release(s) in " + binDir);
        return ExitStatus.OK.code();
    }

    /**
     * qemu-user-static for arch, with `-L SYSROOT` when this machine lacks arch's dynamic loader: Debian's
     * 3.4.23 binaries are dynamically linked against glibc (the Go builds are static), so their version check
     * needs the target's glibc, taken from Debian's libc6:ARCH package (`dpkg --add-architecture ARCH` and
     * `apt-get update` first). Without it the static binaries still check and the dynamic ones are refused.
     * etcd 2.3-3.3 exit at start, even for --version, on a platform their etcdmain does not support (arm64
     * became supported in 3.4) unless ETCD_UNSUPPORTED_ARCH names it: the check runs them with it set.
     */
    private List<String> emulator(String arch, Path cacheDir, ToolRunner tools, Pins pins)
            throws UsageException, ProvisionException {
        String qemu = findOnPath("qemu-" + (arch.equals("arm64") ? "aarch64" : "x86_64") + "-static");
        List<String> prefix = List.of("/usr/bin/env", "ETCD_UNSUPPORTED_ARCH=" + arch, qemu);
        String loader = arch.equals("arm64") ? "lib/ld-linux-aarch64.so.1" : "lib64/ld-linux-x86-64.so.2";
        if (Files.exists(Path.of("/", loader))) {
            return prefix;
        }
        Path sysroot = cacheDir.resolve("sysroot-" + arch);
        if (!Files.exists(sysroot.resolve(loader))) {
            try {
                Map<String, String> env = new HashMap<>(System.getenv());
                Path deb = new DebianPackageSource(cacheDir, arch, true, tools).archive("libc6", pins, env);
                Path partial = cacheDir.resolve("sysroot-" + arch + ".partial");
                Trees.deleteRecursively(partial);
                tools.run(
                        "dpkg-deb",
                        List.of("/usr/bin/dpkg-deb", "-x", deb.toString(), partial.toString()),
                        env,
                        cacheDir,
                        Duration.ofMinutes(5));
                Trees.deleteRecursively(sysroot);
                Files.move(partial, sysroot);
            } catch (ToolRunner.ToolFailedException | IOException | BinarySource.Skipped e) {
                log.warn("no glibc for " + arch + " to check dynamically linked binaries under " + qemu + ": "
                        + e.getMessage());
                return prefix;
            }
        }
        return List.of(prefix.get(0), prefix.get(1), qemu, "-L", sysroot.toString());
    }

    static Path findGo() {
        String path = Optional.ofNullable(System.getenv("PATH")).orElse("");
        for (String dir : path.split(":")) {
            if (dir.isEmpty()) continue;
            Path candidate = Path.of(dir, "go");
            if (Files.isExecutable(candidate)) return candidate;
        }
        return Path.of("/usr/local/go/bin/go");
    }

    private static String findOnPath(String name) throws UsageException {
        for (String dir : Optional.ofNullable(System.getenv("PATH")).orElse("").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name)))
                return Path.of(dir, name).toString();
        }
        if (Files.isExecutable(Path.of("/usr/bin", name))) return "/usr/bin/" + name;
        throw new UsageException(
                name + " is needed to check binaries of another platform (Debian: apt-get install qemu-user-static)");
    }

    static String thisPlatform() {
        String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
        String goArch = switch (arch) {
            case "amd64", "x86_64" -> "amd64";
            case "aarch64", "arm64" -> "arm64";
            default -> arch;
        };
        return "linux/" + goArch;
    }
}
