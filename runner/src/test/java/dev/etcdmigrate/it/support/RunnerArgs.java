package dev.etcdmigrate.it.support;

import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Command lines for the runner under test: free private ports, the provisioned bin dir. */
public final class RunnerArgs {

    private RunnerArgs() {}

    /** `migrate --no-exec` of dataDir to target/etcd3, plus extra flags. */
    public static List<String> migrate(Path dataDir, String target, String... extra) {
        List<String> args = new ArrayList<>(common("migrate", dataDir, target));
        args.add("--no-exec");
        args.addAll(List.of(extra));
        return args;
    }

    /** `migrate` of dataDir to target, then exec etcd serving on the given loopback ports. */
    public static List<String> migrateAndServe(Path dataDir, String target, ServerPorts real) {
        String client = "http://127.0.0.1:" + real.client();
        List<String> args = new ArrayList<>(common("migrate", dataDir, target));
        args.addAll(List.of(
                "--",
                "--name",
                "it",
                "--listen-client-urls",
                client,
                "--advertise-client-urls",
                client,
                "--listen-peer-urls",
                "http://127.0.0.1:" + real.peer()));
        return args;
    }

    /**
     * The member {@code name}'s data dir to target with the binaries of binDir, the flags only: a benchmark puts its
     * launcher (the runner's default command is migrate) or a unit test the command word in front, and adds the rest.
     */
    public static List<String> flags(Path dataDir, Path binDir, String target, String name) {
        return List.of(
                "--data-dir",
                dataDir.toString(),
                "--bin-dir",
                binDir.toString(),
                "--target-version",
                target,
                "--name",
                name);
    }

    /** The same without a bin dir: flags a unit test reads into a RunConfig, no etcd run. */
    public static List<String> flags(Path dataDir, String target, String name) {
        return List.of("--data-dir", dataDir.toString(), "--target-version", target, "--name", name);
    }

    /** The private etcd's loopback ports. */
    public static List<String> ports(ServerPorts ports) {
        return List.of("--port", String.valueOf(ports.client()), "--peer-port", String.valueOf(ports.peer()));
    }

    /**
     * {@code command} to target/etcd3 with no --name and no --data-dir of the runner's own: it takes etcd's (after
     * "--", which the caller adds with etcd's flags); free private ports.
     */
    public static List<String> takingEtcds(String command, String target) {
        List<String> args = new ArrayList<>(List.of(
                command,
                "--bin-dir",
                EtcdFixture.binDir().toString(),
                "--target-version",
                target,
                "--target-storage",
                "etcd3"));
        args.addAll(ports(FreePorts.pick()));
        return args;
    }

    /** `status` of the cluster behind endpoints toward target, plus extra flags. */
    public static List<String> status(String endpoints, String target, String... extra) {
        List<String> args = new ArrayList<>(List.of("status", "--endpoints", endpoints, "--target-version", target));
        args.addAll(List.of(extra));
        return args;
    }

    public static List<String> common(String command, Path dataDir, String target) {
        List<String> args = new ArrayList<>(commandLine(command, dataDir, target, "it"));
        args.addAll(ports(FreePorts.pick()));
        return List.copyOf(args);
    }

    /** {@code command} of the member {@code name}'s data dir to target/etcd3 with the provisioned binaries. */
    private static List<String> commandLine(String command, Path dataDir, String target, String name) {
        return List.of(
                command,
                "--data-dir",
                dataDir.toString(),
                "--bin-dir",
                EtcdFixture.binDir().toString(),
                "--target-version",
                target,
                "--target-storage",
                "etcd3",
                "--name",
                name);
    }

    /**
     * What a cluster member's manifest gives: {@code name}'s etcd flags after "--" (a new cluster's, as kubeadm
     * writes them), the runner's own before it; the URLs as the member advertises and listens on them.
     */
    public record Member(
            String name,
            Path data,
            String initialCluster,
            String token,
            String peerUrl,
            String listenPeerUrl,
            String clientUrl,
            String listenClientUrl) {
        /** Listening on the URLs it advertises. */
        public Member(String name, Path data, String initialCluster, String token, String peerUrl, String clientUrl) {
            this(name, data, initialCluster, token, peerUrl, peerUrl, clientUrl, clientUrl);
        }
    }

    /**
     * `migrate` of the member's data dir to target/etcd3, then exec of its etcd: {@code runnerFlags} before "--"
     * (the private ports, a peer CA...), {@code etcdFlags} after the member's own (TLS).
     */
    public static List<String> member(Member m, String target, List<String> runnerFlags, List<String> etcdFlags) {
        return member("migrate", m, target, runnerFlags, etcdFlags);
    }

    /** The same for another command (plan, inspect) with the member's flags. */
    public static List<String> member(
            String command, Member m, String target, List<String> runnerFlags, List<String> etcdFlags) {
        List<String> args = new ArrayList<>(commandLine(command, m.data(), target, m.name()));
        args.addAll(runnerFlags);
        args.addAll(List.of("--initial-cluster", m.initialCluster(), "--listen-peer-urls", m.listenPeerUrl(), "--"));
        args.addAll(etcd(m));
        args.addAll(etcdFlags);
        return args;
    }

    /** The member's own etcd flags (after "--" in its manifest): a new cluster's, as kubeadm writes them. */
    public static List<String> etcd(Member m) {
        return List.of(
                "--name",
                m.name(),
                "--initial-cluster",
                m.initialCluster(),
                "--initial-cluster-state",
                "new",
                "--initial-cluster-token",
                m.token(),
                "--initial-advertise-peer-urls",
                m.peerUrl(),
                "--listen-peer-urls",
                m.listenPeerUrl(),
                "--listen-client-urls",
                m.listenClientUrl(),
                "--advertise-client-urls",
                m.clientUrl());
    }
}
