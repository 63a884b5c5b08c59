package dev.etcdmigrate.it.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an operator reads after a successful upgrade, from a real 3.4.23 data dir taken to
 * the newest line by the real runner: the run ends with one run-summary that agrees with the steps' own events, and
 * the default text diary carries none of etcd's lines (they are all in .etcd-migrate/etcd-output.log).
 */
class OperatorOutputIT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void aSuccessfulUpgradeEndsWithASummaryOfItsSteps(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(EtcdFixture.release("3.4.23"), data, 50);
        String newest = EtcdFixture.newest().version();
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, newest))) {
            assertEquals(0, runner.exitCode(), runner.output());
            List<JsonNode> summaries = runner.events("run-summary");
            assertEquals(1, summaries.size(), runner.output());
            JsonNode summary = summaries.getFirst();
            assertEquals("migrated", summary.path("outcome").asText());
            assertEquals(0, summary.path("exitCode").asInt());
            assertEquals("3.4.23/etcd3", summary.path("from").asText());
            assertEquals(newest + "/etcd3", summary.path("to").asText());
            List<JsonNode> finished = runner.events("step-finished");
            assertEquals(finished.size(), summary.path("steps").size(), runner.output());
            long stepsMillis = 0;
            for (int i = 0; i < finished.size(); i++) {
                JsonNode step = summary.path("steps").get(i);
                assertEquals(
                        finished.get(i).path("tookMillis").asLong(),
                        step.path("tookMillis").asLong());
                assertEquals(
                        finished.get(i).path("versionTxt").asText(),
                        step.path("versionTxt").asText());
                assertTrue(step.path("completed").asBoolean());
                stepsMillis += step.path("tookMillis").asLong();
            }
            assertTrue(summary.path("totalMillis").asLong() >= stepsMillis, summary.toString());
            assertEquals(
                    summary.path("totalMillis").asLong(),
                    summary.path("outOfServiceMillis").asLong());
            assertFalse(summary.path("clusterMember").asBoolean());
            List<String> names = runner.events().stream()
                    .map(e -> e.path("event").asText())
                    .filter(n -> !n.equals("child-output") && !n.isEmpty())
                    .toList();
            assertEquals(
                    List.of("run-summary", "no-exec"), names.subList(names.size() - 2, names.size()), names.toString());
        }
    }

    @Test
    void theDefaultTextDiaryOfASuccessfulUpgradeHasNoneOfEtcdsLines(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(EtcdFixture.release("3.4.23"), data, 50);
        List<String> args = new java.util.ArrayList<>(
                RunnerArgs.migrate(data, EtcdFixture.newest().version()));
        args.add("--log-format=text");
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(0, runner.exitCode(), runner.output());
            List<String> lines = runner.lines();
            assertTrue(lines.stream().allMatch(l -> l.contains(" [etcd-migrate] ")), runner.output());
            assertTrue(lines.stream().noneMatch(l -> l.contains("\"level\":\"error\"")), runner.output());
            assertTrue(lines.stream().noneMatch(l -> l.matches(".*\\bnull\\b.*")), runner.output());
        }
        List<String> kept = java.nio.file.Files.readAllLines(data.resolve(".etcd-migrate/etcd-output.log"));
        assertTrue(kept.stream().anyMatch(l -> l.contains("[etcd-")), "etcd's lines are kept in the file");
    }
}
