package dev.etcdmigrate.process;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.commons.exec.ProcessDestroyer;

/**
 * Every child process the runner starts, so none outlives it: on JVM shutdown (SIGTERM to the
 * runner, or a failure that ends it) each is sent SIGTERM, waited for, and SIGKILLed if it lingers.
 * Also commons-exec's destroyer for one-shot tools.
 */
public final class Children implements ProcessDestroyer {

    private final Set<Process> live = new LinkedHashSet<>();
    private final Duration grace;
    private boolean shuttingDown;

    public Children(Duration grace) {
        this.grace = grace;
    }

    /** Registers a JVM shutdown hook that stops every live child. */
    public Children installShutdownHook() {
        Runtime.getRuntime().addShutdownHook(new Thread(this::stopAll, "stop-children"));
        return this;
    }

    @Override
    public synchronized boolean add(Process process) {
        if (shuttingDown) {
            process.destroyForcibly();
            throw new IllegalStateException("the runner is shutting down; refused to keep a new child process");
        }
        return live.add(process);
    }

    @Override
    public synchronized boolean remove(Process process) {
        return live.remove(process);
    }

    @Override
    public synchronized int size() {
        return live.size();
    }

    /**
     * SIGTERM through the process handle: Process.destroy() also closes our end of the child's output
     * pipe, and etcd, still logging its shutdown, would then die of SIGPIPE before closing its files.
     */
    public static void terminate(Process process) {
        process.toHandle().destroy();
    }

    /** SIGTERM to all, wait up to the grace period, then SIGKILL what is left and reap it. */
    public void stopAll() {
        List<Process> targets;
        synchronized (this) {
            shuttingDown = true;
            targets = new ArrayList<>(live);
        }
        targets.forEach(Children::terminate);
        long deadline = System.nanoTime() + grace.toNanos();
        for (Process p : targets) {
            try {
                long left = Math.max(0, deadline - System.nanoTime());
                if (!p.waitFor(left, TimeUnit.NANOSECONDS)) {
                    p.destroyForcibly().waitFor();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
