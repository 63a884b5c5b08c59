package dev.etcdmigrate.it.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `provision` checks every input against the catalog's pins itself: a Go module or a Debian package
 * that differs by one byte is refused with both hashes, and nothing of the release is installed, even
 * with every Go setting that switches Go's own checks off in the environment.
 */
class ProvisionPinsIT {

    /** Go settings that would switch Go's checks off (or break the build) if the runner passed them on. */
    private static final Map<String, String> HOSTILE_GO_ENV = Map.of(
            "GOFLAGS",
            "-mod=vendor",
            "GONOSUMDB",
            "*",
            "GONOSUMCHECK",
            "1",
            "GOSUMDB",
            "off",
            "GOPRIVATE",
            "*",
            "GOINSECURE",
            "*",
            "GONOSUMCHECKS",
            "1");

    private static String pin(String version, String kind, String name) throws Exception {
        Path file = Path.of(System.getProperty("user.dir"))
                .resolveSibling("versions")
                .resolve("pins")
                .resolve(version)
                .resolve("linux-amd64.pins");
        for (String line : Files.readAllLines(file)) {
            String[] f = line.split(" ");
            if (f.length == 3 && f[0].equals(kind) && f[1].equals(name)) return f[2];
        }
        throw new AssertionError("no pin " + kind + " " + name + " in " + file);
    }

    /** `provision` of one release for linux/amd64 into {@code bin}, downloads cached in {@code cache}. */
    private static List<String> provision(Path bin, Path cache, String version, String... flags) {
        List<String> args = new ArrayList<>(List.of(
                "provision",
                "--bin-dir",
                bin.toString(),
                "--platform",
                "linux/amd64",
                "--cache-dir",
                cache.toString()));
        args.addAll(List.of(flags));
        args.add(version);
        return args;
    }

