package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.dockerjava.api.command.InspectContainerResponse;
import dev.etcdmigrate.cli.Help;
import dev.etcdmigrate.cli.StatusFlags;
import dev.etcdmigrate.it.support.EtcdGateway;
import dev.etcdmigrate.it.support.Poll;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.testcontainers.containers.BindMode;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.startupcheck.OneShotStartupCheckStrategy;
import org.testcontainers.containers.wait.strategy.WaitStrategy;
import org.testcontainers.utility.DockerImageName;

/**
 * The image as an operator runs it: the locally loaded image (system property "image", loaded by
 * `podman load` in pre-integration-test; never pulled), a host directory as the data volume, the
 * runner's flags, `--`, then etcd's flags. Needs DOCKER_HOST, TESTCONTAINERS_RYUK_DISABLED=true and
 * TESTCONTAINERS_HOST_OVERRIDE=localhost (failsafe sets them).
 */
class ImageIT {

    /** The default flavour (etcd 3.4-3.7) and `-full` (every bundled release, for etcd2 and pre-3.4 data). */
    static final DockerImageName IMAGE = DockerImageName.parse(System.getProperty("image", "etcd-migrate:3.7.3-0"));

    static final DockerImageName IMAGE_FULL =
            DockerImageName.parse(System.getProperty("image.full", "etcd-migrate:3.7.3-0-full"));
    static final String NEWEST = System.getProperty("etcd.newest.version", "3.7.3");
    static final String DATA = "/var/etcd/data";
    /** etcd's own flags after `--`: inside a container it must listen on 0.0.0.0 for the published port. */
    static final List<String> SERVE = List.of(
            "--", "--listen-client-urls", "http://0.0.0.0:2379", "--advertise-client-urls", "http://127.0.0.1:2379");

    static final Duration MIGRATION = Duration.ofMinutes(4);

    @TempDir
    Path tmp;

    private final List<GenericContainer<?>> containers = new ArrayList<>();

    @AfterEach
    void stopContainers() {
        containers.forEach(GenericContainer::stop);
    }

    @Test
    void emptyVolumeBecomesTargetEtcdServingWrites() throws Exception {
        Path data = dataDir();
        GenericContainer<?> etcd = serving(data, DATA, runnerArgs("--target-version", NEWEST));
        EtcdGateway gateway = gateway(etcd);
        gateway.awaitWrite(Duration.ofSeconds(30));
        gateway.put("/image-it/fresh", "yes");
        assertEquals(Optional.of("yes"), gateway.get("/image-it/fresh"));
        assertEquals(Optional.of(NEWEST), gateway.serverVersion());
        assertEquals(NEWEST + "/etcd3", versionTxt(data));
    }

    /** 3.5.35 data (20 keys) carried one minor up, and two (3.5 -> 3.6 -> newest). */
    @ParameterizedTest
    @ValueSource(strings = {"3.6.16", "newest"})
    void dataOfAnOlderBundledVersionIsMigratedAndServed(String targetVersion) throws Exception {
        String target = targetVersion.equals("newest") ? NEWEST : targetVersion;
        Path data = dataDir();
        HostEtcd.writeDataDir("3.5.35", data, 20);
        GenericContainer<?> etcd = serving(data, DATA, runnerArgs("--target-version", target));
        EtcdGateway gateway = gateway(etcd);
        gateway.awaitWrite(Duration.ofSeconds(30));
        assertEquals(Optional.of(target), gateway.serverVersion());
        for (int i = 0; i < 20; i++) {
            assertEquals(Optional.of("value-" + i), gateway.get("/image-it/key-" + i), "key-" + i);
        }
        assertEquals(target + "/etcd3", versionTxt(data));
    }

    @Test
    void initContainerModeExitsZeroWithDataAtTarget() throws Exception {
        Path data = dataDir();
        HostEtcd.writeDataDir("3.5.35", data, 5);
        GenericContainer<?> init = new GenericContainer<>(IMAGE)
                .withFileSystemBind(data.toString(), DATA, BindMode.READ_WRITE)
                .withEnv("ETCD_NAME", HostEtcd.MEMBER)
                .withCommand("--target-version", "3.6.16", "--no-exec")
                .withStartupCheckStrategy(new OneShotStartupCheckStrategy().withTimeout(MIGRATION));
        containers.add(init);
        init.start(); // returns only once the container exited with status 0
        assertEquals(0L, init.getCurrentContainerInfo().getState().getExitCodeLong());
        assertEquals("3.6.16/etcd3", versionTxt(data));
        try (HostEtcd etcd = HostEtcd.start("3.6.16", data)) {
            assertEquals(Optional.of("value-4"), etcd.gateway().get("/image-it/key-4"));
        }
    }

