package dev.etcdmigrate.it.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** SIGTERM to a migrating runner, and the exec into the target etcd at the end. */
class SignalsAndExecIT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void sigtermDuringAStepStopsTheChildrenAndExitsNonZero(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(EtcdFixture.oldest(), data, 200);
        Release second = EtcdFixture.V3_RELEASES.get(2);
        try (RunnerProcess runner = RunnerProcess.start(
                RunnerArgs.migrate(data, EtcdFixture.newest().version()), Map.of())) {
            // a line the child etcd printed itself: it is running
            awaitChildLine(runner, "etcd-" + second.version(), Duration.ofMinutes(2));
            runner.rememberDescendants();
            List<ProcessHandle> children =
                    runner.process().toHandle().descendants().toList();
            assertTrue(
                    children.stream()
                            .anyMatch(c -> c.info().command().orElse("").endsWith("etcd-" + second.version())),
                    "the private etcd runs: " + children);
            runner.process().toHandle().destroy(); // SIGTERM
            int code = runner.awaitExit(Duration.ofSeconds(30));
            assertEquals(143, code, runner.output());
            for (ProcessHandle child : children) {
                assertTrue(
                        child.onExit()
                                                .orTimeout(1, java.util.concurrent.TimeUnit.SECONDS)
                                                .exceptionally(x -> child)
                                                .join()
                                        != null
                                && !child.isAlive(),
                        "child " + child.pid() + " was stopped before the runner exited");
            }
            assertEquals(lastRecorded(runner), Files.readString(data.resolve("version.txt")), runner.output());
        }
    }

    /** The last version.txt the runner reported writing (a step finished, or the final record), else the seed's. */
    private static String lastRecorded(RunnerProcess runner) {
        String last = EtcdFixture.oldest().version() + "/etcd3";
        for (JsonNode e : runner.events()) {
            switch (e.path("event").asText()) {
                case "step-finished" -> last = e.path("versionTxt").asText();
                case "version-recorded" -> last = e.path("version").asText();
                default -> {}
            }
        }
        return last;
    }

    /** Waits for a line printed by the child whose source is exactly {@code source} ("etcd-3.4.23"). */
    private static void awaitChildLine(RunnerProcess runner, String source, Duration deadline)
            throws InterruptedException {
        try {
            Poll.untilTrue(deadline, Duration.ofMillis(20), "a line from " + source, () -> {
                if (runner.childLines(source).stream()
                        .anyMatch(l -> l.path("source").asText().equals(source))) return true;
                if (!runner.process().isAlive()) throw new AssertionError("the runner exited");
                return false;
            });
        } catch (AssertionError e) {
            throw new AssertionError(
                    "no line from " + source + " (" + e.getMessage() + "); output:\n" + runner.output());
        }
    }

    @Test
    void theRunnerBecomesTheTargetEtcdServingTheMigratedData(@TempDir Path dir) throws Exception {
        List<Release> releases = EtcdFixture.V3_RELEASES;
        Release previous = releases.get(releases.size() - 2);
        Release newest = EtcdFixture.newest();
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(previous, data, 300);
        ServerPorts real = FreePorts.pick();
        String client = "http://127.0.0.1:" + real.client();
        List<String> args = RunnerArgs.migrateAndServe(data, newest.version(), real);

        try (RunnerProcess runner = RunnerProcess.start(args, Map.of())) {
            long pid = runner.pid();
            JsonNode exec = runner.awaitEvent("exec", Duration.ofMinutes(2));
            assertEquals(
                    EtcdFixture.binDir().resolve("etcd-" + newest.version()).toString(),
                    exec.path("binary").asText(),
                    runner.output());
            GatewayClient gateway = new GatewayClient(
                    GatewayClient.newHttpClient(),
                    java.net.URI.create(client),
                    newest.line().jsonGateway());
            runner.awaitWrite(gateway);

            assertEquals(pid, runner.process().pid());
            Path exe = Files.readSymbolicLink(Path.of("/proc/" + pid + "/exe"));
            assertEquals(
                    EtcdFixture.binDir().resolve("etcd-" + newest.version()).toRealPath(),
                    exe.toRealPath(),
                    "PID " + pid + " runs etcd");
            assertEquals(newest.version(), gateway.version().path("etcdserver").asText());
            List<String> openFiles = openFiles(pid);
            assertTrue(
                    openFiles.stream()
                            .noneMatch(f -> f.endsWith(".jar") || f.endsWith("/modules") || f.endsWith(".jsa")),
                    "JVM descriptors leaked into etcd: " + openFiles);

            try (Client jetcd = Client.builder().endpoints(client).build()) {
                Keyspace served = Keyspace.read(jetcd);
                before.entries()
                        .forEach((key, entry) ->
                                assertEquals(entry, served.entries().get(key), key));
            }

            runner.process().toHandle().destroy(); // SIGTERM to what is now etcd
            assertEquals(143, runner.awaitExit(Duration.ofSeconds(10)), "etcd stops cleanly on SIGTERM");
        }
        assertEquals(newest.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
    }

    private static List<String> openFiles(long pid) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            List<String> targets = new ArrayList<>();
            for (Path fd : fds.toList()) {
                try {
                    targets.add(Files.readSymbolicLink(fd).toString());
                } catch (IOException gone) {
                    // closed while listing
                }
            }
            return targets;
        }
    }
}
