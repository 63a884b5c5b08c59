package dev.etcdmigrate.it;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Members of one etcd cluster on loopback with peer TLS, one runner per member, as {@link MultiMemberIT},
 * {@link RejoinFailFastIT} and {@link ClusterDowngradeFaultIT} drive them: a CA made here, each member's
 * certificate, free real ports and a free private client port, the --initial-cluster string, and the
 * runner's command line (given the peer TLS flags through ETCD_CREDS too). {@link #close()} stops every
 * runner started through it.
 */
final class ClusterMembers implements AutoCloseable {

    /** One member: its data dir, its real (serving) ports, the private client port its runner migrates on. */
    record Member(String name, Path data, ServerPorts real, int privateClientPort, TestCertificates.Pem pem) {
        String peerUrl() {
            return "https://127.0.0.1:" + real.peer();
        }

        String clientUrl() {
            return "http://127.0.0.1:" + real.client();
        }

        /** The same member (name, ports, certificate) with its data dir under another dir. */
        Member in(Path dir) {
            return new Member(name, dir.resolve(name), real, privateClientPort, pem);
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private final TestCertificates certificates;
    private final List<Member> members;
    private final String token;
    private final List<RunnerProcess> runners = new ArrayList<>();

    private ClusterMembers(TestCertificates certificates, List<Member> members, String token) {
        this.certificates = certificates;
        this.members = List.copyOf(members);
        this.token = token;
    }

    /**
     * {@code count} members m0, m1, ... with data dirs under {@code dataParent} and a new CA in
     * {@code dir}/pki; {@code token} is etcd's --initial-cluster-token.
     */
    static ClusterMembers create(Path dir, Path dataParent, int count, String token) throws Exception {
        TestCertificates certificates = TestCertificates.newCa(Files.createDirectory(dir.resolve("pki")));
        List<Member> members = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            members.add(new Member(
                    "m" + i,
                    dataParent.resolve("m" + i),
                    FreePorts.pick(),
                    FreePorts.pick().client(),
                    certificates.issue("m" + i)));
        }
        return new ClusterMembers(certificates, members, token);
    }

    List<Member> members() {
        return members;
    }

    TestCertificates certificates() {
        return certificates;
    }

    String initialCluster() {
        return members.stream().map(m -> m.name() + "=" + m.peerUrl()).collect(Collectors.joining(","));
    }

    /** The member's runner to {@code version}/etcd3 (then exec of etcd), trusting this CA, on its own peer URL. */
    RunnerProcess start(Member m, Release version) throws Exception {
        return start(m, version, certificates.caFile(), m.peerUrl(), false);
    }

    /**
     * The member's runner with the peer CA it trusts and the URL it (and the etcd it execs) listens for
     * peers on given; {@code ownGroup}: in a process group of its own, so that one SIGKILL reaches the
     * runner and every etcd/etcdctl it started. {@code runnerFlags} go before the "--".
     */
    RunnerProcess start(
            Member m, Release version, Path trustedCa, String listenPeerUrl, boolean ownGroup, String... runnerFlags)
            throws Exception {
        return start(m, version, initialCluster(), trustedCa, listenPeerUrl, ownGroup, runnerFlags);
    }

    /** As above, with the --initial-cluster given (e.g. naming only this member, as kubeadm's first node does). */
    RunnerProcess start(
            Member m,
            Release version,
            String initialCluster,
            Path trustedCa,
            String listenPeerUrl,
            boolean ownGroup,
            String... runnerFlags)
            throws Exception {
        String tls = "--peer-cert-file=" + m.pem().cert() + " --peer-key-file="
                + m.pem().key() + " --peer-trusted-ca-file=" + trustedCa + " --peer-client-cert-auth";
        List<String> flags = new ArrayList<>(List.of(runnerFlags));
        flags.addAll(List.of("--port", String.valueOf(m.privateClientPort())));
        List<String> args = RunnerArgs.member(
                new RunnerArgs.Member(
                        m.name(),
                        m.data(),
                        initialCluster,
                        token,
                        m.peerUrl(),
                        listenPeerUrl,
                        m.clientUrl(),
                        m.clientUrl()),
                version.version(),
                flags,
                List.of(tls.split(" ")));
        Map<String, String> env = Map.of("ETCD_CREDS", tls);
        RunnerProcess runner =
                ownGroup ? RunnerProcess.startUnder(List.of("setsid"), args, env) : RunnerProcess.start(args, env);
        runners.add(runner);
        return runner;
    }

    /**
     * Waits until the etcd the runner exec'd answers GET /version on the member's real client URL: etcd
     * serves clients only once it is ready (it joined its cluster), and the private etcds of the
     * migration listen on the private port, never there. Fails at once when the runner (or the etcd it
     * became) exits.
     */
    static void awaitServing(Member m, RunnerProcess runner, Duration deadline) throws Exception {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest request = HttpRequest.newBuilder(URI.create(m.clientUrl() + "/version"))
                .timeout(Duration.ofSeconds(2))
                .GET()
                .build();
        long end = System.nanoTime() + deadline.toNanos();
        String last = "";
        while (System.nanoTime() < end) {
            if (!runner.process().isAlive()) {
                fail(m.name() + "'s runner exited with " + runner.awaitExit(Duration.ofSeconds(5))
                        + " before its etcd served " + m.clientUrl() + "; output:\n" + runner.output());
            }
            try {
                HttpResponse<String> answer = http.send(request, HttpResponse.BodyHandlers.ofString());
                if (answer.statusCode() == 200 && JSON.readTree(answer.body()).hasNonNull("etcdserver")) return;
                last = answer.statusCode() + " " + answer.body();
            } catch (IOException e) {
                last = e.toString(); // not listening yet, or not ready (the request timed out)
            }
            Thread.sleep(100); // poll interval of a deadline-bound wait
        }
        fail(m.name() + "'s etcd never served " + m.clientUrl() + "/version (last: " + last + "); output:\n"
                + runner.output());
    }

    @Override
    public void close() throws Exception {
        for (RunnerProcess runner : runners) runner.close();
    }
}
