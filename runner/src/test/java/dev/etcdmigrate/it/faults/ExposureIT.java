package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * During every step type, no process the runner started listens on anything but loopback: its
 * private etcds are reachable from this host only. The sampler polls every few ms while the runner
 * runs; it must see at least one listener (the step's etcd), or it is not looking.
 */
class ExposureIT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    /** Runs of a scenario whose sampler saw no listener at all, before the sampler counts as broken. */
    private static final int ATTEMPTS = 3;

    @ParameterizedTest(name = "{0}")
    @EnumSource(FaultScenario.class)
    void everyListenerOfTheRunnersProcessesIsOnLoopback(FaultScenario scenario, @TempDir Path dir) throws Exception {
        List<ListenerSampler.Listener> seen = List.of();
        int polls = 0;
        // A step's etcd listens for a few hundred ms; on a loaded machine one poll of /proc can take tens of ms, so a
        // run may end between two polls that saw nothing of it. Such a run proves nothing either way: it runs again on
        // fresh data, and every run's listeners must be on loopback.
        for (int attempt = 1; attempt <= ATTEMPTS && seen.isEmpty(); attempt++) {
            Path data = dir.resolve("data-" + attempt);
            scenario.seed(etcd, data);
            try (RunnerProcess runner = RunnerProcess.startInOwnGroup(scenario.args(data));
                    ListenerSampler sampler = ListenerSampler.watch(runner)) {
                assertEquals(0, runner.awaitExit(Duration.ofMinutes(5)), runner.output());
                sampler.close();
                seen = sampler.listeners();
                polls = sampler.polls();
                System.out.println("[exposure] " + scenario.name() + " run " + attempt + ": " + polls + " polls,"
                        + " listeners " + seen);
                assertEquals(List.of(), sampler.nonLoopback(), "listeners off loopback");
            }
            assertEquals(scenario.target().format(), java.nio.file.Files.readString(data.resolve("version.txt")));
        }
        assertFalse(
                seen.isEmpty(),
                "no listening socket seen in " + ATTEMPTS + " runs (the last " + polls
                        + " polls): the sampler is broken");
    }
}
