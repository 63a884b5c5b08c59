package dev.etcdmigrate.etcd.server;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.event.RolloutEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * The real member between two legs of a cluster rollout: the etcd of the line it has reached, started with
 * the arguments after {@code --} and the operator's environment, as the exec at the target would start it
 * (real client, peer and metrics URLs; its output is the pod's). A child of the runner: the runner's
 * SIGTERM/SIGINT reach it through {@link Children}' shutdown hook, which waits for it, so the pod stops as
 * etcd stops and version.txt (the line it runs) stays true.
 */
public final class ServingMember implements AutoCloseable {

    private final Release release;
    private final EtcdProcess process;

    private ServingMember(Release release, EtcdProcess process) {
        this.release = release;
        this.process = process;
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
        log.flush();
        EtcdProcess process =
                EtcdProcess.start(release, "etcd " + release.version(), command, environment, true, children, log);
        log.emit(new RolloutEvent.MemberServing(release.version(), process.pid(), nextLeg));
        return new ServingMember(release, process);
    }

    public Release release() {
        return release;
    }

    /** Fails when etcd exited on its own while the runner waited: the runner exits, the kubelet restarts the pod. */
    public void requireAlive() throws PrivateEtcd.EtcdFailedException {
        OptionalInt exited = process.exited();
        if (exited.isPresent()) {
            throw new PrivateEtcd.EtcdFailedException(
                    "etcd " + release.version() + " serving as the member exited with " + exited.getAsInt()
                            + " while it waited for the cluster; version.txt says " + release.version());
        }
    }

    /** SIGTERM and a clean exit within {@code grace} (the restart the runner chose), else a failure. */
    public void stop(Duration grace) throws PrivateEtcd.EtcdFailedException, InterruptedException {
        process.stop(grace);
    }

    @Override
    public void close() {
        process.close();
    }
}
