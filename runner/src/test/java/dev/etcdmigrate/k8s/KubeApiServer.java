package dev.etcdmigrate.k8s;

import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.it.support.Poll;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Deque;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A real kube-apiserver (built from the Go module proxy by scripts/build-kubernetes.sh, cached) in
 * front of a given etcd client URL: RBAC, a static admin token, a service-account key pair made
 * here, its own self-signed serving certificate, a free loopback port. {@link #close()} stops it.
 */
public final class KubeApiServer implements AutoCloseable {

    /** The release the tests run; the script caches one build per version. */
    public static final String VERSION = System.getProperty("kubernetes.version", "v1.37.2");
    /** TEST-NET-1: the API server refuses a loopback advertise address; this one receives no traffic. */
    static final String ADVERTISE_ADDRESS = "192.0.2.10";

    private final Process process;
    private final Deque<String> tail = new ArrayDeque<>();
    private final Thread pump;
    private final KubeClient client;

    private KubeApiServer(Process process, KubeClient client) {
        this.process = process;
        this.client = client;
        this.pump = Thread.ofVirtual().start(() -> {
            try (BufferedReader r =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    synchronized (tail) {
                        tail.addLast(line);
                        if (tail.size() > 60) tail.removeFirst();
                    }
                }
            } catch (IOException ignored) {
                // process gone
            }
        });
    }

    /** The cached binary, built on first use (cold: minutes; warm: well under a second). */
    public static Path binary() throws IOException, InterruptedException {
        String given = System.getProperty("kube.apiserver.binary");
        if (given != null && !given.isBlank()) return Path.of(given);
        Path script = repositoryRoot().resolve("scripts/build-kubernetes.sh");
        Process build = new ProcessBuilder("bash", script.toString(), "--version", VERSION, "kube-apiserver")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        String out = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!build.waitFor(40, TimeUnit.MINUTES) || build.exitValue() != 0) {
            build.destroyForcibly();
            throw new IOException(script + " failed (exit " + (build.isAlive() ? "timeout" : build.exitValue()) + ")");
        }
        Path binary = Path.of(out.lines().reduce((a, b) -> b).orElseThrow());
        if (!Files.isExecutable(binary)) throw new IOException("not executable: " + binary);
        return binary;
    }

    private static Path repositoryRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("scripts/build-kubernetes.sh"))) return p;
        }
        throw new IllegalStateException(
                "scripts/build-kubernetes.sh not found above " + Path.of("").toAbsolutePath());
    }

    /**
     * Starts the API server on a free loopback port against etcdUrl and waits (deadline) until its
     * /readyz answers 200. workDir holds its keys, token file and certificates.
     */
    public static KubeApiServer start(Path binary, URI etcdUrl, Path workDir, Duration deadline) throws Exception {
        return start(binary, etcdUrl, workDir, deadline, List.of());
    }

    /** The same with more flags, e.g. --etcd-cafile/--etcd-certfile/--etcd-keyfile for an etcd with client TLS. */
    public static KubeApiServer start(Path binary, URI etcdUrl, Path workDir, Duration deadline, List<String> moreFlags)
            throws Exception {
        return start(binary, "127.0.0.1", FreePorts.pick().client(), etcdUrl.toString(), workDir, deadline, moreFlags);
    }

    /**
     * The same on a given address and port (a client that must know them before the server runs, e.g. a
     * kubelet's kubeconfig), against etcdServers (comma-separated client URLs). A certificate and key already
     * in workDir/certs/apiserver.crt and apiserver.key (e.g. issued by the cluster's CA) are served as they are;
     * tokens.csv already in workDir is kept (see {@link #writeToken(Path)}).
     */
    public static KubeApiServer start(
            Path binary,
            String bindAddress,
            int port,
            String etcdServers,
            Path workDir,
            Duration deadline,
            List<String> moreFlags)
            throws Exception {
        Files.createDirectories(workDir);
        Path certDir = Files.createDirectories(workDir.resolve("certs"));
        Path saKey = workDir.resolve("sa.key");
        Path saPub = workDir.resolve("sa.pub");
        if (!Files.exists(saKey)) {
            // one key pair per work dir: a restarted server must accept the tokens it signed before
            KeyPair keys = KeyPairGenerator.getInstance("RSA").generateKeyPair();
            writePem(saKey, "PRIVATE KEY", keys.getPrivate().getEncoded());
            writePem(saPub, "PUBLIC KEY", keys.getPublic().getEncoded());
        }
        String token = writeToken(workDir);
        Path tokens = workDir.resolve("tokens.csv");
        List<String> command = new ArrayList<>(List.of(
                binary.toString(),
                "--etcd-servers=" + etcdServers,
                "--bind-address=" + bindAddress,
                "--secure-port=" + port,
                "--advertise-address=" + ADVERTISE_ADDRESS,
                "--cert-dir=" + certDir,
                "--authorization-mode=RBAC",
                "--token-auth-file=" + tokens,
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                "--service-account-key-file=" + saPub,
                "--service-account-signing-key-file=" + saKey,
                "--service-cluster-ip-range=10.96.0.0/12",
                // the tests read old revisions: no compaction by the API server while they run
                "--etcd-compaction-interval=0",
                "--v=1"));
        command.addAll(moreFlags);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().keySet().removeIf(k -> k.startsWith("KUBE") || k.startsWith("ETCD"));
        Process process = builder.start();
        KubeApiServer server = null;
        try {
            KubeClient client = new KubeClient(
                    URI.create("https://" + bindAddress + ":" + port), token, certDir.resolve("apiserver.crt"));
            server = new KubeApiServer(process, client);
            server.awaitReady(deadline);
            return server;
        } catch (Exception | Error e) {
            if (server != null) server.close();
            else process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            throw e;
        }
    }

    /** The admin token of workDir (tokens.csv, written once): a kubelet started before the server can carry it. */
    public static String writeToken(Path workDir) throws IOException {
        Files.createDirectories(workDir);
        Path tokens = workDir.resolve("tokens.csv");
        if (!Files.exists(tokens)) {
            writeOwnerOnly(tokens, UUID.randomUUID() + ",etcd-migrate-admin,etcd-migrate-admin,system:masters\n");
        }
        return Files.readString(tokens).split(",", 2)[0];
    }

    /** Polls /readyz until 200 (every check green, etcd included) or the deadline; the log's tail on a failure. */
    public void awaitReady(Duration deadline) throws Exception {
        try {
            Poll.untilTrue(deadline, Duration.ofMillis(200), "kube-apiserver ready (/readyz 200)", () -> {
                if (!process.isAlive()) throw new AssertionError("kube-apiserver exited " + process.exitValue());
                HttpResponse<String> r = client.raw("GET", "/readyz", null); // throws until it has its certificate
                if (r.statusCode() == 200) return true;
                throw new IllegalStateException(r.statusCode() + " " + r.body());
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\nlog tail:\n" + tail(), e);
        }
    }

    public KubeClient client() {
        return client;
    }

    public String tail() {
        synchronized (tail) {
            return String.join("\n", tail);
        }
    }

    private static void writePem(Path file, String type, byte[] der) throws IOException {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII))
                .encodeToString(der);
        writeOwnerOnly(file, "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n");
    }

    private static void writeOwnerOnly(Path file, String content) throws IOException {
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(file, content);
    }

    /** SIGTERM, then SIGKILL after a grace period; always reaped. */
    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
        pump.join(5000);
    }
}
