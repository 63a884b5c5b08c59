package dev.etcdmigrate.etcd.server;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.event.RolloutEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The real member between two legs of a cluster rollout: the etcd of the line it has reached, started with
 * the arguments after {@code --} and the operator's environment, as the exec at the target would start it
 * (real client, peer and metrics URLs; its output is the pod's). A child of the runner: the runner's
 * SIGTERM/SIGINT reach it through {@link Children}' shutdown hook, which waits for it, so the pod stops as
 * etcd stops and version.txt (the line it runs) stays true.
 */
public final class ServingMember implements AutoCloseable {

    private final Release release;
    private final Process process;
    private final Children children;
    private final Log log;

    private ServingMember(Release release, Process process, Children children, Log log) {
        this.release = release;
        this.process = process;
        this.children = children;
        this.log = log;
    }

    public static ServingMember start(
            Release release,
            Path binary,
            List<String> etcdArgs,
            Map<String, String> environment,
            String nextLeg,
            Children children,
            Log log)
            throws IOException {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(etcdArgs);
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        builder.environment().clear();
        builder.environment().putAll(environment);
        log.flush();
        Process process = builder.start();
        try {
            children.add(process);
        } catch (IllegalStateException shuttingDown) {
            throw new IOException(shuttingDown.getMessage(), shuttingDown);
        }
        log.emit(new RolloutEvent.MemberServing(release.version(), process.pid(), nextLeg));
        return new ServingMember(release, process, children, log);
    }

    public Release release() {
        return release;
    }

    /** Fails when etcd exited on its own while the runner waited: the runner exits, the kubelet restarts the pod. */
    public void requireAlive() throws PrivateEtcd.EtcdFailedException {
        if (!process.isAlive()) {
            children.remove(process);
            throw new PrivateEtcd.EtcdFailedException(
                    "etcd " + release.version() + " serving as the member exited with " + process.exitValue()
                            + " while it waited for the cluster; version.txt says " + release.version());
        }
    }

    /** SIGTERM and a clean exit within {@code grace} (the restart the runner chose), else a failure. */
    public void stop(Duration grace) throws PrivateEtcd.EtcdFailedException, InterruptedException {
        Children.terminate(process);
        if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly().waitFor();
            children.remove(process);
            throw new PrivateEtcd.EtcdFailedException(
                    "etcd " + release.version() + " did not stop within " + grace.toSeconds() + " s and was killed");
        }
        children.remove(process);
        int code = process.exitValue();
        log.emit(new EtcdEvent.EtcdStopped(release.version(), code == 0 || code == 143, code));
        if (code != 0 && code != 143) {
            throw new PrivateEtcd.EtcdFailedException(
                    "etcd " + release.version() + " exited with " + code + " when stopped");
        }
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            Children.terminate(process);
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS))
                    process.destroyForcibly().waitFor();
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
        children.remove(process);
    }
}