    @Test
    void oneMinorDowngradeThroughEnvironmentVariables() throws Exception {
        Path data = dataDir();
        HostEtcd.writeDataDir(NEWEST, data, 5);
        String mount = "/data";
        GenericContainer<?> etcd = new GenericContainer<>(IMAGE)
                .withFileSystemBind(data.toString(), mount, BindMode.READ_WRITE)
                .withEnv("ETCD_NAME", HostEtcd.MEMBER)
                .withEnv("TARGET_VERSION", "3.6.16")
                .withEnv("DATA_DIRECTORY", mount)
                .withExposedPorts(2379)
                .withCommand(SERVE.toArray(String[]::new))
                .waitingFor(health());
        start(etcd);
        EtcdGateway gateway = gateway(etcd);
        gateway.awaitWrite(Duration.ofSeconds(30));
        assertEquals(Optional.of("3.6.16"), gateway.serverVersion());
        assertEquals(Optional.of("value-3"), gateway.get("/image-it/key-3"));
        assertEquals("3.6.16/etcd3", versionTxt(data));
    }

    /** etcd3 -> etcd2 through TARGET_VERSION / TARGET_STORAGE; etcd then serves the keys on /v2/keys. */
    @Test
    void rollbackToEtcd2ThroughEnvironmentVariables() throws Exception {
        Path data = dataDir();
        HostEtcd.writeDataDir("3.4.23", data, 5);
        GenericContainer<?> etcd = new GenericContainer<>(IMAGE_FULL)
                .withFileSystemBind(data.toString(), DATA, BindMode.READ_WRITE)
                .withEnv("ETCD_NAME", HostEtcd.MEMBER)
                .withEnv("TARGET_VERSION", "3.4.23")
                .withEnv("TARGET_STORAGE", "etcd2")
                .withExposedPorts(2379)
                .withCommand(
                        "--",
                        "--listen-client-urls",
                        "http://0.0.0.0:2379",
                        "--advertise-client-urls",
                        "http://127.0.0.1:2379",
                        "--enable-v2=true")
                .waitingFor(health());
        start(etcd);
        assertEquals("3.4.23/etcd2", versionTxt(data));
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        for (int i = 0; i < 5; i++) {
            java.net.URI key = java.net.URI.create(
                    "http://" + etcd.getHost() + ":" + etcd.getMappedPort(2379) + "/v2/keys/image-it/key-" + i);
            String body = http.send(
                            java.net.http.HttpRequest.newBuilder(key).build(),
                            java.net.http.HttpResponse.BodyHandlers.ofString())
                    .body();
            assertTrue(body.contains("\"value\":\"value-" + i + "\""), "key-" + i + ": " + body);
        }
    }

    /**
     * The two flavours share every layer but the legacy releases': `-full` is the default plus exactly
     * one layer per extra release, and each image's label lists what it bundles.
     */
    @Test
    void flavoursShareLayersAndFullAddsOneLayerPerLegacyRelease() {
        var docker = org.testcontainers.DockerClientFactory.instance().client();
        var lean = docker.inspectImageCmd(IMAGE.asCanonicalNameString()).exec();
        var full = docker.inspectImageCmd(IMAGE_FULL.asCanonicalNameString()).exec();
        List<String> defaultVersions = List.of(System.getProperty("etcd.default.versions", "3.4.23,3.5.35,3.6.16,3.7.3")
                .split(","));
        List<String> allVersions =
                List.of(System.getProperty("etcd.bundled.versions", "").split(","));
        assertEquals(
                String.join(",", defaultVersions), lean.getConfig().getLabels().get("dev.etcdmigrate.etcd.versions"));
        assertEquals(String.join(",", allVersions), full.getConfig().getLabels().get("dev.etcdmigrate.etcd.versions"));
        List<String> leanLayers = lean.getRootFS().getLayers();
        List<String> fullLayers = full.getRootFS().getLayers();
        assertTrue(
                fullLayers.containsAll(leanLayers),
                "every default layer is in -full: " + leanLayers + " vs " + fullLayers);
        assertEquals(
                allVersions.size() - defaultVersions.size(),
                fullLayers.size() - leanLayers.size(),
                "-full adds one layer per legacy release");
    }

