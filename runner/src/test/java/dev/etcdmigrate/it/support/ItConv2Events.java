package dev.etcdmigrate.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.function.Predicate;

/** Step events as the fault, lock and cluster tests wait for them: by index and total, never by wording. */
public final class ItConv2Events {

    private ItConv2Events() {}

    /** A step-started/step-finished event of step {@code index} of {@code total}. */
    public static Predicate<JsonNode> step(int index, int total) {
        return e -> e.path("index").asInt() == index && e.path("total").asInt() == total;
    }

    public static JsonNode awaitStepStarted(RunnerProcess runner, int index, int total, Duration deadline)
            throws InterruptedException {
        return runner.awaitEvent("step-started", step(index, total), deadline);
    }

    public static JsonNode awaitStepFinished(RunnerProcess runner, int index, int total, Duration deadline)
            throws InterruptedException {
        return runner.awaitEvent("step-finished", step(index, total), deadline);
    }

    /** Whether the runner reported step {@code index} of {@code total} finished (version.txt rewritten). */
    public static boolean stepFinished(RunnerProcess runner, int index, int total) {
        return runner.events("step-finished").stream().anyMatch(step(index, total));
    }
}
