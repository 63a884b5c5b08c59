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
            if (System.nanoTime() > end)
                throw new AssertionError("never " + what + " within " + deadline + ": " + last);
            Thread.sleep(every.toMillis()); // the poll interval of a deadline-bound wait
        }
    }

    /** The same for a yes/no probe. */
    public static void untilTrue(Duration deadline, Duration every, String what, Probe<Boolean> probe)
            throws InterruptedException {
        until(deadline, every, what, () -> Boolean.TRUE.equals(probe.get()) ? Boolean.TRUE : null);
    }
}
