package dev.etcdmigrate.it.input;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Mount;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Bad input is refused with a clear message and exit 2, the data dir byte-identical afterwards. */
class BadInputIT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    /** Data one minor below the newest, so the runner has a step to run. */
    private Path dataNeedingAStep(Path dir) throws Exception {
        List<Release> releases = EtcdFixture.V3_RELEASES;
        Path data = dir.resolve("data");
        etcd.seed(releases.get(releases.size() - 2), data, 20);
        return data;
    }

    private static void assertRefused(List<String> args, Map<String, String> env, Path data, String... named)
            throws Exception {
        assertRefused(2, args, env, data, named);
    }

    /**
     * The run ends in a "refused" event with the exit code, before any etcd started, the data dir
     * byte-identical; its reason names each of {@code named} (paths, flags, variables, versions: data).
     */
    private static void assertRefused(
            int exitCode, List<String> args, Map<String, String> env, Path data, String... named) throws Exception {
        Map<String, String> before = TreeDigest.of(data.toRealPath());
        try (RunnerProcess runner = RunnerProcess.run(args, env)) {
            assertEquals(exitCode, runner.exitCode(), runner.output());
            JsonNode ending = runner.ending();
            assertEquals("refused", ending.path("event").asText(), runner.output());
            assertEquals(exitCode, ending.path("exitCode").asInt(), runner.output());
            String reason = ending.path("reason").asText();
            for (String name : named) {
                assertTrue(reason.contains(name), "'" + name + "' in the reason:\n" + runner.output());
            }
            assertEquals(0, runner.count("etcd-started"), "no etcd was started:\n" + runner.output());
        }
        assertEquals(before, TreeDigest.of(data.toRealPath()), "byte-identical");
    }

    @Test
    void aTakenPrivatePortIsRefusedBeforeAnythingIsTouched(@TempDir Path dir) throws Exception {
        Path data = dataNeedingAStep(dir);
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            List<String> args = new ArrayList<>(
                    RunnerArgs.migrate(data, EtcdFixture.newest().version()));
            args.addAll(List.of("--port", String.valueOf(taken.getLocalPort())));
            assertRefused(args, Map.of(), data, String.valueOf(taken.getLocalPort()), "--port");
        }
    }

    /**
     * Another patch of a bundled minor as the target (kubeadm's etcd image tag 3.5.21 in TARGET_VERSION; the
     * Kubernetes image's rollback recipe 2.2.1): refused (exit 3, nothing changed) naming the value to set.
     */
    @Test
    void anotherPatchOfABundledMinorIsRefusedNamingTheBundledPatch(@TempDir Path dir) throws Exception {
        Path data = dataNeedingAStep(dir);
        for (Release bundled :
                List.of(EtcdFixture.newest(), EtcdFixture.CATALOG.releases().getFirst())) {
            String other = bundled.minorLine() + ".1";
            List<String> args = new ArrayList<>(RunnerArgs.migrate(data, bundled.version()));
            args.subList(args.indexOf("--target-version"), args.indexOf("--target-version") + 2)
                    .clear();
            args.set(args.indexOf("--target-storage") + 1, bundled.line().v3Api() ? "etcd3" : "etcd2");
            assertRefused(
                    3,
                    args,
                    Map.of("TARGET_VERSION", other),
                    data,
                    "target " + other + " is not bundled",
                    "TARGET_VERSION=" + bundled.version());
        }
    }

    @Test
    void aSymlinkedDataDirIsRefused(@TempDir Path dir) throws Exception {
        Path data = dataNeedingAStep(dir);
        Path link = Files.createSymbolicLink(dir.resolve("link"), data);
        assertRefused(
                RunnerArgs.migrate(link, EtcdFixture.newest().version()),
                Map.of(),
                data,
                link.toString(),
                data.toString(),
                "--data-dir");
    }

    @Test
    void etcdVariablesThatDuplicateEtcdFlagsAreRefused(@TempDir Path dir) throws Exception {
        Path data = dataNeedingAStep(dir);
        List<String> args = new ArrayList<>(
                RunnerArgs.common("migrate", data, EtcdFixture.newest().version()));
        args.addAll(List.of("--", "--name", "it", "--listen-client-urls", "http://127.0.0.1:1"));
        assertRefused(
                args,
                Map.of("ETCD_NAME", "it", "ETCD_LISTEN_CLIENT_URLS", "http://0.0.0.0:2379"),
                data,
                "ETCD_LISTEN_CLIENT_URLS",
                "--listen-client-urls",
                "ETCD_NAME",
                "--name");
    }

    /** etcd ignores its flags and variables when given a config file: the runner cannot read what etcd will use. */
    @Test
    void etcdsConfigFileIsRefusedInEverySpelling(@TempDir Path dir) throws Exception {
        Path data = dataNeedingAStep(dir);
        Path config = Files.writeString(dir.resolve("etcd.yaml"), "name: other\n");
        for (List<String> etcdArgs :
                List.of(List.of("--config-file", config.toString()), List.of("-config-file=" + config))) {
            List<String> args = new ArrayList<>(
                    RunnerArgs.migrate(data, EtcdFixture.newest().version()));
            args.add("--");
            args.addAll(etcdArgs);
            assertRefused(args, Map.of(), data, config.toString(), "config-file");
        }
        assertRefused(
                RunnerArgs.migrate(data, EtcdFixture.newest().version()),
                Map.of("ETCD_CONFIG_FILE", config.toString()),
                data,
                config.toString(),
                "ETCD_CONFIG_FILE");
    }

    @Test
    void aBinaryThatIsNotExecutableIsRefused(@TempDir Path dir) throws Exception {
        Path data = dataNeedingAStep(dir);
        Path bin = Files.createDirectories(dir.resolve("bin"));
        for (Release r : EtcdFixture.CATALOG.releases()) {
            for (String tool : r.toolNames()) {
                Path real = EtcdFixture.binDir().resolve(tool + "-" + r.version());
                Files.createSymbolicLink(bin.resolve(tool + "-" + r.version()), real);
            }
        }
        Path target = bin.resolve("etcd-" + EtcdFixture.newest().version());
        Files.delete(target);
        Files.createFile(target, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-r--r--")));
        List<String> args =
                new ArrayList<>(RunnerArgs.migrate(data, EtcdFixture.newest().version()));
        args.addAll(List.of("--bin-dir", bin.toString()));
        assertRefused(args, Map.of(), data, target.toString());
    }

    /** A bin dir of links to the provisioned binaries, {@code name} linked to {@code actually}'s file instead. */
    private static Path binDirWith(Path dir, String name, String actually) throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        for (Release r : EtcdFixture.CATALOG.releases()) {
            for (String tool : r.toolNames()) {
                String file = tool + "-" + r.version();
                Files.createSymbolicLink(
                        bin.resolve(file), EtcdFixture.binDir().resolve(file.equals(name) ? actually : file));
            }
        }
        return bin;
    }

    /**
     * The binaries' versions are asked while the data is read; a step's etcd that is another release than its name
     * says is still refused before any etcd runs (the target's: TrustNothingIT).
     */
    @Test
    void aStepsEtcdThatIsAnotherReleaseIsRefused(@TempDir Path dir) throws Exception {
        List<Release> releases = EtcdFixture.V3_RELEASES;
        Path data = dir.resolve("data");
        etcd.seed(releases.get(releases.size() - 3), data, 20);
        String step = releases.get(releases.size() - 2).version();
        String other = releases.get(releases.size() - 3).version();
        Path bin = binDirWith(dir, "etcd-" + step, "etcd-" + other);
        List<String> args =
                new ArrayList<>(RunnerArgs.migrate(data, releases.getLast().version()));
        args.addAll(List.of("--bin-dir", bin.toString()));
        assertRefused(args, Map.of(), data, bin.resolve("etcd-" + step).toString(), other);
    }

    /** 3.6+ serve no v2 API, so they cannot hold etcd2 data: the plan is refused (exit 3) for each such line. */
    @Test
    void etcd2AtALineWithoutTheV2ApiIsRefused(@TempDir Path dir) throws Exception {
        Path data = dataNeedingAStep(dir);
        List<Release> withoutV2 = EtcdFixture.CATALOG.releases().stream()
                .filter(r -> r.line().v2Api() == Release.V2Api.NEVER)
                .toList();
        assertTrue(withoutV2.size() >= 2, "3.6 and 3.7 serve no v2 API: " + withoutV2);
        for (Release target : withoutV2) {
            assertRefused(
                    3,
                    RunnerArgs.migrate(data, target.version(), "--target-storage", "etcd2"),
                    Map.of(),
                    data,
                    target.version());
        }
    }

    /** Root ignores mode bits, so the data dir is made read-only by a read-only bind mount onto itself. */
    @Test
    void aReadOnlyDataDirIsRefusedBeforeAnyEtcdStarts(@TempDir Path dir) throws Exception {
        Path data = dataNeedingAStep(dir);
        try (Mount readOnly = Mount.readOnly(data)) {
            assertRefused(RunnerArgs.migrate(data, EtcdFixture.newest().version()), Map.of(), data, data.toString());
        }
    }

    /** ETCD_CREDS naming TLS files that are not there, or a certificate without its key, never reach etcd. */
    @Test
    void peerTlsFlagsInEtcdCredsThatCannotWorkAreRefused(@TempDir Path dir) throws Exception {
        Path data = dataNeedingAStep(dir);
        List<String> args = RunnerArgs.migrate(data, EtcdFixture.newest().version());
        assertRefused(
                args,
                Map.of("ETCD_CREDS", "--peer-cert-file=/nonexistent/cert.pem --peer-key-file /nonexistent/key.pem"),
                data,
                "ETCD_CREDS",
                "--peer-cert-file=/nonexistent/cert.pem",
                "--peer-key-file=/nonexistent/key.pem");
        Path cert = Files.writeString(dir.resolve("peer.crt"), "not checked for content, only for being there");
        assertRefused(
                args,
                Map.of("ETCD_CREDS", "--peer-cert-file=" + cert),
                data,
                "ETCD_CREDS",
                "--peer-cert-file",
                "--peer-key-file");
    }
}
