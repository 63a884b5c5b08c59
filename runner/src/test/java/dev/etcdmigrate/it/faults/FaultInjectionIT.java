package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.ItConv2Events;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Crash-resume by fault injection: for each step type, the runner and every process it started are
 * SIGKILLed (one atomic signal to its process group) at a uniformly random moment within one clean
 * run's duration after the step's step-started event, then run again. The rerun must exit 0 with version.txt
 * at the target, every key served by the target etcd, and nothing but the allowed files left; right
 * after the kill, version.txt must name a version of the plan that fits the data and the steps done.
 *
 * <p>System properties: {@code fault.trials} (default 3; the faults-long profile sets 50),
 * {@code fault.seed} (printed; set it to replay the same kill moments, as fractions of the measured
 * window), {@code fault.scenarios} (comma-separated scenario names, default all).
 */
class FaultInjectionIT {

    private static final Duration RUN_DEADLINE = Duration.ofMinutes(5);

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @ParameterizedTest(name = "{0}")
    @EnumSource(FaultScenario.class)
    void killedAtRandomMomentsThenRerunConverges(FaultScenario scenario, @TempDir Path dir) throws Exception {
        scenario.assumeSelected();
        int trials = Integer.getInteger("fault.trials", 3);
        long seed = Long.getLong("fault.seed", System.nanoTime());
        Random random = new Random(seed + scenario.ordinal());
        System.out.println("[fault] " + scenario + ": " + trials + " trials, -Dfault.seed=" + seed);

        Path template = dir.resolve("template");
        FaultScenario.Seeded seeded = scenario.seed(etcd, template);
        Duration window = cleanRun(scenario, template, dir.resolve("clean"));
        System.out.println("[fault] " + scenario.name() + ": window " + window.toMillis()
                + " ms from the step's step-started to its step-finished event");

        Map<String, Integer> landed = new TreeMap<>();
        List<String> failures = new ArrayList<>();
        for (int trial = 1; trial <= trials; trial++) {
            // a trial runs the runner twice and reads the data once; v2 TTLs must not run out meanwhile
            if (Instant.now().plus(window.multipliedBy(4)).plusSeconds(60).isAfter(seeded.usableUntil())) {
                System.out.println(
                        "[fault] " + scenario.name() + ": the seed's shortest TTL runs out soon; seeding again");
                Trees.deleteRecursively(template);
                seeded = scenario.seed(etcd, template);
            }
            double fraction = random.nextDouble();
            Duration delay = Duration.ofNanos((long) (fraction * window.toNanos()));
            Path data = dir.resolve("trial-" + trial).resolve("data");
            Files.createDirectories(data.getParent());
            Trees.copy(template, data);
            String moment = "trial " + trial + " (kill at " + String.format("%.4f", fraction) + " of the window = "
                    + delay.toMillis() + " ms)";
            try {
                String where = killAt(scenario, data, delay);
                landed.merge(where, 1, Integer::sum);
                moment += ", landed " + where;
                rerunConverges(scenario, seeded, data);
                Trees.deleteRecursively(data.getParent());
                System.out.println("[fault] " + scenario.name() + " " + moment + ": ok");
            } catch (AssertionError | Exception e) {
                String failure = scenario.name() + " " + moment + ", seed " + seed + ": " + e + "\n data dir " + data
                        + ":" + DataDirLeftovers.describe(data);
                System.out.println("[fault] FAILED " + failure);
                failures.add(failure);
            }
        }
        System.out.println("[fault] " + scenario.name() + " summary: " + trials + " trials; kills landed " + landed
                + "; failures " + failures.size() + " (-Dfault.seed=" + seed + ")");
        assertEquals(List.of(), failures, "trials that did not converge");
    }

    /**
     * One undisturbed run: exits 0, at the target, clean; returns the time from the step-started event to
     * its step-finished event, so that every random kill lands inside the step under test (or at its very end).
     */
    private Duration cleanRun(FaultScenario scenario, Path template, Path dir) throws Exception {
        Path data = dir.resolve("data");
        Files.createDirectories(dir);
        Trees.copy(template, data);
        try (RunnerProcess runner = RunnerProcess.startInOwnGroup(scenario.args(data));
                ListenerSampler sampler = ListenerSampler.watch(runner)) {
            scenario.awaitStepStarted(runner, RUN_DEADLINE);
            long start = System.nanoTime();
            scenario.awaitStepFinished(runner, RUN_DEADLINE);
            Duration window = Duration.ofNanos(System.nanoTime() - start);
            assertEquals(0, runner.awaitExit(RUN_DEADLINE), runner.output());
            assertEquals(scenario.target().format(), Files.readString(data.resolve("version.txt")));
            assertEquals(
                    List.of(),
                    DataDirLeftovers.unexpected(data),
                    "leftovers of a clean run:" + DataDirLeftovers.describe(data));
            sampler.close();
            assertEquals(List.of(), sampler.nonLoopback(), "listeners of the runner's processes off loopback");
            Trees.deleteRecursively(dir);
            return window;
        }
    }

