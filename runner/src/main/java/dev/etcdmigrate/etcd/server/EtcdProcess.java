package dev.etcdmigrate.etcd.server;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.process.LinePump;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

/**
 * One etcd child process, whichever role it plays (a step's {@link PrivateEtcd}, a rollout's {@link
 * ServingMember}): started in exactly the given environment and kept in {@link Children}, its output copied
 * by a {@link LinePump} or inherited (the pod's), stopped with SIGTERM, a deadline and SIGKILL, and always
 * waited for, so no child is left unreaped, also when a start or a stop fails.
 */
public final class EtcdProcess implements AutoCloseable {

    /** How long {@link #close()} waits after SIGTERM before SIGKILL: a step that failed half-way. */
    private static final Duration CLOSE_GRACE = Duration.ofSeconds(10);

    private final Release release;
    private final String label;
    private final Process process;
    private final Children children;
    private final Log log;
    private LinePump output;

    private EtcdProcess(Release release, String label, Process process, Children children, Log log) {
        this.release = release;
        this.label = label;
        this.process = process;
        this.children = children;
        this.log = log;
    }

    /**
     * Starts {@code command} in exactly {@code environment}; with {@code inheritOutput} its output is the
     * runner's own, else stdout and stderr are one stream for {@link #capture(LinePump)}.
     *
     * @param label how messages name it, e.g. "etcd-3.6.16"
     */
    public static EtcdProcess start(
            Release release,
            String label,
            List<String> command,
            Map<String, String> environment,
            boolean inheritOutput,
            Children children,
            Log log)
            throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command);
        if (inheritOutput) {
            builder.inheritIO();
        } else {
            builder.redirectErrorStream(true);
        }
        builder.environment().clear();
        builder.environment().putAll(environment);
        Process process = builder.start();
        try {
            children.add(process);
        } catch (IllegalStateException shuttingDown) {
            // the runner is shutting down: Children killed it; it is waited for all the same
            new EtcdProcess(release, label, process, children, log).killAndReap();
            throw new IOException(shuttingDown.getMessage(), shuttingDown);
        }
        return new EtcdProcess(release, label, process, children, log);
    }

    /** Copies the output through {@code pump}, started now (its watches may act on this process). */
    public EtcdProcess capture(LinePump pump) {
        this.output = pump.start(process.getInputStream());
        return this;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Process.destroy(): SIGTERM and our end of its output closed, for a verdict that makes its output moot. */
    public void destroy() {
        process.destroy();
    }

    /** The exit code once it has exited on its own (it is then no longer a live child), else empty. */
    public OptionalInt exited() {
        if (process.isAlive()) return OptionalInt.empty();
        children.remove(process);
        return OptionalInt.of(process.exitValue());
    }

    /** Waits up to {@code timeout} for it to exit. */
    public boolean awaitExit(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The output pump's findings (captured output only). */
    public LinePump output() {
        if (output == null) throw new IllegalStateException(label + "'s output is not captured");
        return output;
    }

    /** etcd's own fatal or panic line where it printed one (the reason), else its last lines. */
    public String whyItDied() {
        return output().fatalLine()
                .map(l -> "\"" + l + "\"")
                .orElseGet(() -> "last output: " + String.join(" | ", output().lastLines()));
    }

    /**
     * SIGTERM, wait up to the grace period, SIGKILL and fail if it lingers; a stop whose exit is not clean fails
     * too. etcd re-raises SIGTERM after closing its files, so a clean stop is 0 or "killed by signal 15" (143).
     */
    public void stop(Duration grace) throws PrivateEtcd.EtcdFailedException, InterruptedException {
        if (output != null) output.stopping();
        Children.terminate(process);
        if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            killAndReap();
            children.remove(process);
            joinOutput();
            throw new PrivateEtcd.EtcdFailedException(
                    label + " did not stop within " + grace.toSeconds() + " s of SIGTERM and was killed");
        }
        children.remove(process);
        joinOutput();
        int code = process.exitValue();
        boolean clean = code == 0 || code == 143;
        log.emit(new EtcdEvent.EtcdStopped(release.version(), clean, code));
        if (!clean) {
            throw new PrivateEtcd.EtcdFailedException(
                    label + " exited with " + code + " when stopped" + (output == null ? "" : ": " + whyItDied()));
        }
    }

    /** Leaves nothing running when a step fails half-way: SIGTERM, up to 10 s, SIGKILL, reaped. */
    @Override
    public void close() {
        if (process.isAlive()) {
            Children.terminate(process);
            try {
                if (!process.waitFor(CLOSE_GRACE.toMillis(), TimeUnit.MILLISECONDS)) killAndReap();
            } catch (InterruptedException e) {
                killAndReap();
                Thread.currentThread().interrupt();
            }
        }
        children.remove(process);
    }

    private void joinOutput() throws InterruptedException {
        if (output != null) output.join();
    }

    /** SIGKILL and wait for the exit even when interrupted (a killed process exits at once); the interrupt stays. */
    private void killAndReap() {
        process.destroyForcibly();
        boolean interrupted = false;
        while (true) {
            try {
                process.waitFor();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) Thread.currentThread().interrupt();
    }
}