    private static String run(Path dir, String... command) throws Exception {
        Process p = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(5, TimeUnit.MINUTES), String.join(" ", command));
        assertEquals(0, p.exitValue(), String.join(" ", command) + ": " + out);
        return out.strip();
    }

    private static List<String> listing(Path dir) throws Exception {
        try (Stream<Path> walk = Files.walk(dir)) {
            return walk.map(p -> dir.relativize(p).toString()).sorted().toList();
        }
    }

    /**
     * A GOPROXY=file:// directory made of this machine's module downloads (symbolic links), except
     * go.etcd.io/etcd/api/v3@v3.6.16, whose zip has one byte of one file changed (a valid zip otherwise).
     */
    @Test
    void aGoModuleWithOneChangedByteIsRefusedAndNothingInstalled(@TempDir Path dir) throws Exception {
        Path go = Path.of(System.getenv().getOrDefault("GO", "/usr/local/go/bin/go"));
        Path downloads = Path.of(run(dir, go.toString(), "env", "GOMODCACHE")).resolve("cache/download");
        Path proxy = dir.resolve("proxy");
        Path tampered = Path.of("go.etcd.io/etcd/api/v3/@v/v3.6.16.zip");
        assertTrue(
                Files.isRegularFile(downloads.resolve(tampered)),
                "the module downloads of a 3.6.16 provisioning in " + downloads);
        try (Stream<Path> walk = Files.walk(downloads)) {
            for (Path f : walk.filter(Files::isRegularFile).toList()) {
                Path rel = downloads.relativize(f);
                if (rel.startsWith("sumdb") || rel.toString().endsWith(".lock") || rel.equals(tampered)) continue;
                Files.createDirectories(proxy.resolve(rel).getParent());
                Files.createSymbolicLink(proxy.resolve(rel), f);
            }
        }
        try (ZipInputStream in = new ZipInputStream(Files.newInputStream(downloads.resolve(tampered)));
                ZipOutputStream out = new ZipOutputStream(Files.newOutputStream(proxy.resolve(tampered)))) {
            boolean changed = false;
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                byte[] bytes = in.readAllBytes();
                if (!changed
                        && !e.isDirectory()
                        && bytes.length > 0
                        && e.getName().endsWith(".go")) {
                    bytes[bytes.length - 1] ^= 1;
                    changed = true;
                }
                out.putNextEntry(new ZipEntry(e.getName()));
                out.write(bytes);
                out.closeEntry();
            }
            assertTrue(changed);
        }
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Map<String, String> env = new java.util.HashMap<>(HOSTILE_GO_ENV);
        env.put("GOPROXY", proxy.toUri().toString());
        env.put("GOMODCACHE", dir.resolve("modcache").toString());
        env.put("GOCACHE", dir.resolve("gocache").toString());
        String module = "go.etcd.io/etcd/api/v3@v3.6.16";
        String pinned = pin("3.6.16", "go", module);
        try (RunnerProcess runner =
                RunnerProcess.run(provision(bin, dir.resolve("cache"), "3.6.16", "--go", go.toString()), env)) {
            assertEquals(1, runner.exitCode(), runner.output());
            String reason = runner.ending().path("reason").asText();
            assertEquals("failed", runner.ending().path("event").asText());
            assertTrue(
                    reason.contains(module) && reason.contains("expected " + pinned + ", got h1:"),
                    "the module and both hashes: " + reason);
            System.out.println("ProvisionPinsIT go refusal: " + reason);
            String got = reason.substring(reason.indexOf("got h1:") + 4, reason.indexOf("got h1:") + 4 + 47);
            assertNotEquals(pinned, got);
            assertEquals(0, runner.events("provisioned").size(), runner.output());
        }
        assertEquals(List.of(""), listing(bin), "nothing installed");
        try (Stream<Path> left = Files.list(dir.resolve("cache/etcd-migrate"))) {
            assertFalse(left.anyMatch(
                    p -> p.getFileName().toString().equals("go-build") && Files.exists(p.resolve("3.6.16"))));
        }
    }

    /** `--version` names, per bundled binary, its pinned source with that source's hash, and that the binary is that build. */
    @Test
    void versionNamesEachBinarysSourceAndChecksItsHash() throws Exception {
        Path bin = EtcdFixture.binDir();
        try (RunnerProcess runner = RunnerProcess.run(List.of("--version", "--bin-dir", bin.toString()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            String out = runner.output();
            int binaries = 0;
            for (var release : EtcdFixture.CATALOG.releases()) {
                for (String tool : release.toolNames()) {
                    String v = release.version();
                    String from = pin(v, "from", tool);
                    String kind = from.substring(0, from.indexOf(':'));
                    String line = "    " + tool + "-" + v + ": from " + from + " "
                            + pin(v, kind, from.substring(kind.length() + 1));
                    assertTrue(out.contains(line), line + " in " + out);
                    assertTrue(
                            out.contains(tool + "-" + v + ": ")
                                    && out.lines()
                                            .anyMatch(l -> l.startsWith(line)
                                                    && l.endsWith("; matches its pin " + pinUnchecked(v, tool))),
                            tool + "-" + v + " matches in " + out);
                    binaries++;
                }
            }
            assertEquals(23, binaries, "2.2-3.4: etcd, etcdctl; 3.5-3.7: and etcdutl");
        }
    }

    private static String pinUnchecked(String version, String tool) {
        try {
            return pin(version, "bin", tool);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    /** Debian's etcd-server package with one byte changed, left in the package cache where `provision` keeps them. */
    @Test
    void aDebianPackageWithOneChangedByteIsRefusedAndNothingInstalled(@TempDir Path dir) throws Exception {
        String name = "etcd-server_3.4.23-4+b4_amd64";
        String pinned = pin("3.4.23", "deb", name);
        Path download = Files.createDirectories(dir.resolve("download"));
        run(download, "/usr/bin/apt-get", "download", "-o", "APT::Sandbox::User=root", "etcd-server:amd64=3.4.23-4+b4");
        Path real;
        try (Stream<Path> debs = Files.list(download)) {
            real = debs.filter(p -> p.toString().endsWith(".deb")).findFirst().orElseThrow();
        }
        assertEquals(
                pinned,
                "sha256:" + run(download, "sha256sum", real.toString()).split(" ")[0],
                "the real package matches its pin");
        Path archives = Files.createDirectories(dir.resolve("cache/etcd-migrate/debian-archives"));
        byte[] bytes = Files.readAllBytes(real);
        bytes[bytes.length / 2] ^= 1;
        Path deb = archives.resolve(name + ".deb");
        Files.write(deb, bytes);

        Path bin = Files.createDirectories(dir.resolve("bin"));
        try (RunnerProcess runner = RunnerProcess.run(provision(bin, dir.resolve("cache"), "3.4.23"), HOSTILE_GO_ENV)) {
            assertEquals(1, runner.exitCode(), runner.output());
            String reason = runner.ending().path("reason").asText();
            assertTrue(
                    reason.contains(name) && reason.contains("expected " + pinned + ", got sha256:"),
                    "the package and both hashes: " + reason);
            System.out.println("ProvisionPinsIT deb refusal: " + reason);
            assertEquals(0, runner.events("provisioned").size(), runner.output());
        }
        assertEquals(List.of(""), listing(bin), "nothing installed");
        assertFalse(Files.exists(deb), "the differing package is not kept");
    }
}
