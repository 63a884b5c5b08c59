package dev.etcdmigrate.it.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.ItConv2Events;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two runners on one data dir (a static pod restarting fast, an operator's docker run): the second
 * waits for the first's lock, then plans again from what the first left; or gives up after its
 * timeout with a clear message. The first is frozen with SIGSTOP while it holds the lock, so the
 * overlap is certain, not a race.
 */
class LockIT {

    private static final Release FROM = EtcdFixture.V3_RELEASES.get(EtcdFixture.V3_RELEASES.size() - 2);
    private static final Release TO = EtcdFixture.newest();

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void theSecondRunnerWaitsThenFindsTheDataAtTheTarget(@TempDir Path dir) throws Exception {
        whileAFrozenRunnerHoldsTheLock(dir, (data, first) -> {
            try (RunnerProcess second = RunnerProcess.start(withLockTimeout(data, "2m"), Map.of())) {
                JsonNode waiting = second.awaitEvent("lock-waiting", Duration.ofMinutes(1));
                assertEquals(
                        data.resolve(".etcd-migrate/lock").toString(),
                        waiting.path("lock").asText(),
                        second.output());
                assertEquals(120, waiting.path("timeoutSeconds").asLong(), second.output());
                signal("CONT", first.pid());
                assertEquals(0, second.awaitExit(Duration.ofMinutes(2)), second.output());
                assertEquals(
                        0,
                        second.count("etcd-started"),
                        "the second runner planned again after the wait:\n" + second.output());
                assertEquals(
                        0,
                        second.count("step-started"),
                        "the second runner planned again after the wait:\n" + second.output());
            }
        });
    }

    @Test
    void theSecondRunnerGivesUpAfterItsTimeout(@TempDir Path dir) throws Exception {
        whileAFrozenRunnerHoldsTheLock(dir, (data, first) -> {
            try (RunnerProcess second = RunnerProcess.run(withLockTimeout(data, "1s"))) {
                assertNotEquals(0, second.exitCode(), second.output());
                assertEquals(1, second.count("lock-waiting"), second.output());
                assertEquals(
                        1,
                        second.events("lock-waiting")
                                .getFirst()
                                .path("timeoutSeconds")
                                .asLong(),
                        second.output());
                JsonNode ending = second.ending();
                assertEquals(second.exitCode(), ending.path("exitCode").asInt(), second.output());
                assertTrue(
                        ending.path("reason")
                                .asText()
                                .contains(data.resolve(".etcd-migrate/lock").toString()),
                        second.output());
                assertEquals(0, second.count("etcd-started"), "no etcd started by the second runner");
            }
        });
    }

    @Test
    void aRunnerWhoseTargetIsTheDataVersionWaitsForTheLockToo(@TempDir Path dir) throws Exception {
        whileAFrozenRunnerHoldsTheLock(dir, (data, first) -> {
            // the no-op path (target = what version.txt says now) must not exec etcd beside a working private etcd
            List<String> noOp = new ArrayList<>(RunnerArgs.migrate(data, FROM.version()));
            noOp.addAll(List.of("--lock-timeout", "1s"));
            try (RunnerProcess second = RunnerProcess.run(noOp)) {
                assertNotEquals(0, second.exitCode(), second.output());
                assertEquals(1, second.count("lock-waiting"), "the no-op waited for the lock too:\n" + second.output());
                assertTrue(
                        second.ending()
                                .path("reason")
                                .asText()
                                .contains(data.resolve(".etcd-migrate/lock").toString()),
                        second.output());
                assertEquals(0, second.count("etcd-started"), "no etcd started by the second runner");
            }
            assertEquals(
                    FROM.version() + "/etcd3", Files.readString(data.resolve("version.txt")), "the first still works");
        });
    }

    /** What a test does with the data dir while the first runner, frozen mid-step, holds its lock. */
    @FunctionalInterface
    private interface SecondRunner {
        void run(Path data, RunnerProcess first) throws Exception;
    }

    /**
     * Seeds data one minor below the newest, starts a runner taking it to the newest, freezes it with
     * SIGSTOP once its step began (the lock is held), runs {@code second}, resumes the first; then the
     * first must have finished and every key must be intact at the target.
     */
    private void whileAFrozenRunnerHoldsTheLock(Path dir, SecondRunner second) throws Exception {
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(FROM, data, 200);
        try (RunnerProcess first = RunnerProcess.start(RunnerArgs.migrate(data, TO.version()), Map.of())) {
            ItConv2Events.awaitStepStarted(first, 1, 1, Duration.ofMinutes(1));
            signal("STOP", first.pid());
            try {
                second.run(data, first);
            } finally {
                resume(first); // also when an assertion failed, so close() can stop it
            }
            assertEquals(0, first.awaitExit(Duration.ofMinutes(2)), first.output());
        }
        etcd.assertMigratedTo(TO, data, before);
    }

    private static List<String> withLockTimeout(Path data, String timeout) {
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, TO.version()));
        args.addAll(List.of("--lock-timeout", timeout));
        return args;
    }

    private static void resume(RunnerProcess runner) throws Exception {
        if (runner.process().isAlive()) {
            new ProcessBuilder("kill", "-CONT", Long.toString(runner.pid()))
                    .inheritIO()
                    .start()
                    .waitFor();
        }
    }

    private static void signal(String name, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid))
                .inheritIO()
                .start();
        assertEquals(0, kill.waitFor(), "kill -" + name + " " + pid);
    }
}
