package dev.etcdmigrate.image;

import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.EtcdGateway;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * An etcd from the host's provisioned binaries (system property etcd.bin.dir) on loopback ports, to
 * write a data dir the way an older deployment would have: start, write, stop with SIGTERM, then
 * record version.txt the way the runner does.
 */
final class HostEtcd implements AutoCloseable {

    static final String MEMBER = "etcd0";

    private final Process process;
    private final EtcdGateway gateway;
    private final Path log;

    private HostEtcd(Process process, EtcdGateway gateway, Path log) {
        this.process = process;
        this.gateway = gateway;
        this.log = log;
    }

    /** Creates dataDir (mode 0700) and starts etcd VERSION on it; returns once a write succeeded. */
    static HostEtcd start(String version, Path dataDir) throws Exception {
        Path binary =
                Path.of(System.getProperty("etcd.bin.dir", "../.etcd-bin")).resolve("etcd-" + version);
        if (!Files.isExecutable(binary)) {
            throw new AssertionError(binary + " is missing: provision the etcd binaries first (see docs/image.md)");
        }
        Files.createDirectories(
                dataDir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        // two ports from the kernel could be the same one, or be handed to an outgoing connection first
        ServerPorts ports = FreePorts.pick();
        int client = ports.client();
        String clientUrl = "http://127.0.0.1:" + client;
        String peerUrl = "http://127.0.0.1:" + ports.peer();
        Path log = Files.createTempFile("host-etcd-" + version, ".log");
        ProcessBuilder builder = new ProcessBuilder(List.of(
                        binary.toString(),
                        "--name",
                        MEMBER,
                        "--data-dir",
                        dataDir.toString(),
                        "--listen-client-urls",
                        clientUrl,
                        "--advertise-client-urls",
                        clientUrl,
                        "--listen-peer-urls",
                        peerUrl,
                        "--initial-advertise-peer-urls",
                        peerUrl,
                        "--initial-cluster",
                        MEMBER + "=" + peerUrl))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().keySet().removeIf(k -> k.startsWith("ETCD_") || k.startsWith("ETCDCTL_"));
        HostEtcd etcd = new HostEtcd(builder.start(), EtcdGateway.plain("127.0.0.1", client), log);
        try {
            etcd.gateway.awaitWrite(Duration.ofSeconds(60));
        } catch (AssertionError | InterruptedException e) {
            etcd.close();
            throw new AssertionError("etcd " + version + " did not serve; log: " + Files.readString(log), e);
        }
        return etcd;
    }

    /** Starts etcd VERSION on a fresh dataDir, writes the keys key-0..key-(count-1), stops it, writes version.txt. */
    static void writeDataDir(String version, Path dataDir, int count) throws Exception {
        try (HostEtcd etcd = start(version, dataDir)) {
            for (int i = 0; i < count; i++) {
                etcd.gateway.put("/image-it/key-" + i, "value-" + i);
            }
            etcd.stop();
        }
        Files.writeString(dataDir.resolve("version.txt"), version + "/etcd3\n");
    }

    /** The plain-HTTP client URL on loopback (e.g. for an API server of a test's own). */
    java.net.URI clientUrl() {
        return gateway.base();
    }

    EtcdGateway gateway() {
        return gateway;
    }

    /** SIGTERM, then waits: etcd closes bbolt and the WAL cleanly. */
    void stop() throws InterruptedException, IOException {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("etcd did not stop within 30 s of SIGTERM; log: " + Files.readString(log));
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        }
    }
}
