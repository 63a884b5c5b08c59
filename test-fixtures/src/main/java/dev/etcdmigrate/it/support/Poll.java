package dev.etcdmigrate.it.support;

import java.time.Duration;

/** The one deadline-bound wait of the tests: ask until an answer comes or the deadline passes. */
public final class Poll {

    private Poll() {}

    /** One try: an answer, or null for "not yet"; an exception is "not yet" too, remembered for the failure. */
    @FunctionalInterface
    public interface Probe<T> {
        T get() throws Exception;
    }

    /** Until the probe answers (non-null), every {@code every}; fails naming {@code what} and the last miss. */
    public static <T> T until(Duration deadline, Duration every, String what, Probe<T> probe)
            throws InterruptedException {
        return until(deadline, every, what, null, probe);
    }

    /**
     * The same, woken early by a {@code notifyAll} on {@code monitor} (a producer's new line or sample): the wait
     * between tries is the monitor's, at most {@code every}, so an answer is seen as soon as it is produced.
     */
    public static <T> T until(Duration deadline, Duration every, String what, Object monitor, Probe<T> probe)
            throws InterruptedException {
        long end = System.nanoTime() + deadline.toNanos();
        String last = "no answer";
        while (true) {
            try {
                T answer = probe.get();
                if (answer != null) return answer;
            } catch (InterruptedException e) {
                throw e;
            } catch (AssertionError e) {
                throw e; // the probe saw something that can never turn out right
            } catch (Exception e) {
                last = e.toString();
            }
            long left = end - System.nanoTime();
            if (left < 0) throw new AssertionError("never " + what + " within " + deadline + ": " + last);
            long pause = Math.max(
                    1, Math.min(every.toMillis(), Duration.ofNanos(left).toMillis()));
            if (monitor == null) {
                Thread.sleep(pause); // the poll interval of a deadline-bound wait
            } else {
                synchronized (monitor) {
                    monitor.wait(pause); // a notifyAll ends it early; a missed one costs at most the interval
                }
            }
        }
    }

    /** The same for a yes/no probe. */
    public static void untilTrue(Duration deadline, Duration every, String what, Probe<Boolean> probe)
            throws InterruptedException {
        until(deadline, every, what, () -> Boolean.TRUE.equals(probe.get()) ? Boolean.TRUE : null);
    }
}
