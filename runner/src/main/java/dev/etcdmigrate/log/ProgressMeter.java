package dev.etcdmigrate.log;

import dev.etcdmigrate.event.StepEvent;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Progress of long work (copies, snapshots, restores, key loads) as {@link StepEvent.Progress} at a steady
 * interval: done of total, the rate so far and an estimate of what is left. Either counted by the work
 * ({@link #advance}) or measured ({@link #watching}: e.g. the bytes a copy or a tool has written so far).
 * Work that ends within one interval reports nothing.
 */
public final class ProgressMeter implements AutoCloseable {

    /** How often a report comes; a var for tests. */
    static Duration interval = Duration.ofSeconds(5);

    /** A reading of how much is done, e.g. the size of a tree being written. */
    public interface Reading {
        long done() throws IOException;
    }

    private final Log log;
    private final String work;
    private final String unit;
    private final long total;
    private final Reading reading;
    private final AtomicLong counted = new AtomicLong();
    private final long start = System.nanoTime();
    private final Object lock = new Object();
    private boolean closed;
    private final Thread reporter;

    private ProgressMeter(Log log, String work, String unit, long total, Reading reading) {
        this.log = log;
        this.work = work;
        this.unit = unit;
        this.total = total;
        this.reading = reading == null ? counted::get : reading;
        this.reporter = Thread.ofVirtual().name("progress").start(this::report);
    }

    /** Counted by the work through {@link #advance}; {@code total} 0 when unknown. */
    public static ProgressMeter counting(Log log, String work, String unit, long total) {
        return new ProgressMeter(log, work, unit, total, null);
    }

    /** Measured by {@code reading} at each report. */
    public static ProgressMeter watching(Log log, String work, String unit, long total, Reading reading) {
        return new ProgressMeter(log, work, unit, total, reading);
    }

    public void advance(long n) {
        counted.addAndGet(n);
    }

    private void report() {
        long next = start + interval.toNanos();
        while (true) {
            synchronized (lock) {
                // a periodic report, not a synchronisation: the wait ends early only when the work is done
                for (long left = next - System.nanoTime(); !closed && left > 0; left = next - System.nanoTime()) {
                    try {
                        lock.wait(Math.max(1, left / 1_000_000));
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                if (closed) return;
            }
            emit();
            next += interval.toNanos();
        }
    }

    private void emit() {
        long done;
        try {
            done = reading.done();
        } catch (IOException | RuntimeException e) {
            return; // e.g. the file is not there yet: the next report tries again
        }
        double seconds = Math.max(1e-3, (System.nanoTime() - start) / 1e9);
        long rate = (long) (done / seconds);
        long eta = total > 0 && rate > 0 ? Math.max(0, (total - done) / rate) : -1;
        log.emit(new StepEvent.Progress(work, unit, done, total, rate, eta));
    }

    @Override
    public void close() {
        synchronized (lock) {
            closed = true;
            lock.notifyAll();
        }
        try {
            reporter.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
