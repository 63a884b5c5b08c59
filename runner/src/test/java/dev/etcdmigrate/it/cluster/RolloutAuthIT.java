package dev.etcdmigrate.it.cluster;

import static dev.etcdmigrate.it.support.Jetcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.demo.SampleData;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.ondisk.BackendAuth;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import io.etcd.jetcd.Auth;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster member given a target two minors away while no other member answers (every manifest edited at
 * once): with etcd's auth enabled in its data the runner refuses before anything changes, from its own db
 * (etcd replicates the flag into every member's), not half-way at the first gate; without auth the same
 * start passes the checks and the rollout begins.
 */
class RolloutAuthIT {

    private static final Duration DEADLINE = Duration.ofMinutes(2);

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    private static Release line(String line) {
        return EtcdFixture.V3_RELEASES.stream()
                .filter(r -> r.minorLine().toString().equals(line))
                .reduce((first, second) -> second)
                .orElseThrow();
    }

    /** A 3.5 data dir with sample keys; with auth, a root user and etcd's auth enabled (etcdctl auth enable's calls). */
    private Path seed(Path dir, Release release, boolean auth) throws Exception {
        Path data = dir.resolve("data");
        Permissions.ownerOnlyDir(data);
        etcd.withClient(release, data, client -> {
            SampleData.seed(client, 20, 3600);
            if (auth) {
                Auth a = client.getAuthClient();
                a.userAdd(bytes("root"), bytes("pw")).get(30, TimeUnit.SECONDS);
                a.roleAdd(bytes("root")).get(30, TimeUnit.SECONDS);
                a.userGrantRole(bytes("root"), bytes("root")).get(30, TimeUnit.SECONDS);
                a.authEnable().get(30, TimeUnit.SECONDS);
            }
        });
        new DataDir(data).writeVersion(new DataVersion(release.etcdVersion(), StorageApi.ETCD3));
        // the layout the runner reads, as a real etcd wrote it
        assertEquals(auth, BackendAuth.enabled(data.resolve("member/snap/db")), "the db's auth flag");
        return data;
    }

    /** migrate to the target as member "it" of three, whose other members b and c are not running. */
    private static List<String> memberOfThree(Path data, Release target) {
        ServerPorts own = FreePorts.pick();
        ServerPorts b = FreePorts.pick();
        ServerPorts c = FreePorts.pick();
        String client = "http://127.0.0.1:" + own.client();
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, target.version()));
        args.addAll(List.of(
                "--initial-cluster",
                "it=http://127.0.0.1:" + own.peer() + ",b=http://127.0.0.1:" + b.peer() + ",c=http://127.0.0.1:"
                        + c.peer(),
                "--",
                // the guessed client URLs of b and c take this port: nobody answers there
                "--advertise-client-urls",
                client,
                "--listen-client-urls",
                client));
        return args;
    }

    @Test
    void authEnabledInTheMembersOwnDataIsRefusedUpFrontWithNoMemberAnswering(@TempDir Path dir) throws Exception {
        Release from = line("3.5");
        Release to = EtcdFixture.newest(); // 3.7: two minors away
        Path data = seed(dir, from, true);
        Map<String, String> before = TreeDigest.of(data);
        try (RunnerProcess runner = RunnerProcess.run(memberOfThree(data, to))) {
            assertEquals(3, runner.exitCode(), runner.output());
            JsonNode ending = runner.ending();
            assertEquals("refused", ending.path("event").asText(), runner.output());
            assertEquals(3, ending.path("exitCode").asInt(), runner.output());
            String reason = ending.path("reason").asText();
            assertTrue(reason.contains("bucket auth"), "judged from the member's own db: " + reason);
            assertEquals(0, runner.count("etcd-started"), "no etcd was started:\n" + runner.output());
            assertEquals(0, runner.count("rollout-chain-planned"), runner.output());
        }
        assertEquals(before, TreeDigest.of(data), "byte-identical");
    }

    @Test
    void theSameStartWithoutAuthPassesTheChecks(@TempDir Path dir) throws Exception {
        Release from = line("3.5");
        Release to = EtcdFixture.newest();
        Path data = seed(dir, from, false);
        try (RunnerProcess runner = RunnerProcess.startInOwnGroup(memberOfThree(data, to))) {
            try {
                JsonNode planned = runner.awaitEvent("rollout-chain-planned", DEADLINE);
                assertEquals(2, planned.path("legs").asInt(), runner.output());
                assertEquals(0, runner.count("refused"), runner.output());
            } finally {
                runner.killGroup(); // leg 1 has begun: what it does without the other members is not this test's
            }
        }
    }

    /**
     * Not only a multi-minor chain: every step's etcd writes a probe key through etcd's API, which auth refuses
     * without credentials. A lone member's one minor, and a member of three's, are refused up front too (before,
     * the step's etcd ran on the data and waited out its start timeout: exit 1 after 120 s); plan refuses as
     * migrate does, inspect marks each target with steps refused and a restart at the data's line not.
     */
    @Test
    void authEnabledRefusesEveryPlanWithStepsUpFront(@TempDir Path dir) throws Exception {
        Release from = line("3.5");
        Release to = line("3.6");
        Path data = seed(dir, from, true);
        Map<String, String> before = TreeDigest.of(data);
        List<List<String>> starts = List.of(RunnerArgs.migrate(data, to.version()), memberOfThree(data, to));
        for (List<String> start : starts) {
            try (RunnerProcess runner = RunnerProcess.run(start)) {
                assertEquals(3, runner.exitCode(), runner.output());
                JsonNode ending = runner.ending();
                assertEquals("refused", ending.path("event").asText(), runner.output());
                String reason = ending.path("reason").asText();
                assertTrue(reason.contains("bucket auth"), reason); // the evidence: the db's auth bucket
                assertEquals(0, runner.count("etcd-started"), "no etcd was started:\n" + runner.output());
            }
            List<String> plan = new ArrayList<>(start);
            plan.set(0, "plan");
            plan.remove("--no-exec");
            try (RunnerProcess runner = RunnerProcess.run(plan)) {
                assertEquals(3, runner.exitCode(), runner.output());
                assertTrue(runner.ending().path("reason").asText().contains("bucket auth"), runner.output());
            }
        }
        List<String> inspect = new ArrayList<>(RunnerArgs.migrate(data, to.version()));
        inspect.set(0, "inspect");
        inspect.remove("--no-exec");
        inspect.addAll(List.of("-o", "json"));
        try (RunnerProcess runner = RunnerProcess.run(inspect)) {
            assertEquals(0, runner.exitCode(), runner.output());
            JsonNode report = new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(runner.output()
                            .lines()
                            .filter(l -> l.startsWith("{\"schema\""))
                            .findFirst()
                            .orElseThrow());
            for (JsonNode t : report.path("targets")) {
                if (t.path("version").asText().equals(to.version()))
                    assertTrue(t.path("refused").asText().contains("bucket auth"), t.toString());
                if (t.path("version").asText().equals(from.version()))
                    assertTrue(t.path("refused").isNull(), "a restart needs no API call: " + t);
            }
        }
        assertEquals(before, TreeDigest.of(data), "byte-identical");
    }
}
