package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.etcdmigrate.it.support.EtcdFixture;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A run the power-cut and I/O-error suites drive on the power-cut file system: a step type ({@link FaultScenario}) or
 * a restore from a snapshot ({@link RestoreScenario}). The seed is written under {@code base/data} (and beside it),
 * copied to the backing dir and run through the mount.
 */
interface CutScenario {

    String name();

    int ordinal();

    /** Skips the scenario unless -Dfault.scenarios (comma-separated names, default all) names it. */
    default void assumeSelected() {
        String only = System.getProperty("fault.scenarios", "");
        assumeTrue(
                only.isBlank()
                        || List.of(only.toUpperCase(Locale.ROOT).split(",")).contains(name()),
                "fault.scenarios=" + only);
    }

    /** Writes the start data into {@code data} (which must not exist yet) and says what it holds. */
    FaultScenario.Seeded seed(EtcdFixture etcd, Path data) throws Exception;

    /** The runner's command line on {@code data}, the data dir as the mount shows it. */
    List<String> args(FaultScenario.Seeded seeded, Path data);

    /** What a power cut left must not claim more than the data holds, nor mix data that must not meet. */
    void assertConsistentCutState(FaultScenario.Seeded seeded, Path data) throws Exception;

    /** The end of a run that converged. */
    void assertConverged(FaultScenario.Seeded seeded, EtcdFixture etcd, Path data) throws Exception;

    /** The exit codes a run that a failing call stopped may end with. */
    default Set<Integer> failureExits() {
        return Set.of(1);
    }

    /** After a run a failing call stopped: nothing of the data it started from is lost. */
    default void assertNothingLost(FaultScenario.Seeded seeded, Path data) throws Exception {}
}