    /**
     * Starts the runner on {@code data}, SIGKILLs its process group {@code delay} after the step's start
     * event, and checks version.txt against the data; returns where the kill landed.
     */
    private String killAt(FaultScenario scenario, Path data, Duration delay) throws Exception {
        String where;
        try (RunnerProcess runner = RunnerProcess.startInOwnGroup(scenario.args(data));
                ListenerSampler sampler = ListenerSampler.watch(runner)) {
            scenario.awaitStepStarted(runner, RUN_DEADLINE);
            // the random moment itself; returns early if the runner ends first
            boolean exited = runner.process().waitFor(delay.toNanos(), TimeUnit.NANOSECONDS);
            runner.killGroup();
            sampler.close();
            assertEquals(List.of(), sampler.nonLoopback(), "listeners of the runner's processes off loopback");
            // after SIGKILL and the pipes read to their end: exactly what the runner printed before it died
            int done = 0;
            while (done < scenario.steps() && ItConv2Events.stepFinished(runner, done + 1, scenario.steps())) {
                done++;
            }
            int k = scenario.stepUnderTest();
            where = exited ? "after-exit" : done < k - 1 ? "before" : done == k - 1 ? "inside" : "after";
            if (scenario.steps() > 1 && !exited) {
                where += done < scenario.steps() ? "(step " + (done + 1) + ")" : "(all steps done)";
            }
            assertConsistentAfterKill(scenario, data, done, exited ? runner.exitCode() : null, runner.output());
        }
        return where;
    }

    /**
     * version.txt names the start or a version a step reached: the one of the last step logged done,
     * or of the next one when the kill fell between its version.txt write and its step-finished event. Without a
     * complete staging dir, member/ is in place, with an MVCC store when version.txt names etcd3 (etcd2
     * data written by 3.x has one too, so etcd2 is not told apart by its absence).
     */
    private static void assertConsistentAfterKill(
            FaultScenario scenario, Path data, int done, Integer exitCode, String output) throws Exception {
        DataVersion recorded =
                new DataDir(data).readVersion().orElseThrow(() -> new AssertionError("no version.txt after the kill"));
        int index = scenario.versions().indexOf(recorded);
        assertTrue(
                index == done || index == done + 1,
                "version.txt " + recorded + " after " + done + " step(s) done of " + scenario.versions() + "\n"
                        + output);
        if (exitCode != null) {
            assertEquals(0, exitCode, output);
            assertEquals(scenario.target(), recorded);
        }
        Path marker = data.resolve(".etcd-migrate/staging/complete");
        if (Files.isRegularFile(marker)) {
            DataVersion staged = DataVersion.parse(Files.readString(marker));
            assertTrue(scenario.versions().contains(staged), "the staged version " + staged + " is in the plan");
            assertTrue(
                    Files.isDirectory(data.resolve("member"))
                            || Files.isDirectory(data.resolve(".etcd-migrate/staging/data/member")),
                    "a complete member dir is in place or staged");
        } else {
            assertTrue(Files.isDirectory(data.resolve("member")), "member/ is in place");
            if (recorded.storage() == StorageApi.ETCD3) {
                assertTrue(Files.isRegularFile(data.resolve("member/snap/db")), "etcd3 data has member/snap/db");
            }
        }
    }

    private void rerunConverges(FaultScenario scenario, FaultScenario.Seeded seeded, Path data) throws Exception {
        try (RunnerProcess rerun = RunnerProcess.startInOwnGroup(scenario.args(data));
                ListenerSampler sampler = ListenerSampler.watch(rerun)) {
            assertEquals(0, rerun.awaitExit(RUN_DEADLINE), "the rerun:\n" + rerun.output());
            sampler.close();
            assertEquals(List.of(), sampler.nonLoopback(), "listeners of the runner's processes off loopback");
        }
        scenario.assertConverged(seeded, etcd, data);
    }
}
