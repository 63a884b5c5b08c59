package dev.etcdmigrate.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.event.StepEvent;
import dev.etcdmigrate.it.support.Poll;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ProgressMeterTest {

    private final List<StepEvent.Progress> reports = new CopyOnWriteArrayList<>();
    private final Log log = Log.silent().subscribe(e -> {
        if (e instanceof StepEvent.Progress p) reports.add(p);
    });

    @AfterEach
    void defaultInterval() {
        ProgressMeter.interval = Duration.ofSeconds(5);
    }

    @Test
    void reportsAtTheIntervalWithRateAndEstimateUntilClosed() throws Exception {
        ProgressMeter.interval = Duration.ofMillis(30);
        try (ProgressMeter meter = ProgressMeter.counting(log, "loading keys", "keys", 1000)) {
            meter.advance(100);
            // the reports come from the meter's own thread
            Poll.untilTrue(
                    Duration.ofSeconds(10), Duration.ofMillis(1), "two progress reports", () -> reports.size() >= 2);
        }
        int afterClose = reports.size();
        assertTrue(afterClose >= 2, reports.toString());
        StepEvent.Progress first = reports.getFirst();
        assertEquals("loading keys", first.work());
        assertEquals(100, first.done());
        assertEquals(1000, first.total());
        assertTrue(first.perSecond() > 0, first.toString());
        assertTrue(first.etaSeconds() >= 0, first.toString());
        assertEquals(afterClose, reports.size(), "close() joined the reporter: no report after it");
    }

    @Test
    void workThatEndsWithinOneIntervalReportsNothing() {
        try (ProgressMeter meter = ProgressMeter.watching(log, "copying", "bytes", 0, () -> 42)) {
            meter.advance(1);
        }
        assertEquals(List.of(), reports);
    }
}
