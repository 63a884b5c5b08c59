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

    @ParameterizedTest(name = "{0}")
    @EnumSource(FaultScenario.class)
    void everyListenerOfTheRunnersProcessesIsOnLoopback(FaultScenario scenario, @TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        scenario.seed(etcd, data);
        List<ListenerSampler.Listener> seen;
        try (RunnerProcess runner = RunnerProcess.startInOwnGroup(scenario.args(data));
                ListenerSampler sampler = ListenerSampler.watch(runner)) {
            assertEquals(0, runner.awaitExit(Duration.ofMinutes(5)), runner.output());
            sampler.close();
            seen = sampler.listeners();
            System.out.println("[exposure] " + scenario.name() + ": " + sampler.polls() + " polls, listeners " + seen);
            assertFalse(
                    seen.isEmpty(), "no listening socket seen in " + sampler.polls() + " polls: the sampler is broken");
            assertEquals(List.of(), sampler.nonLoopback(), "listeners off loopback");
        }
        assertEquals(scenario.target().format(), java.nio.file.Files.readString(data.resolve("version.txt")));
    }
}
