package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The runner (and every process it started) killed with SIGKILL, then run again: it converges, nothing lost. */
class CrashResumeIT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @ParameterizedTest(name = "killed after step {0}")
    @ValueSource(ints = {1, 2})
    void killedBetweenUpgradeStepsThenRerunConverges(int completedSteps, @TempDir Path dir) throws Exception {
        Release oldest = EtcdFixture.oldest();
        Release newest = EtcdFixture.newest();
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(oldest, data, 1000);
        int steps = EtcdFixture.V3_RELEASES.size() - 1;

        try (RunnerProcess runner = RunnerProcess.start(RunnerArgs.migrate(data, newest.version()), Map.of())) {
            runner.awaitEvent(
                    "step-finished",
                    e -> e.path("index").asInt() == completedSteps
                            && e.path("total").asInt() == steps,
                    Duration.ofMinutes(2));
            runner.killHard();
        }
        String recorded = Files.readString(data.resolve("version.txt"));
        Release expected = EtcdFixture.V3_RELEASES.get(completedSteps);
        assertTrue(
                recorded.equals(expected.version() + "/etcd3")
                        || recorded.equals(
                                EtcdFixture.V3_RELEASES.get(completedSteps + 1).version() + "/etcd3"),
                "version.txt names a completed step: " + recorded);

        try (RunnerProcess rerun = RunnerProcess.run(RunnerArgs.migrate(data, newest.version()))) {
            assertEquals(0, rerun.exitCode(), rerun.output());
        }
        assertEquals(newest.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
        EtcdFixture.Observed after = etcd.read(newest, data);
        assertEquals(Map.of(), before.differences(after.keyspace()));
        assertEquals(before.leasedKeys(), after.keysWithLiveLease());
    }

    @Test
    void killedWhileASnapshotDowngradeIsStagedThenRerunConverges(@TempDir Path dir) throws Exception {
        Release from = EtcdFixture.release("3.5.35");
        Release to = EtcdFixture.release("3.4.23");
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(from, data, 500);

        try (RunnerProcess runner = RunnerProcess.start(RunnerArgs.migrate(data, to.version()), Map.of())) {
            // the restored member is being proven in staging: the old member/ is still in place
            runner.awaitEvent(
                    "etcd-started",
                    e -> e.path("version").asText().equals(to.version())
                            && e.path("dataDir").asText().contains("/.etcd-migrate/staging/"),
                    Duration.ofMinutes(2));
            runner.killHard();
        }
        assertEquals(from.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
        assertTrue(Files.isDirectory(data.resolve("member")), "the old member dir is untouched");

        try (RunnerProcess rerun = RunnerProcess.run(RunnerArgs.migrate(data, to.version()))) {
            assertEquals(0, rerun.exitCode(), rerun.output());
            List<JsonNode> recovered = rerun.events("recovered");
            assertEquals(1, recovered.size(), rerun.output());
            assertEquals("staging", recovered.getFirst().path("what").asText(), rerun.output());
            assertEquals("discarded", recovered.getFirst().path("action").asText(), rerun.output());
            assertEquals(
                    data.resolve(".etcd-migrate/staging").toString(),
                    recovered.getFirst().path("path").asText(),
                    rerun.output());
        }
        assertEquals(to.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
        assertFalse(Files.exists(data.resolve(".etcd-migrate/staging")));
        assertEquals(Map.of(), before.differences(etcd.read(to, data).keyspace()));
    }
}
