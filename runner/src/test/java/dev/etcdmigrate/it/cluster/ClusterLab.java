package dev.etcdmigrate.it.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.EtcdGateway;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.ThrowawayCa;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The cluster of the HA suites: members with peer and client TLS (client-cert auth; a CA made here), one runner per
 * member, each started as a member's manifest starts it ({@link RunnerArgs#member}), on one of three layouts:
 * <ul>
 *   <li>{@link Layout#SEPARATE_HOSTS}: a network namespace per member ({@link NetworkLab}), etcd's usual ports on
 *       each, the URLs by address;
 *   <li>{@link Layout#HOSTNAMES}: the same hosts, the URLs by host name (m0.ha.test...), resolved in every
 *       namespace through its own /etc/netns/NS/hosts (`ip netns exec` mounts it over /etc/hosts);
 *   <li>{@link Layout#ONE_HOST}: every member on 127.0.0.1 with its own client and peer ports, no namespace;
 *   <li>{@link Layout#LOOPBACK_HOSTS}: 127.0.0.1-3, the same free ports on each, no namespace.
 * </ul>
 * TLS or not ({@link Tls}); members on any lines, by
 * their runners or as plain etcd processes ({@link #startEtcd}).
 * With namespaces, one more host is the clients' (writer, sampler, requests); on one host they run beside the
 * members. {@link Writer} records every acknowledged write; {@link Sampler} asks every member's /version every
 * 100 ms, so a test can tell how many members were out of service at each moment. {@link #close()} stops every
 * client and runner, then the namespaces with anything left in them, and removes the hosts files.
 */
public final class ClusterLab implements AutoCloseable {

    public enum Layout {
        SEPARATE_HOSTS,
        HOSTNAMES,
        ONE_HOST,
        /** Separate hosts without namespaces: 127.0.0.1, .2, .3, the same client and peer ports on each. */
        LOOPBACK_HOSTS
    }

    /** What the members encrypt: nothing (http), peer traffic only, or peer and client traffic (client-cert auth). */
    public enum Tls {
        NONE,
        PEER,
        PEER_AND_CLIENT
    }

    private static final ObjectMapper JSON = new ObjectMapper();
    /** The private client port the runner migrates on, in a member's own namespace (nothing else there). */
    private static final int NETNS_PRIVATE_PORT = 2381;

    /** A member: its host (namespace index; 0.. on one host too), data dir, TLS files, URL host and ports. */
    public record Member(
            int host, String name, Path data, ThrowawayCa.Pem pem, String urlHost, ServerPorts ports, Tls tls) {
        public String peerUrl() {
            return (tls == Tls.NONE ? "http://" : "https://") + urlHost + ":" + ports.peer();
        }

        public String clientUrl() {
            return (tls == Tls.PEER_AND_CLIENT ? "https://" : "http://") + urlHost + ":" + ports.client();
        }

        /** The address it listens on: etcd binds only to IP addresses (a host name in a listen URL is refused). */
        String listenHost() {
            return urlHost.endsWith(".ha.test") ? ipOf(this) : urlHost;
        }

        public String listenPeerUrl() {
            return peerUrl().replace("//" + urlHost + ":", "//" + listenHost() + ":");
        }

        String listenClientUrl() {
            return clientUrl().replace("//" + urlHost + ":", "//" + listenHost() + ":");
        }

        /** The same member (host, name, ports, certificate) with its data dir under another dir (a copy of it). */
        Member in(Path dir) {
            return new Member(host, name, dir.resolve(name), pem, urlHost, ports, tls);
        }
    }

    /** One acknowledged write, as the writer printed it. */
    public record Ack(int endpoint, String key, long revision, long atMillis) {}

    /** One failed write (timed out, refused, no leader), as the writer printed it: it may still have committed. */
    public record Fail(int endpoint, String key, long atMillis) {}

    /** One sample: when, each member's etcd version ("-": out of service), the cluster version. */
    record Sample(long atMillis, List<String> versions, String cluster) {
        long down() {
            return versions.stream().filter(v -> v.equals("-")).count();
        }
    }

    private final Layout layout;
    private final String token;
    private final Tls tls;
    private final NetworkLab network;
    private final ThrowawayCa certificates;
    private final ThrowawayCa.Pem clientPem;
    private final List<Member> members = new ArrayList<>();
    /** The runner flags of each member's private etcd (ports). */
    private final List<List<String>> privateFlags = new ArrayList<>();

    private final List<Path> hostsDirs = new ArrayList<>();
    private final java.util.Set<Integer> usedPorts = new java.util.HashSet<>();
    private final List<RunnerProcess> runners = java.util.Collections.synchronizedList(new ArrayList<>());
    private final List<Process> clients = new ArrayList<>();
    private final List<Process> etcds = java.util.Collections.synchronizedList(new ArrayList<>());
    private final Map<RunnerProcess, Member> owners =
            java.util.Collections.synchronizedMap(new java.util.IdentityHashMap<>());
    /** m0's flags name only m0 once its data exists, as kubeadm init writes the first node's. */
    private boolean kubeadmFirstNode;
    /** More etcd flags after "--" in every member's manifest (e.g. the ones a kubeadm release writes). */
    private List<String> etcdFlags = List.of();

    private ClusterLab(Path dir, int size, Layout layout, String token, Tls tls, boolean testReaches) throws Exception {
        this.layout = layout;
        this.token = token;
        this.tls = tls;
        // the last host: the clients'
        this.network = namespaces(layout) ? new NetworkLab(size + 1, testReaches) : null;
        try {
            certificates = ThrowawayCa.newCa(Files.createDirectory(dir.resolve("pki")));
            ServerPorts usual = namespaces(layout) ? new ServerPorts(2379, 2380) : freePorts();
            for (int i = 0; i < size; i++) {
                String name = "m" + i;
                Member m = switch (layout) {
                    case SEPARATE_HOSTS ->
                        new Member(
                                i,
                                name,
                                dir.resolve(name),
                                certificates.issue(name, network.address(i)),
                                network.address(i),
                                usual,
                                tls);
                    case HOSTNAMES ->
                        new Member(
                                i,
                                name,
                                dir.resolve(name),
                                certificates.issue(
                                        name, List.of(network.address(i)), List.of(hostName(i), "localhost")),
                                hostName(i),
                                usual,
                                tls);
                    case ONE_HOST ->
                        new Member(i, name, dir.resolve(name), certificates.issue(name), "127.0.0.1", freePorts(), tls);
                    case LOOPBACK_HOSTS ->
                        new Member(
                                i,
                                name,
                                dir.resolve(name),
                                certificates.issue(name, "127.0.0." + (i + 1)),
                                "127.0.0." + (i + 1),
                                usual,
                                tls);
                };
                members.add(m);
                if (!namespaces(layout)) {
                    ServerPorts own = freePorts();
                    privateFlags.add(
                            List.of("--port", String.valueOf(own.client()), "--peer-port", String.valueOf(own.peer())));
                } else {
                    privateFlags.add(List.of("--port", String.valueOf(NETNS_PRIVATE_PORT)));
                }
            }
            clientPem = network == null
                    ? certificates.issue("writer")
                    : certificates.issue("writer", network.address(size));
            if (layout == Layout.HOSTNAMES) writeHostsFiles(size);
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    /** {@code size} members with TLS on the layout (namespaces need root); {@code token}: --initial-cluster-token. */
    public static ClusterLab create(Path dir, int size, Layout layout, String token) throws Exception {
        return create(dir, size, layout, token, Tls.PEER_AND_CLIENT);
    }

    /** The same, with as much TLS as given. */
    public static ClusterLab create(Path dir, int size, Layout layout, String token, Tls tls) throws Exception {
        return create(dir, size, layout, token, tls, false);
    }

    /**
     * The same; {@code testReaches}: with namespaces, the test's own process reaches every member too (a leg of the
     * root namespace on the hosts' bridge, {@link NetworkLab#NetworkLab(int, boolean)}), so its clients and the
     * runner's in-process commands speak to the members as a client on another host does.
     */
    public static ClusterLab create(Path dir, int size, Layout layout, String token, Tls tls, boolean testReaches)
            throws Exception {
        if (namespaces(layout)) {
            assertEquals(
                    "0",
                    new String(new ProcessBuilder("id", "-u")
                                    .start()
                                    .getInputStream()
                                    .readAllBytes())
                            .trim(),
                    "network namespaces need root (CI runs as root)");
        }
        return new ClusterLab(dir, size, layout, token, tls, testReaches);
    }

    private static boolean namespaces(Layout layout) {
        return layout == Layout.SEPARATE_HOSTS || layout == Layout.HOSTNAMES;
    }

    /** The bundled release of a minor line ("3.5"). */
    public static Release line(String minor) {
        return EtcdFixture.V3_RELEASES.stream()
                .filter(r -> r.minorLine().toString().equals(minor))
                .reduce((a, b) -> b)
                .orElseThrow();
    }

    private static String hostName(int i) {
        return "m" + i + ".ha.test";
    }

    /** A host-named member's address: its certificate's one IP SAN (the namespace's address). */
    private static String ipOf(Member m) {
        try (var in = Files.newInputStream(m.pem().cert())) {
            var cert = (java.security.cert.X509Certificate)
                    java.security.cert.CertificateFactory.getInstance("X.509").generateCertificate(in);
            for (List<?> san : cert.getSubjectAlternativeNames()) {
                if (((Integer) san.get(0)) == 7) return (String) san.get(1); // iPAddress
            }
            throw new IllegalStateException("no IP SAN in " + m.pem().cert());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A client port and a peer port, both free, neither one this lab has handed out already. */
    private ServerPorts freePorts() {
        while (true) {
            ServerPorts p = FreePorts.pick();
            if (!usedPorts.contains(p.client()) && !usedPorts.contains(p.peer())) {
                usedPorts.add(p.client());
                usedPorts.add(p.peer());
                return p;
            }
        }
    }

    /** /etc/netns/NS/hosts for every host: each member's name with its address (removed by close). */
    private void writeHostsFiles(int size) throws IOException {
        String hosts = "127.0.0.1 localhost\n"
                + Stream.iterate(0, i -> i + 1)
                        .limit(size)
                        .map(i -> network.address(i) + " " + hostName(i))
                        .collect(Collectors.joining("\n"))
                + "\n";
        for (String ns : network.names()) {
            if (!ns.matches(".*-h\\d+")) continue;
            Path nsDir = Path.of("/etc/netns", ns);
            Files.createDirectories(nsDir);
            hostsDirs.add(nsDir);
            Files.writeString(nsDir.resolve("hosts"), hosts);
        }
    }

    Layout layout() {
        return layout;
    }

    public List<Member> members() {
        return members;
    }

    public int size() {
        return members.size();
    }

    /** The namespaces (null on one host). */
    public NetworkLab network() {
        return network;
    }

    public ThrowawayCa certificates() {
        return certificates;
    }

    /** The clients' certificate and key (the writer's, the sampler's; client-cert auth accepts it). */
    public ThrowawayCa.Pem clientPem() {
        return clientPem;
    }

    /** Every runner started so far, oldest first (a copy). */
    public List<RunnerProcess> runners() {
        synchronized (runners) {
            return List.copyOf(runners);
        }
    }

    /** Whether m0's runner is started as kubeadm's first node: --initial-cluster names only m0 once it has data. */
    void kubeadmFirstNode(boolean asKubeadmDoes) {
        kubeadmFirstNode = asKubeadmDoes;
    }

    /** More etcd flags for every runner started from now on, as an operator's manifest adds them. */
    public void etcdFlags(List<String> flags) {
        etcdFlags = List.copyOf(flags);
    }

    String initialCluster() {
        return members.stream().map(m -> m.name() + "=" + m.peerUrl()).collect(Collectors.joining(","));
    }

    public String endpoints() {
        return members.stream().map(Member::clientUrl).collect(Collectors.joining(","));
    }

    /** The member's runner to {@code version}/etcd3, then exec of etcd; in its namespace, if it has one. */
    /**
     * Every runner's own events between two instants (epoch ms), killed runners' too, in time order: "time member
     * event: message". For a failure's reader: what each runner decided while the samples went wrong.
     */
    String timeline(long fromMillis, long toMillis) {
        List<Map.Entry<java.time.Instant, String>> lines = new ArrayList<>();
        List<RunnerProcess> all;
        synchronized (runners) {
            all = List.copyOf(runners);
        }
        for (RunnerProcess r : all) {
            Member m = owners.get(r);
            for (com.fasterxml.jackson.databind.JsonNode e : r.events()) {
                java.time.Instant at;
                try {
                    at = java.time.Instant.parse(e.path("time").asText(""));
                } catch (java.time.format.DateTimeParseException notATime) {
                    continue;
                }
                if (at.toEpochMilli() < fromMillis || at.toEpochMilli() > toMillis) continue;
                lines.add(Map.entry(
                        at,
                        at + " " + (m == null ? "?" : m.name()) + " (pid " + r.pid() + ") "
                                + e.path("event").asText("") + ": "
                                + e.path("message").asText("")));
            }
        }
        lines.sort(Map.Entry.comparingByKey());
        StringBuilder b = new StringBuilder();
        for (Map.Entry<java.time.Instant, String> l : lines)
            b.append(l.getValue()).append('\n');
        return b.toString();
    }

    public RunnerProcess start(Member m, Release version) throws Exception {
        return start(m, version, certificates.caFile(), m.listenPeerUrl(), false);
    }

    /**
     * The same, with the peer CA it trusts and the URL it (and the etcd it execs) listens for peers on given;
     * {@code ownGroup}: in a process group of its own, so that one SIGKILL reaches the runner and every etcd/etcdctl it
     * started. {@code runnerFlags} go before the "--".
     */
    public RunnerProcess start(
            Member m, Release version, Path trustedCa, String listenPeerUrl, boolean ownGroup, String... runnerFlags)
            throws Exception {
        String initialCluster =
                kubeadmFirstNode && m.host() == 0 && Files.isDirectory(m.data().resolve("member"))
                        ? m.name() + "=" + m.peerUrl()
                        : initialCluster();
        List<String> flags = new ArrayList<>(privateFlags.get(m.host()));
        flags.addAll(List.of(runnerFlags));
        List<String> args = RunnerArgs.member(
                flags(m, initialCluster, listenPeerUrl), version.version(), flags, tlsFlags(m, trustedCa));
        Map<String, String> env = tls == Tls.NONE ? Map.of() : Map.of("ETCD_CREDS", peerTls(m, trustedCa));
        RunnerProcess runner;
        if (network != null) {
            List<String> prefix = new ArrayList<>(network.exec(m.host()));
            if (ownGroup) prefix.add("setsid"); // `ip netns exec` execs it: the runner's pid leads the group
            runner = RunnerProcess.startUnder(prefix, args, env);
        } else if (ownGroup) runner = RunnerProcess.startUnder(List.of("setsid"), args, env);
        else runner = RunnerProcess.start(args, env);
        runners.add(runner);
        owners.put(runner, m);
        return runner;
    }

    /**
     * {@code command} (plan, inspect) with the member's flags as {@link #start} gives them, run to its end (in the
     * member's namespace, if it has one).
     */
    public RunnerProcess run(String command, Member m, Release version, String... runnerFlags) throws Exception {
        List<String> flags = new ArrayList<>(privateFlags.get(m.host()));
        flags.addAll(List.of(runnerFlags));
        List<String> args = RunnerArgs.member(
                command,
                flags(m, initialCluster(), m.listenPeerUrl()),
                version.version(),
                flags,
                tlsFlags(m, certificates.caFile()));
        Map<String, String> env = tls == Tls.NONE ? Map.of() : Map.of("ETCD_CREDS", peerTls(m, certificates.caFile()));
        if (network == null) return RunnerProcess.run(args, env);
        RunnerProcess runner = RunnerProcess.startUnder(network.exec(m.host()), args, env);
        runners.add(runner);
        owners.put(runner, m);
        runner.awaitExit(Duration.ofMinutes(3));
        return runner;
    }

    /**
     * Waits until the etcd the runner exec'd answers GET /version on the member's client URL (http only): etcd serves
     * clients only once it is ready (it joined its cluster), and the private etcds of the migration listen on the
     * private port, never there. Fails at once when the runner (or the etcd it became) exits.
     */
    public static void awaitServing(Member m, RunnerProcess runner, Duration deadline) throws Exception {
        if (m.clientUrl().startsWith("https:")) throw new IllegalStateException("awaitServing asks over http only");
        awaitServing(
                java.net.http.HttpClient.newBuilder()
                        .connectTimeout(Duration.ofSeconds(2))
                        .build(),
                m,
                runner,
                deadline);
    }

    /**
     * The same from the test's own process over either scheme: https with the clients' certificate (on namespaces,
     * only when the lab was created for the test to reach the members).
     */
    public void awaitMemberServing(Member m, RunnerProcess runner, Duration deadline) throws Exception {
        java.net.http.HttpClient.Builder http =
                java.net.http.HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5));
        if (m.clientUrl().startsWith("https:"))
            http.sslContext(EtcdGateway.sslContext(certificates.caFile(), clientPem.cert(), clientPem.key()));
        awaitServing(http.build(), m, runner, deadline);
    }

    private static void awaitServing(java.net.http.HttpClient http, Member m, RunnerProcess runner, Duration deadline)
            throws Exception {
        java.net.http.HttpRequest request = java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create(m.clientUrl() + "/version"))
                .timeout(Duration.ofSeconds(2))
                .GET()
                .build();
        try {
            Poll.untilTrue(deadline, Duration.ofMillis(100), m.name() + "'s etcd serving " + m.clientUrl(), () -> {
                if (!runner.process().isAlive()) {
                    throw new AssertionError(m.name() + "'s runner exited with "
                            + runner.awaitExit(Duration.ofSeconds(5)) + " before its etcd served " + m.clientUrl());
                }
                // not listening yet, or not ready (the request times out): an exception, "not yet"
                java.net.http.HttpResponse<String> answer =
                        http.send(request, java.net.http.HttpResponse.BodyHandlers.ofString());
                if (answer.statusCode() == 200 && JSON.readTree(answer.body()).hasNonNull("etcdserver")) return true;
                throw new IOException(answer.statusCode() + " " + answer.body());
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; output:\n" + runner.output(), e);
        }
    }

    /** The runner's command line for {@code command} (plan, inspect, migrate) of the member, with more flags. */
    List<String> runnerArgs(String command, Member m, Release target, String... runnerFlags) {
        List<String> flags = new ArrayList<>(privateFlags.get(m.host()));
        flags.addAll(List.of(runnerFlags));
        return RunnerArgs.member(
                command, flags(m, initialCluster(), m.listenPeerUrl()), target.version(), flags, tlsFlags(m));
    }

    private RunnerArgs.Member flags(Member m, String initialCluster, String listenPeerUrl) {
        return new RunnerArgs.Member(
                m.name(),
                m.data(),
                initialCluster,
                token,
                m.peerUrl(),
                listenPeerUrl,
                m.clientUrl(),
                m.listenClientUrl());
    }

    private String peerTls(Member m) {
        return peerTls(m, certificates.caFile());
    }

    private String peerTls(Member m, Path trustedCa) {
        return "--peer-cert-file=" + m.pem().cert() + " --peer-key-file="
                + m.pem().key() + " --peer-trusted-ca-file=" + trustedCa + " --peer-client-cert-auth";
    }

    /** The etcd flags after "--" besides the member's own: TLS, then {@link #etcdFlags}. */
    private List<String> tlsFlags(Member m) {
        return tlsFlags(m, certificates.caFile());
    }

    private List<String> tlsFlags(Member m, Path trustedCa) {
        List<String> flags = new ArrayList<>();
        if (tls == Tls.PEER_AND_CLIENT) {
            flags.addAll(List.of(
                    "--cert-file=" + m.pem().cert(),
                    "--key-file=" + m.pem().key(),
                    "--trusted-ca-file=" + certificates.caFile(),
                    "--client-cert-auth"));
        }
        if (tls != Tls.NONE) flags.addAll(List.of(peerTls(m, trustedCa).split(" ")));
        flags.addAll(etcdFlags);
        return flags;
    }

    /**
     * The member as a plain etcd of {@code release} (no runner), its output appended to {@code log}; stopped by
     * {@link #stopEtcd} or close().
     */
    public Process startEtcd(Member m, Release release, Path log) throws IOException {
        List<String> argv = new ArrayList<>(network == null ? List.of() : network.exec(m.host()));
        argv.add(EtcdFixture.binDir().resolve("etcd-" + release.version()).toString());
        argv.addAll(List.of("--data-dir", m.data().toString()));
        argv.addAll(RunnerArgs.etcd(flags(m, initialCluster(), m.listenPeerUrl())));
        argv.addAll(tlsFlags(m));
        Process p = new ProcessBuilder(argv)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        etcds.add(p);
        return p;
    }

    /** SIGTERM (etcd stops cleanly, as under the kubelet), SIGKILL after 30 s; reaped. */
    public void stopEtcd(Process p) throws InterruptedException {
        p.destroy();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
        etcds.remove(p);
    }

    /** The member a runner was started for. */
    public Member memberOf(RunnerProcess runner) {
        return owners.get(runner);
    }

    /** The command line of HaClient on the clients' host. */
    private List<String> client(String... args) {
        List<String> command = new ArrayList<>(network == null ? List.of() : network.exec(size()));
        command.addAll(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                classpath(),
                HaClient.class.getName(),
                args[0],
                certificates.caFile().toString(),
                clientPem.cert().toString(),
                clientPem.key().toString()));
        command.addAll(List.of(args).subList(1, args.length));
        return command;
    }

    /** HaClient's classes: the runner's test classes, test-fixtures' EtcdGateway and its JSON library. */
    private static String classpath() {
        List<String> entries = new ArrayList<>();
        for (Class<?> c : List.of(
                HaClient.class,
                EtcdGateway.class,
                com.fasterxml.jackson.databind.ObjectMapper.class,
                com.fasterxml.jackson.core.JsonFactory.class,
                com.fasterxml.jackson.annotation.JsonProperty.class)) {
            try {
                String entry = Path.of(c.getProtectionDomain()
                                .getCodeSource()
                                .getLocation()
                                .toURI())
                        .toString();
                if (!entries.contains(entry)) entries.add(entry);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        return String.join(java.io.File.pathSeparator, entries);
    }

    private Process startClient(String... args) throws IOException {
        Process p = new ProcessBuilder(client(args)).redirectErrorStream(true).start();
        synchronized (clients) {
            clients.add(p);
        }
        return p;
    }

    /** One request from the clients' host ("get URL PATH" or "post URL PATH BODY"); the body of the answer. */
    public String request(String... args) throws Exception {
        Process p = startClient(args);
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(2, TimeUnit.MINUTES), "client finished");
        synchronized (clients) {
            clients.remove(p);
        }
        if (p.exitValue() != 0) throw new IllegalStateException("client failed: " + out);
        return out;
    }

    /** Until the cluster version (asked of m0) is on {@code line}; returns it. */
    public String awaitClusterVersion(String line, Duration deadline) throws Exception {
        return Poll.until(deadline, Duration.ofMillis(200), "cluster version " + line, () -> {
            String v = JSON.readTree(request("get", members.getFirst().clientUrl(), "/version"))
                    .path("etcdcluster")
                    .asText();
            return v.startsWith(line + ".") ? v : null;
        });
    }

    /** After the last member the leader ends the downgrade job within its --downgrade-check-time. */
    void awaitNoDowngradeJob(Duration deadline) throws Exception {
        Poll.untilTrue(deadline, Duration.ofMillis(200), "no downgrade job enabled", () -> {
            for (Member m : members) {
                String status = request("post", m.clientUrl(), "/v3/maintenance/status", "{}");
                if (JSON.readTree(status).path("downgradeInfo").path("enabled").asBoolean(false)) {
                    throw new IllegalStateException("enabled on " + m.name() + ": " + status);
                }
            }
            return true;
        });
    }

    /**
     * Until every member's own copy (a serializable read) is at the same revision. A write whose request timed out may
     * commit long after (a member cut from its peers forwards it once healed), and a member that was cut applies the
     * log's tail last: compared before then, its copy is only behind, not different.
     */
    void awaitOneRevision(Duration deadline) throws Exception {
        Poll.untilTrue(deadline, Duration.ofMillis(200), "every member at one revision", () -> {
            java.util.Set<Long> revisions = new java.util.TreeSet<>();
            for (Member m : members) {
                JsonNode range = JSON.readTree(request(
                        "post",
                        m.clientUrl(),
                        "/v3/kv/range",
                        "{\"key\":\"AA==\",\"range_end\":\"AA==\",\"serializable\":true,\"count_only\":true}"));
                revisions.add(range.path("header").path("revision").asLong());
            }
            if (revisions.size() > 1) throw new IllegalStateException("revisions " + revisions);
            return true;
        });
    }

    /** Every key the member holds (its own copy: a serializable read), by key. */
    Map<String, JsonNode> keysOn(Member m) throws Exception {
        JsonNode range = JSON.readTree(request(
                "post",
                m.clientUrl(),
                "/v3/kv/range",
                "{\"key\":\"AA==\",\"range_end\":\"AA==\",\"serializable\":true}"));
        Map<String, JsonNode> keys = new TreeMap<>();
        for (JsonNode kv : range.path("kvs")) {
            keys.put(new String(Base64.getDecoder().decode(kv.path("key").asText()), StandardCharsets.UTF_8), kv);
        }
        return keys;
    }

    /**
     * Every acknowledged write on every member, with its value and at the revision it was acknowledged with, and the
     * members agreeing on every key; any key not acknowledged and not {@code allowed} fails. A key in {@code retried}
     * (a write of it failed first: a timed-out request may still commit, before or after the try acknowledged) may
     * have been written again with the same value: its acknowledged revision lies between its create and mod
     * revisions. Returns m0's keys.
     */
    public Map<String, JsonNode> assertEveryAckOnEveryMember(
            List<Ack> acked, java.util.Set<String> retried, Predicate<String> allowed) throws Exception {
        awaitOneRevision(Duration.ofMinutes(1));
        Map<String, JsonNode> reference = null;
        for (Member m : members) {
            Map<String, JsonNode> keys = keysOn(m);
            for (Ack a : acked) {
                JsonNode kv = keys.get(a.key());
                assertTrue(kv != null, "acknowledged write " + a.key() + " on " + m.name());
                assertEquals(
                        "v-" + a.key(),
                        new String(Base64.getDecoder().decode(kv.path("value").asText()), StandardCharsets.UTF_8),
                        a.key() + " on " + m.name());
                long mod = kv.path("mod_revision").asLong();
                long create = kv.path("create_revision").asLong();
                if (mod != a.revision() && retried.contains(a.key())) {
                    assertTrue(
                            create <= a.revision() && a.revision() < mod,
                            "revision " + a.revision() + " of " + a.key() + " (tried twice) on " + m.name() + ": "
                                    + kv);
                } else {
                    assertEquals(a.revision(), mod, "revision of " + a.key() + " on " + m.name());
                }
            }
            java.util.Set<String> other = new java.util.TreeSet<>(keys.keySet());
            acked.forEach(a -> other.remove(a.key()));
            other.removeIf(allowed);
            assertEquals(java.util.Set.of(), other, "no other key on " + m.name() + " (no restart record, no probe)");
            if (reference != null) assertEquals(reference, keys, "members agree on every key, value and revision");
            reference = keys;
        }
        return reference;
    }

    /** A writer on the clients' host, round-robin over every client URL: {@code count} writes at most. */
    public Writer writer(String prefix, long count, Duration time) throws Exception {
        return new Writer(
                startClient("write", endpoints(), prefix, String.valueOf(count), String.valueOf(time.toSeconds())));
    }

    /** A sampler on the clients' host: every member's /version every 100 ms. */
    public Sampler sampler() throws Exception {
        return new Sampler(startClient("sample", endpoints()), size());
    }

    // ---- network faults (namespaces only): each is undone by close() of what it returns, and by the lab's close

    /** A fault in a member's namespace; close() undoes it. */
    interface Fault extends AutoCloseable {
        @Override
        void close() throws Exception;
    }

    /** Drops every packet to and from the member's peer port on its link (not on loopback): raft is cut. */
    Fault cutPeerTraffic(Member m) throws Exception {
        String port = String.valueOf(m.ports().peer());
        List<List<String>> rules = List.of(
                List.of("INPUT", "-i", "eth0", "-p", "tcp", "--dport", port, "-j", "DROP"),
                List.of("OUTPUT", "-o", "eth0", "-p", "tcp", "--dport", port, "-j", "DROP"));
        return iptables(m, rules);
    }

    /** Drops the host's requests to the other members' client ports: its runner cannot ask anyone but its own. */
    Fault cutClientTraffic(Member m) throws Exception {
        String port = String.valueOf(m.ports().client());
        return iptables(m, List.of(List.of("OUTPUT", "-o", "eth0", "-p", "tcp", "--dport", port, "-j", "DROP")));
    }

    /** The host's link (its eth0's egress) shaped to {@code rate} by a token bucket (tc tbf). */
    Fault slowLink(Member m, String rate) throws Exception {
        inHost(
                m.host(), "tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", rate, "burst", "16kb", "latency",
                "300ms");
        return () -> inHost(m.host(), "tc", "qdisc", "del", "dev", "eth0", "root");
    }

    private Fault iptables(Member m, List<List<String>> rules) throws Exception {
        for (List<String> rule : rules) {
            List<String> add = new ArrayList<>(List.of("iptables", "-w", "-A"));
            add.addAll(rule);
            inHost(m.host(), add.toArray(String[]::new));
        }
        return () -> {
            for (List<String> rule : rules) {
                List<String> del = new ArrayList<>(List.of("iptables", "-w", "-D"));
                del.addAll(rule);
                inHost(m.host(), del.toArray(String[]::new));
            }
        };
    }

    private void inHost(int host, String... command) throws IOException, InterruptedException {
        if (network == null) throw new IllegalStateException("network faults need the namespaces");
        List<String> argv = new ArrayList<>(network.exec(host));
        argv.addAll(List.of(command));
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) throw new IOException(String.join(" ", argv) + " failed: " + out.trim());
    }

    @Override
    public void close() throws Exception {
        synchronized (clients) {
            for (Process p : clients) p.destroyForcibly().waitFor();
            clients.clear();
        }
        Exception first = null;
        for (RunnerProcess r : runners()) {
            try {
                r.close();
            } catch (Exception e) {
                if (first == null) first = e;
            }
        }
        for (Process p : List.copyOf(etcds)) stopEtcd(p);
        // deleting a namespace deletes its iptables rules and qdiscs with it
        if (network != null) network.close();
        for (Path d : hostsDirs) {
            try (Stream<Path> files = Files.walk(d)) {
                for (Path f : files.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(f);
            }
        }
        if (first != null) throw first;
    }

    /** The sampler process and its samples. */
    public static final class Sampler {
        private final Process process;
        private final List<Sample> samples = new ArrayList<>();
        private final List<String> other = new ArrayList<>();
        private final Thread reader;

        Sampler(Process process, int size) {
            this.process = process;
            this.reader = readLines(process, line -> {
                String[] f = line.split(" ");
                synchronized (samples) {
                    if (f[0].equals("S") && f.length == size + 3) {
                        samples.add(new Sample(Long.parseLong(f[1]), List.of(f).subList(2, 2 + size), f[2 + size]));
                    } else {
                        other.add(line);
                    }
                    samples.notifyAll();
                }
            });
        }

        List<Sample> samples() {
            synchronized (samples) {
                return List.copyOf(samples);
            }
        }

        public void awaitFirst() throws InterruptedException {
            await(s -> s.down() == 0, Duration.ofMinutes(1), "all members serving");
        }

        public void awaitServing(int host, Duration deadline) throws InterruptedException {
            long after = System.currentTimeMillis();
            await(
                    s -> s.atMillis() > after && !s.versions().get(host).equals("-"),
                    deadline,
                    "member " + host + " serving");
        }

        public void awaitVersion(int host, String version, Duration deadline) throws InterruptedException {
            await(s -> s.versions().get(host).equals(version), deadline, "member " + host + " at " + version);
        }

        private void await(Predicate<Sample> wanted, Duration deadline, String what) throws InterruptedException {
            try {
                Poll.until(deadline, Duration.ofMillis(100), what, samples, () -> {
                    synchronized (samples) {
                        if (!samples.isEmpty() && wanted.test(samples.getLast())) return Boolean.TRUE;
                    }
                    if (!process.isAlive()) throw new AssertionError("the sampler ended before " + what);
                    return null;
                });
            } catch (AssertionError e) {
                synchronized (samples) {
                    throw new AssertionError(
                            e.getMessage() + "; last sample " + (samples.isEmpty() ? "none" : samples.getLast())
                                    + "; sampler said " + other,
                            e);
                }
            }
        }

        /** The sampled time the member did not answer, after {@code from}. */
        long downMillis(int host, long from) {
            List<Sample> all = samples();
            long down = 0;
            for (int i = 1; i < all.size(); i++) {
                if (all.get(i).atMillis() < from) continue;
                if (all.get(i).versions().get(host).equals("-"))
                    down += all.get(i).atMillis() - all.get(i - 1).atMillis();
            }
            return down;
        }

        public void stop() throws Exception {
            process.getOutputStream().close();
            assertTrue(process.waitFor(1, TimeUnit.MINUTES), "sampler finished");
            reader.join();
        }
    }

    /** A virtual thread that hands each line the process prints to {@code each}, until the process ends. */
    private static Thread readLines(Process process, Consumer<String> each) {
        return Thread.ofVirtual().start(() -> {
            try (BufferedReader in =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) each.accept(line);
            } catch (Exception e) {
                // killed: what it printed so far stands
            }
        });
    }

    /** The writer process and what it printed. */
    public static final class Writer {
        private final Process process;
        private final List<Ack> acks = new ArrayList<>();
        /** When each failed write failed (epoch millis). */
        private final List<Long> failures = new ArrayList<>();
        /** The keys of failed writes: each was tried again until acknowledged, so it may have been written twice. */
        private final java.util.Set<String> failedKeys = new java.util.HashSet<>();
        /** Every failed write with the endpoint it went to. */
        private final List<Fail> fails = new ArrayList<>();

        private final List<String> other = new ArrayList<>();
        private final Thread reader;
        private long failed = -1;

        Writer(Process process) {
            this.process = process;
            this.reader = readLines(process, line -> {
                String[] f = line.split(" ");
                synchronized (acks) {
                    if (f[0].equals("ACK") && f.length == 5) {
                        acks.add(new Ack(Integer.parseInt(f[1]), f[2], Long.parseLong(f[3]), Long.parseLong(f[4])));
                    } else if (f[0].equals("FAIL") && f.length == 4) {
                        failures.add(Long.parseLong(f[3]));
                        failedKeys.add(f[2]);
                        fails.add(new Fail(Integer.parseInt(f[1]), f[2], Long.parseLong(f[3])));
                    } else if (f[0].equals("DONE") && f.length == 3) {
                        failed = Long.parseLong(f[2]);
                    } else {
                        other.add(line);
                    }
                    acks.notifyAll();
                }
            });
        }

        public List<Ack> acks() {
            synchronized (acks) {
                return List.copyOf(acks);
            }
        }

        public List<Fail> fails() {
            synchronized (acks) {
                return List.copyOf(fails);
            }
        }

        public java.util.Set<String> failedKeys() {
            synchronized (acks) {
                return java.util.Set.copyOf(failedKeys);
            }
        }

        /** How many writes failed from {@code fromMillis} on (timed out, refused, no leader). */
        long failedSince(long fromMillis) {
            synchronized (acks) {
                return failures.stream().filter(t -> t >= fromMillis).count();
            }
        }

        /** The writes that failed (timed out or refused), once the writer is done; -1 before. */
        public long failed() {
            synchronized (acks) {
                return failed;
            }
        }

        /** The first write acknowledged by {@code endpoint} after {@code afterMillis}. */
        Ack awaitAckFrom(int endpoint, long afterMillis, Duration deadline) throws InterruptedException {
            String what = "a write acknowledged by endpoint " + endpoint + " after the restart";
            try {
                return Poll.until(deadline, Duration.ofMillis(100), what, acks, () -> {
                    synchronized (acks) {
                        for (Ack a : acks) {
                            if (a.endpoint() == endpoint && a.atMillis() > afterMillis) return a;
                        }
                    }
                    if (!process.isAlive()) throw new AssertionError("the writer ended before " + what);
                    return null;
                });
            } catch (AssertionError e) {
                synchronized (acks) {
                    throw new AssertionError(e.getMessage() + "; writer said: " + other, e);
                }
            }
        }

        public void awaitDone() throws Exception {
            assertTrue(process.waitFor(3, TimeUnit.MINUTES), "writer finished");
            reader.join();
            assertEquals(0, process.exitValue(), "writer: " + other);
        }

        /** Stops the writer (it stops at the end of its stdin) and waits for its last lines. */
        public void stop() throws Exception {
            process.getOutputStream().close();
            awaitDone();
        }

        long maxGapMillis() {
            List<Ack> all = acks();
            long gap = 0;
            for (int i = 1; i < all.size(); i++)
                gap = Math.max(gap, all.get(i).atMillis() - all.get(i - 1).atMillis());
            return gap;
        }
    }

    /** The id of the member with this peer URL in the member list {@code through} answers; empty if none has it. */
    public java.util.Optional<String> memberWithPeer(Member through, String peerUrl) throws Exception {
        JsonNode list = JSON.readTree(request("post", through.clientUrl(), "/v3/cluster/member/list", "{}"));
        for (JsonNode member : list.path("members")) {
            for (JsonNode url : member.path("peerURLs")) {
                if (url.asText().equals(peerUrl))
                    return java.util.Optional.of(member.path("ID").asText());
            }
        }
        return java.util.Optional.empty();
    }
}
