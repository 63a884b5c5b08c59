package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.it.cluster.NetworkLab;
import dev.etcdmigrate.it.support.EtcdGateway;
import dev.etcdmigrate.it.support.ThrowawayCa;
import dev.etcdmigrate.k8s.KubeApiServer;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Three control-plane nodes on one machine, as kubeadm HA has them: each node a network namespace with its own
 * address ({@link NetworkLab}), its own containerd, kubelet, static pod dir, pod log dir and etcd data dir
 * ({@link KubeletNode#startInNamespace}); etcd certificates in kubeadm's file names from one throwaway CA, their SANs
 * the node's address, 127.0.0.1, its name and localhost; one kube-apiserver talking to all three members over client
 * TLS. The API server runs in the machine's root namespace on the lab's host leg (the bridge's .1): the kubelets
 * reach it from their namespaces to register and to write mirror pods, and the test itself reaches it and every
 * member directly, without a client process per namespace (a 100 ms sampler of three members could not afford one).
 *
 * <p>{@link #close()} (also after a failed start or scenario) removes every pod, stops the daemons, the API server
 * and the lab, and then fails if any process, mount, namespace, the host leg or the API server's port is left.
 */
final class ThreeNodes implements AutoCloseable {

    static final int SIZE = 3;

    /** One member: node index, name (node name = member name, as kubeadm has it), address, dirs, client. */
    static final class Member {
        final int index;
        final String name;
        final String address;
        final KubeletNode node;
        final Path data;
        final Path pki;
        private final Path clientCert;
        private final Path clientKey;
        private EtcdGateway etcd;

        Member(int index, String name, String address, KubeletNode node, Path clientCert, Path clientKey)
                throws Exception {
            this.index = index;
            this.name = name;
            this.address = address;
            this.node = node;
            // owner-only, as the runner makes a missing one (the kubelet's DirectoryOrCreate would make it 0755)
            this.data = Files.createDirectories(
                    node.root.resolve("var-lib-etcd"),
                    java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
            this.pki = Files.createDirectories(node.root.resolve("pki-etcd"));
            this.clientCert = clientCert;
            this.clientKey = clientKey;
        }

        String clientUrl() {
            return "https://" + address + ":2379";
        }

        String peerUrl() {
            return "https://" + address + ":2380";
        }

        /** A client of this member only (the test's own certificate). */
        synchronized EtcdGateway etcd() throws Exception {
            if (etcd == null)
                etcd = EtcdGateway.tls(URI.create(clientUrl()), pki.resolve("ca.crt"), clientCert, clientKey);
            return etcd;
        }

        /** The mirror pod etcd-NAME through the API server, or null. */
        JsonNode mirrorPod() throws Exception {
            return node.mirrorPod("etcd");
        }
    }

    final NetworkLab lab;
    final Path dir;
    final List<Member> members = new ArrayList<>();
    private final ThrowawayCa ca;
    private final Path apiWork;
    private final int apiPort;
    private final Path clientCert;
    private final Path clientKey;
    private KubeApiServer api;
    private final List<String> teardownNotes = new ArrayList<>();

    private ThreeNodes(NetworkLab lab, Path dir) throws Exception {
        this.lab = lab;
        this.dir = dir;
        this.ca = ThrowawayCa.newCa(Files.createDirectories(dir.resolve("pki")));
        this.apiWork = dir.resolve("apiserver");
        this.apiPort = FreePorts.pick().client();
        // the API server's client certificate (kubeadm: apiserver-etcd-client); the test uses the same one
        ThrowawayCa.Pem client = ca.issue("apiserver-etcd-client", List.of("127.0.0.1"), List.of("localhost"));
        this.clientCert = client.cert();
        this.clientKey = client.key();
    }

    /**
     * The lab, the certificates and three nodes with the image imported (kubelets up, no pod yet); the API server
     * starts later ({@link #startApiServer}), once the members it needs serve. On any failure everything is torn down.
     */
    static ThreeNodes start(Path kubelet, Path apiServerBinary, Path imageTar, String image, String reference)
            throws Exception {
        return start(SIZE, kubelet, apiServerBinary, imageTar, image, reference);
    }

    /** The same with `size` nodes (RunbookCheck's one-node control plane is one of them, cp-1). */
    static ThreeNodes start(int size, Path kubelet, Path apiServerBinary, Path imageTar, String image, String reference)
            throws Exception {
        KubeletNode.installPrerequisites();
        NetworkLab lab = new NetworkLab(size, true);
        ThreeNodes nodes = null;
        try {
            nodes = new ThreeNodes(lab, Files.createTempDirectory(Path.of("/tmp"), "em-3n-"));
            nodes.apiServerBinary = apiServerBinary;
            String token = KubeApiServer.writeToken(nodes.apiWork);
            // the API server's serving certificate from the cluster's CA, its SAN the host leg (KubeApiServer serves a
            // certificate already in its cert dir): the kubelets trust the CA, as kubeadm's kubeconfigs do
            Path certs = Files.createDirectories(nodes.apiWork.resolve("certs"));
            ThrowawayCa.Pem serving =
                    nodes.ca.issue("apiserver", List.of(lab.hostAddress()), List.of("kubernetes", "localhost"));
            Files.move(serving.cert(), certs.resolve("apiserver.crt"));
            Files.move(serving.key(), certs.resolve("apiserver.key"));
            URI server = URI.create("https://" + lab.hostAddress() + ":" + nodes.apiPort);
            // one node after the other: three image imports at once only compete for the two cores
            for (int i = 0; i < size; i++) {
                String name = "cp-" + (i + 1);
                KubeletNode node = KubeletNode.startInNamespace(
                        name,
                        lab.address(i),
                        lab.enter(i),
                        kubelet,
                        imageTar,
                        image,
                        reference,
                        server,
                        nodes.ca.caFile(),
                        token);
                Member m = new Member(i, name, lab.address(i), node, nodes.clientCert, nodes.clientKey);
                nodes.members.add(m);
                nodes.issueEtcdCertificates(m);
            }
            return nodes;
        } catch (Exception | Error e) {
            try {
                if (nodes != null) nodes.close();
                else lab.close();
            } catch (Exception | Error suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private Path apiServerBinary;

    /** kubeadm's etcd files: ca.crt, server.crt/key and peer.crt/key (SANs: address, 127.0.0.1, name, localhost). */
    private void issueEtcdCertificates(Member m) throws Exception {
        Files.copy(ca.caFile(), m.pki.resolve("ca.crt"), StandardCopyOption.REPLACE_EXISTING);
        for (String kind : List.of("server", "peer")) {
            ThrowawayCa.Pem pem =
                    ca.issue(m.name + "-" + kind, List.of(m.address, "127.0.0.1"), List.of(m.name, "localhost"));
            Files.move(pem.cert(), m.pki.resolve(kind + ".crt"), StandardCopyOption.REPLACE_EXISTING);
            Files.move(pem.key(), m.pki.resolve(kind + ".key"), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    String initialCluster() {
        return members.stream().map(m -> m.name + "=" + m.peerUrl()).collect(Collectors.joining(","));
    }

    /**
     * The shipped entrypoint manifest for member m, changed only where docs/node.md says a test node differs: the
     * member's name, address and --initial-cluster (all three), the host paths (data dir, TLS dir) and TARGET_VERSION.
     * Ports, probes and everything else are the shipped ones: each node has a network namespace of its own.
     */
    String render(Member m, String target) throws Exception {
        String y = Files.readString(NodeCheck.MANIFESTS.resolve("etcd-static-pod.yaml"));
        y = y.replace("cp-1", m.name).replace("10.0.0.11", m.address);
        y = y.replace(m.name + "=" + m.peerUrl(), initialCluster());
        y = y.replace("path: /var/lib/etcd\n", "path: " + m.data + "\n")
                .replace("path: /etc/kubernetes/pki/etcd\n", "path: " + m.pki + "\n");
        Matcher target0 = java.util.regex.Pattern.compile("(- name: TARGET_VERSION\\n\\s+value: )\"[^\"]*\"")
                .matcher(y);
        assertTrue(target0.find(), "no TARGET_VERSION in the entrypoint manifest");
        return target0.replaceFirst("$1\"" + target + "\"");
    }

    /** Writes member m's manifest (a new file renamed over the old one, as an editor saves it). */
    void writeManifest(Member m, String yaml) throws Exception {
        m.node.writeManifest("etcd.yaml", yaml);
    }

    /** The API server against all three members (client TLS), on the host leg; the nodes then register. */
    KubeApiServer startApiServer() throws Exception {
        return startApiServer(ca.caFile(), clientCert, clientKey);
    }

    /** The same with other etcd client files (members whose certificates kubeadm made from its own CA). */
    KubeApiServer startApiServer(Path etcdCa, Path etcdCert, Path etcdKey) throws Exception {
        String servers = members.stream().map(Member::clientUrl).collect(Collectors.joining(","));
        api = KubeApiServer.start(
                apiServerBinary,
                lab.hostAddress(),
                apiPort,
                servers,
                apiWork,
                Duration.ofMinutes(3),
                List.of(
                        "--etcd-cafile=" + etcdCa,
                        "--etcd-certfile=" + etcdCert,
                        "--etcd-keyfile=" + etcdKey,
                        // as kubeadm's: `kubectl exec` reaches a kubelet at its node's address (the node name
                        // resolves nowhere here)
                        "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname"));
        for (Member m : members) m.node.attach(api);
        for (Member m : members)
            KubeletNode.await(
                    "node " + m.name + " registered",
                    Duration.ofMinutes(2),
                    () -> api.client().status("/api/v1/nodes/" + m.name) == 200);
        return api;
    }

    KubeApiServer api() {
        return api;
    }

    /** An operator's kubeconfig for the API server: its address on the host leg, the cluster's CA, the admin token. */
    Path adminKubeconfig() throws Exception {
        Path file = dir.resolve("admin.kubeconfig");
        Files.writeString(
                file, """
                apiVersion: v1
                kind: Config
                clusters:
                - name: cluster
                  cluster:
                    server: https://%s:%d
                    certificate-authority: %s
                users:
                - name: admin
                  user:
                    token: %s
                contexts:
                - name: admin
                  context: {cluster: cluster, user: admin}
                current-context: admin
                """.formatted(lab.hostAddress(), apiPort, ca.caFile(), KubeApiServer.writeToken(apiWork)));
        return file;
    }

    List<String> teardownNotes() {
        return teardownNotes;
    }

    @Override
    public void close() throws Exception {
        List<String> left = new ArrayList<>();
        List<Throwable> failures = new ArrayList<>();
        // 1. every node's pods away and its daemons stopped, the three at once (each waits for its kubelet)
        try (ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, members.size()))) {
            List<Future<?>> stops = new ArrayList<>();
            for (Member m : members)
                stops.add(pool.submit((Callable<Void>) () -> {
                    m.node.stopDaemons();
                    return null;
                }));
            for (Future<?> f : stops) {
                try {
                    f.get();
                } catch (java.util.concurrent.ExecutionException e) {
                    failures.add(e.getCause());
                }
            }
        }
        if (api != null) api.close();
        // 2. each node's own checks (mounts, processes, log links), its dir removed
        for (Member m : members) {
            try {
                m.node.close();
                teardownNotes.add(m.name + ": " + m.node.teardownNotes());
            } catch (Exception | Error e) {
                failures.add(e);
            }
        }
        // 3. the lab: nothing may run in a node's namespace any more (every container of a node is hostNetwork, so in
        // it); then whatever is left is killed and the namespaces and the host leg deleted
        List<String> inNamespaces = lab.processes();
        if (!inNamespaces.isEmpty()) left.add("processes in the nodes' namespaces: " + inNamespaces);
        lab.close();
        List<String> names = lab.names();
        try {
            KubeletNode.await("the lab's namespaces and host leg gone", Duration.ofSeconds(30), () -> {
                String netns = KubeletNode.run(List.of("ip", "netns", "list"), Duration.ofSeconds(10))
                        .output();
                String links = KubeletNode.run(List.of("ip", "-br", "link"), Duration.ofSeconds(10))
                        .output();
                return names.stream()
                        .noneMatch(n -> netns.contains(n) || links.contains(n + "@") || links.contains(n + " "));
            });
        } catch (AssertionError e) {
            left.add("network: " + e.getMessage() + " of " + names);
        }
        // by command line or root: the containers' processes are the namespaces' (checked above), and other nodes of
        // the
        // machine (a cluster beside this one) have containers in the same cgroups
        List<String> processes = KubeletNode.processesOf(dir, java.util.Set.of());
        if (!processes.isEmpty()) left.add("processes: " + processes);
        List<String> mounts = KubeletNode.mountsUnder(dir);
        if (!mounts.isEmpty()) left.add("mounts: " + mounts);
        String listening = KubeletNode.run(List.of("ss", "-Htln", "sport = :" + apiPort), Duration.ofSeconds(10))
                .output()
                .strip();
        if (!listening.isEmpty()) left.add("the API server's port " + apiPort + ": " + listening);
        if (processes.isEmpty() && mounts.isEmpty()) {
            try (Stream<Path> all = Files.walk(dir)) {
                for (Path p : all.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
            }
        }
        if (!left.isEmpty() || !failures.isEmpty()) {
            // the failures' own words in the message: a CI log shows the message, not always the suppressed ones
            AssertionError e = new AssertionError("the three nodes left behind: " + left
                    + (failures.isEmpty()
                            ? ""
                            : "; tear-down failures: "
                                    + failures.stream()
                                            .map(f -> f.getClass().getSimpleName() + ": " + f.getMessage())
                                            .toList()));
            failures.forEach(e::addSuppressed);
            throw e;
        }
    }
}