    @Test
    void etcdIsPid1AndStopsCleanlyOnSigterm() throws Exception {
        Path data = dataDir();
        GenericContainer<?> etcd = serving(data, DATA, runnerArgs("--target-version", NEWEST));
        gateway(etcd).awaitWrite(Duration.ofSeconds(30));

        // The container's PID 1 seen from the host (rootful podman on this machine): its command line
        // and, in /proc/PID/status, NSpid ending in 1 (PID 1 in the container's PID namespace).
        long hostPid = etcd.getCurrentContainerInfo().getState().getPidLong();
        Path proc = Path.of("/proc", Long.toString(hostPid));
        String cmdline =
                Files.readString(proc.resolve("cmdline")).replace('\0', ' ').trim();
        assertTrue(cmdline.startsWith("/usr/local/bin/etcd-" + NEWEST + " "), cmdline);
        String nspid = Files.readAllLines(proc.resolve("status")).stream()
                .filter(l -> l.startsWith("NSpid:"))
                .findFirst()
                .orElseThrow();
        assertTrue(nspid.matches("NSpid:.*\\s1"), nspid);

        long start = System.nanoTime();
        etcd.getDockerClient()
                .stopContainerCmd(etcd.getContainerId())
                .withTimeout(10)
                .exec();
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        InspectContainerResponse.ContainerState state = etcd.getDockerClient()
                .inspectContainerCmd(etcd.getContainerId())
                .exec()
                .getState();
        assertTrue(took.compareTo(Duration.ofSeconds(9)) < 0, "stop took " + took);
        // SIGTERM: etcd shuts down cleanly and exits; it re-raises the signal, which PID 1 ignores, so
        // the status is 0 (143 where the signal is delivered). 137 would mean it was killed.
        assertTrue(
                state.getExitCodeLong() == 0 || state.getExitCodeLong() == 143, "exit code " + state.getExitCodeLong());
        String logs = etcd.getLogs();
        assertTrue(logs.contains("closed etcd server"), "no clean shutdown in the logs:\n" + logs);
    }

    /** Runs as root by default; a data dir that belongs to another uid is migrated and served as that uid. */
    @Test
    void aDataDirOwnedByANonRootUserKeepsItsOwnerAndEtcdRunsAsIt() throws Exception {
        Path data = dataDir();
        HostEtcd.writeDataDir("3.6.16", data, 5);
        int uid = 1000;
        try (var paths = Files.walk(data)) {
            for (Path p : paths.toList()) {
                Files.setAttribute(p, "unix:uid", uid);
                Files.setAttribute(p, "unix:gid", uid);
            }
        }
        GenericContainer<?> etcd = serving(data, DATA, runnerArgs("--target-version", NEWEST));
        EtcdGateway gateway = gateway(etcd);
        gateway.awaitWrite(Duration.ofSeconds(30));
        assertEquals(Optional.of("value-4"), gateway.get("/image-it/key-4"));

        long hostPid = etcd.getCurrentContainerInfo().getState().getPidLong();
        String uids = Files.readAllLines(Path.of("/proc", Long.toString(hostPid), "status")).stream()
                .filter(l -> l.startsWith("Uid:"))
                .findFirst()
                .orElseThrow();
        assertTrue(uids.matches("Uid:\\s+" + uid + "\\s+" + uid + "\\s+" + uid + "\\s+" + uid), uids);
        try (var paths = Files.walk(data)) {
            List<String> foreign = paths.filter(p -> {
                        try {
                            return (Integer) Files.getAttribute(p, "unix:uid") != uid;
                        } catch (IOException e) {
                            return true;
                        }
                    })
                    .map(Path::toString)
                    .toList();
            assertEquals(List.of(), foreign, "files not owned by uid " + uid);
        }
        assertEquals(NEWEST + "/etcd3", versionTxt(data));
    }

