package dev.etcdmigrate.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.step.StepRefusedException;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * What a step's exception ends the run with: only a refusal passes through unchanged
 * (exit 3, nothing changed); a usage error raised once steps run is a failure (exit 1), never exit 2
 * ("nothing touched"), since an earlier step or this one may have changed the data.
 */
class StepRunnerEndingTest {

    @Test
    void aStepsRefusalStaysARefusal() {
        StepRefusedException refused = new StepRefusedException("etcd 3.6.16 refuses the v2 content");
        assertSame(refused, StepRunner.ending(refused, 2, 3, refused.getMessage(), "3.5.35/etcd3"));
    }

    @Test
    void aUsageErrorAfterAStepChangedDataIsAFailureNotExit2() {
        MigrateException ending = StepRunner.ending(
                new UsageException("--quota-backend-bytes must be a number"), 2, 3, "bad flag", "3.5.35/etcd3");
        assertEquals(ExitStatus.FAILED, ending.status());
        assertEquals(1, ending.exitCode());
        assertEquals("step 2/3 failed: bad flag; version.txt still says 3.5.35/etcd3", ending.getMessage());
    }

    @Test
    void anythingElseIsTheStepsFailure() {
        for (Exception e : new Exception[] {
            new FailedException("etcd exited 1", null), new IOException("disk full"), new IllegalStateException("bug")
        }) {
            assertEquals(1, StepRunner.ending(e, 1, 1, "r", "nothing").exitCode(), e.toString());
        }
    }
}
