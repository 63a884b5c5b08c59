package dev.etcdmigrate.it.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The one deadline-bound wait: its answer, its failure, and the monitor that wakes it early. */
class PollTest {

    @Test
    void anAnswerEndsTheWaitAndMissesAreRetried() throws Exception {
        AtomicInteger tries = new AtomicInteger();
        String answer = Poll.until(Duration.ofSeconds(30), Duration.ofMillis(1), "the third try", () -> {
            if (tries.incrementAndGet() < 3) throw new IllegalStateException("not yet");
            return "answer";
        });
        assertEquals("answer", answer);
        assertEquals(3, tries.get());
    }

    @Test
    void theDeadlineFailsNamingWhatAndTheLastMiss() {
        AssertionError e = assertThrows(
                AssertionError.class,
                () -> Poll.untilTrue(Duration.ofMillis(50), Duration.ofMillis(5), "a door open", () -> {
                    throw new IllegalStateException("door 7 shut");
                }));
        assertTrue(e.getMessage().contains("a door open") && e.getMessage().contains("door 7 shut"), e.getMessage());
    }

    @Test
    void anAssertionErrorOfTheProbeEndsTheWaitAtOnce() {
        AtomicInteger tries = new AtomicInteger();
        assertThrows(
                AssertionError.class,
                () -> Poll.untilTrue(Duration.ofMinutes(1), Duration.ofMillis(1), "x", () -> {
                    tries.incrementAndGet();
                    throw new AssertionError("the process ended");
                }));
        assertEquals(1, tries.get());
    }

    /**
     * With an interval of a minute, only the producer's notifyAll can end the wait within the deadline's half. The line
     * comes after the consumer's first miss, and the producer notifies until the consumer has it (a notify between a
     * try and the wait is missed: the next one wakes it).
     */
    @Test
    void aNotifyOnTheMonitorWakesTheWaitBeforeTheInterval() throws Exception {
        List<String> lines = new ArrayList<>();
        CountDownLatch missed = new CountDownLatch(1);
        AtomicBoolean done = new AtomicBoolean();
        Thread producer = Thread.ofPlatform().start(() -> {
            try {
                missed.await();
                Poll.untilTrue(Duration.ofSeconds(30), Duration.ofMillis(10), "the consumer woken", () -> {
                    synchronized (lines) {
                        if (lines.isEmpty()) lines.add("line");
                        lines.notifyAll();
                    }
                    return done.get();
                });
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        long start = System.nanoTime();
        String seen;
        try {
            seen = Poll.until(Duration.ofMinutes(2), Duration.ofMinutes(1), "a line", lines, () -> {
                synchronized (lines) {
                    if (!lines.isEmpty()) return lines.getFirst();
                }
                missed.countDown();
                return null;
            });
        } finally {
            done.set(true);
            producer.join();
        }
        assertEquals("line", seen);
        assertTrue(
                System.nanoTime() - start < Duration.ofSeconds(50).toNanos(),
                "woken by the notify, not by the minute's interval");
    }
}