    /**
     * `etcd-migrate` is a command on the image's PATH, so an operator runs it in a member's container, which has
     * no shell, through the engine's exec (as `kubectl exec` and `crictl exec` do): status reads the member it
     * runs beside and its exit status comes back; help and --version answer as the runner does.
     */
    @Test
    void etcdMigrateCommandRunsThroughExecInAServingContainer() throws Exception {
        Path data = dataDir();
        GenericContainer<?> etcd = serving(data, DATA, runnerArgs("--target-version", NEWEST));
        gateway(etcd).awaitWrite(Duration.ofSeconds(30));
        String newestLine = NEWEST.substring(0, NEWEST.lastIndexOf('.'));
        ObjectMapper json = new ObjectMapper();

        // the leader sets the cluster version just after its first commit: done once it has
        String[] statusJson = {"etcd-migrate", "status", "-o", "json", "--target-version", NEWEST};
        var done = Poll.until(Duration.ofSeconds(30), Duration.ofMillis(200), "status past exit 4", () -> {
            var answer = etcd.execInContainer(statusJson);
            if (answer.getExitCode() == 4) {
                throw new IllegalStateException("exit 4: " + answer.getStdout() + answer.getStderr());
            }
            return answer;
        });
        assertEquals(0, done.getExitCode(), done.getStdout() + done.getStderr());
        JsonNode report = json.readTree(done.getStdout());
        assertEquals("done", report.path("state").asText(), report.toString());
        assertEquals(newestLine, report.path("target").asText(), report.toString());
        assertEquals(1, report.path("members").size(), report.toString());
        JsonNode member = report.path("members").get(0);
        assertEquals(HostEtcd.MEMBER, member.path("name").asText(), member.toString());
        assertTrue(member.path("answers").asBoolean(), member.toString());
        assertEquals(NEWEST, member.path("etcdVersion").asText(), member.toString());

        // toward the line below: the member is not there yet, so the rollout is still going (exit 4)
        var rolling = etcd.execInContainer("etcd-migrate", "status", "-o", "json", "--target-version", "3.6.16");
        assertEquals(4, rolling.getExitCode(), rolling.getStdout() + rolling.getStderr());
        assertEquals("rolling", json.readTree(rolling.getStdout()).path("state").asText(), rolling.getStdout());

        var help = etcd.execInContainer("etcd-migrate", "--help");
        assertEquals(0, help.getExitCode(), help.getStderr());
        assertEquals(Help.text(List.of()), help.getStdout());
        var statusHelp = etcd.execInContainer("etcd-migrate", "status", "--help");
        assertEquals(0, statusHelp.getExitCode(), statusHelp.getStderr());
        assertEquals(Help.status(StatusFlags.FLAGS), statusHelp.getStdout());

        // the project's version: in the runner's jar (--version's first line) and on the image as a label
        String version = System.getProperty("project.version");
        var versionOut = etcd.execInContainer("etcd-migrate", "--version");
        assertEquals(0, versionOut.getExitCode(), versionOut.getStderr());
        assertEquals(
                "etcd-migrate " + version,
                versionOut.getStdout().lines().findFirst().orElse(""));
        var config = etcd.getDockerClient()
                .inspectImageCmd(IMAGE.asCanonicalNameString())
                .exec()
                .getConfig();
        assertEquals(version, config.getLabels().get("dev.etcdmigrate.version"));
    }

    // ------------------------------------------------------------------ helpers

    private Path dataDir() throws IOException {
        Path dir = tmp.resolve("data");
        Files.createDirectories(tmp);
        return dir;
    }

    private static List<String> runnerArgs(String... runnerFlags) {
        List<String> args = new ArrayList<>(List.of(runnerFlags));
        args.addAll(SERVE);
        return args;
    }

    private GenericContainer<?> serving(Path data, String mount, List<String> args) {
        if (!Files.isDirectory(data)) {
            try {
                Files.createDirectories(data);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        GenericContainer<?> etcd = new GenericContainer<>(IMAGE)
                .withFileSystemBind(data.toString(), mount, BindMode.READ_WRITE)
                .withEnv("ETCD_NAME", HostEtcd.MEMBER)
                .withExposedPorts(2379)
                .withCommand(args.toArray(String[]::new))
                .waitingFor(health());
        start(etcd);
        return etcd;
    }

    private void start(GenericContainer<?> container) {
        containers.add(container);
        container.start();
    }

    private static WaitStrategy health() {
        return new HealthWait(MIGRATION);
    }

    private static EtcdGateway gateway(GenericContainer<?> etcd) {
        return EtcdGateway.plain(etcd.getHost(), etcd.getMappedPort(2379));
    }

    private static String versionTxt(Path data) throws IOException {
        return Files.readString(data.resolve("version.txt")).trim();
    }
}
