package dev.etcdmigrate.it.input;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import io.etcd.jetcd.Client;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Flags the target does not know, on one member: a rollback 3.6 -> 3.5 where the operator changed only the target and
 * kept kubeadm 1.37's etcd flags ({@code --feature-gates=InitialCorruptCheck=true --watch-progress-notify-interval=5s},
 * neither known to 3.5). `plan` lists both renames; `migrate` logs them and execs 3.5 with the flags in 3.5's spelling,
 * which serves every key. A flag 3.5 knows by no name ({@code --feature-gates} with a gate 3.5 has no flag for) is
 * refused before anything changes, naming the catalog's hint. HaRolloutIT runs the three-member cases (3.4 -> 3.7
 * serving 3.5 between legs, 3.7 -> 3.5).
 */
public class FlagTranslationIT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    private static final ObjectMapper JSON = new ObjectMapper();
    /** kubeadm 1.34+'s etcd flags for etcd 3.6+ (v1.37.2 writes them for every etcd): 3.4 and 3.5 reject both. */
    public static final List<String> KUBEADM_137 =
            List.of("--feature-gates=InitialCorruptCheck=true", "--watch-progress-notify-interval=5s");
    /** The same two in 3.4's and 3.5's spelling. */
    public static final List<String> KUBEADM_133 =
            List.of("--experimental-initial-corrupt-check=true", "--experimental-watch-progress-notify-interval=5s");

    @Test
    void rollbackTo35KeepingKubeadm137Flags(@TempDir Path dir) throws Exception {
        Release from = EtcdFixture.release("3.6.16");
        Release to = EtcdFixture.release("3.5.35");
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(from, data, 200);
        ServerPorts real = FreePorts.pick();
        List<String> args = new ArrayList<>(RunnerArgs.migrateAndServe(data, to.version(), real));
        args.addAll(KUBEADM_137);

        // plan: reads only, lists what 3.5 gets instead
        List<String> planArgs = new ArrayList<>(args);
        planArgs.set(0, "plan");
        planArgs.addAll(1, List.of("-o", "json"));
        Map<String, String> digest = TreeDigest.of(data);
        try (RunnerProcess plan = RunnerProcess.run(planArgs)) {
            assertEquals(0, plan.exitCode(), plan.output());
            JsonNode made = JSON.readTree(planJson(plan.output()));
            assertEquals(
                    List.of(
                            "3.5.35 target: --feature-gates=InitialCorruptCheck=true -> --experimental-initial-corrupt-check=true",
                            "3.5.35 target: --watch-progress-notify-interval=5s -> --experimental-watch-progress-notify-interval=5s"),
                    renames(made.path("flags")),
                    made.toString());
            assertEquals(2, plan.events("flag-translated").size(), plan.output());
        }
        assertEquals(digest, TreeDigest.of(data), "plan changes nothing");

        String client = "http://127.0.0.1:" + real.client();
        try (RunnerProcess runner = RunnerProcess.start(args, Map.of())) {
            long pid = runner.pid();
            JsonNode exec = runner.awaitEvent("exec", Duration.ofMinutes(3));
            assertEquals(2, runner.events("flag-translated").size(), runner.output());
            List<String> argv = new ArrayList<>();
            exec.path("argv").forEach(a -> argv.add(a.asText()));
            assertTrue(argv.getFirst().endsWith("etcd-" + to.version()), argv.toString());
            for (String flag : KUBEADM_133) assertTrue(argv.contains(flag), flag + " in " + argv);
            for (String flag : KUBEADM_137) assertTrue(!argv.contains(flag), flag + " in " + argv);
            GatewayClient gateway = new GatewayClient(
                    GatewayClient.newHttpClient(),
                    java.net.URI.create(client),
                    to.line().jsonGateway());
            runner.awaitWrite(gateway);
            // the process the runner became is etcd 3.5 with the 3.5 spellings on its command line
            List<String> cmdline = Arrays.asList(
                    new String(Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline")), StandardCharsets.UTF_8)
                            .split("\0"));
            for (String flag : KUBEADM_133) assertTrue(cmdline.contains(flag), flag + " in " + cmdline);
            assertEquals(to.version(), gateway.version().path("etcdserver").asText());
            try (Client jetcd = Client.builder().endpoints(client).build()) {
                Keyspace served = Keyspace.read(jetcd);
                before.entries()
                        .forEach((key, entry) ->
                                assertEquals(entry, served.entries().get(key), key));
            }
            runner.process().toHandle().destroy();
            assertEquals(143, runner.awaitExit(Duration.ofSeconds(10)), "etcd stops cleanly on SIGTERM");
        }
        assertEquals(to.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
    }

    @Test
    void aGate35HasNoFlagForIsRefusedBeforeAnythingChanges(@TempDir Path dir) throws Exception {
        Release from = EtcdFixture.release("3.6.16");
        Release to = EtcdFixture.release("3.5.35");
        Path data = dir.resolve("data");
        etcd.seed(from, data, 20);
        Map<String, String> before = TreeDigest.of(data);
        Path termination = Files.createFile(dir.resolve("termination-log"));
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, to.version()));
        args.addAll(List.of(
                "--termination-log",
                termination.toString(),
                "--",
                "--watch-progress-notify-interval=5s",
                "--feature-gates=InitialCorruptCheck=true,SetMemberLocalAddr=true"));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(2, runner.exitCode(), runner.output());
            assertEquals(0, runner.count("etcd-started"), runner.output());
        }
        assertEquals(before, TreeDigest.of(data), "nothing changed");
        String reason = Files.readString(termination);
        assertTrue(reason.contains("--feature-gates") && reason.contains("experimental-initial-corrupt-check"), reason);
    }

    private static List<String> renames(JsonNode flags) {
        List<String> out = new ArrayList<>();
        flags.forEach(
                f -> out.add(f.path("version").asText() + " " + f.path("runs").asText() + ": "
                        + f.path("given").asText() + " -> " + f.path("as").asText()));
        return out;
    }

    /** The plan's one JSON object on stdout (`plan -o json`). */
    private static String planJson(String output) throws IOException {
        for (String line : output.lines().toList()) {
            if (line.startsWith("{\"current\"")) return line;
        }
        throw new AssertionError("no plan object in:\n" + output);
    }
}
