package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.it.TestCertificates;
import dev.etcdmigrate.k8s.ClusterObjects;
import dev.etcdmigrate.k8s.KubeApiServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/**
 * The project's static pods on a real node (profile `node`): a kubelet with containerd ({@link KubeletNode})
 * runs manifests/etcd-static-pod.yaml as rendered for this node (loopback URLs, free ports, the manifest's
 * TLS kept with a throwaway CA), and an upgrade or downgrade is an edit of the manifest file. After every
 * step the data is read back key by key (values, revisions, leases) and a kube-apiserver on this etcd must
 * serve every object it wrote with its uid and resourceVersion. The figures go to stdout and node.report.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class NodeCheck {

    static final Path MANIFESTS = Path.of(System.getProperty("manifests.dir", "target/manifests"));
    static final Path BIN_DIR = Path.of(System.getProperty("etcd.bin.dir", "../.etcd-bin"));
    static final Path SCRIPTS = Path.of(System.getProperty("scripts.dir", "../scripts"));
    static final String IMAGE = System.getProperty("image", "etcd-migrate:3.7.3-0");
    static final String IMAGE_REFERENCE = System.getProperty("image.reference", "registry.example.com/etcd-migrate:3.7.3-0");
    static final Path IMAGE_TAR = Path.of(System.getProperty("image.tar", "target/jib-image.tar"));
    static final Duration SERVE = Duration.ofMinutes(5);
    static final String PREFIX = "/node-it/";
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final List<String> REPORT = new ArrayList<>();

    static KubeletNode node;
    static Path apiServerBinary;

    @BeforeAll
    static void startNode() throws Exception {
        long t0 = System.nanoTime();
        Path kubelet = kubernetesTool("kubelet");
        apiServerBinary = KubeApiServer.binary();
        node = KubeletNode.start(kubelet, apiServerBinary, IMAGE_TAR, IMAGE, IMAGE_REFERENCE);
        report("node up in %d ms: containerd %s, kubelet %s registered as %s, images %s + %s imported".formatted(
                ms(t0), node.ctr("version").lines().filter(l -> l.startsWith("Version")).findFirst().orElse("?"), KubeApiServer.VERSION,
                KubeletNode.NAME, IMAGE_REFERENCE, KubeletNode.PAUSE_IMAGE));
    }

    @AfterAll
    static void stopNode() throws Exception {
        try {
            if (node != null) {
                long t0 = System.nanoTime();
                node.close();
                report("node torn down in %d ms, nothing left (containers, mounts, processes, ports checked); %s".formatted(ms(t0), node.teardownNotes()));
            }
        } finally {
            String text = String.join("\n", REPORT) + "\n";
            System.out.print(text);
            String file = System.getProperty("node.report");
            if (file != null) Files.writeString(Path.of(file), text);
        }
    }

    /**
     * 3.5 data (keys with leases, and a kube-apiserver's cluster) -> the static pod serves 3.6; the manifest edited
     * to 3.7 -> the kubelet restarts the pod -> 3.7 serves; edited back to 3.6 -> online downgrade -> 3.6 serves.
     */
    @Test
    @Order(1)
    void staticPodEntrypointUpgradesAndDowngradesOnManifestEdits(@TempDir Path dir) throws Exception {
        EtcdSite site = EtcdSite.create(dir);
        Seed seed;
        ClusterObjects objects;
        long t0 = System.nanoTime();
        try (HostProcess source = site.startOnHost("3.5.35")) {
            seed = Seed.write(site.client());
            try (KubeApiServer api = site.apiServer()) {
                objects = ClusterObjects.write(api.client());
                objects.assertServed(api.client());
            }
        }
        Files.writeString(site.data.resolve("version.txt"), "3.5.35/etcd3\n");
        report("entrypoint: seeded 3.5.35: %d keys (%d with leases, %d leases), %d API objects %s in %d ms".formatted(seed.kvs.size(),
                seed.kvs.values().stream().filter(kv -> kv.lease() != 0).count(), seed.leases.size(), objects.live.size(), objects.counts(), ms(t0)));

        KubeApiServer api = null;
        try {
            List<String> steps = new ArrayList<>();
            for (String target : List.of("3.6.16", "3.7.3", "3.6.16")) {
                long edit = System.nanoTime();
                node.writeManifest("etcd.yaml", site.render("etcd-static-pod.yaml", target));
                site.awaitServing(target, SERVE);
                long served = ms(edit);
                seed.check(site.client(), target);
                assertEquals(target + "/etcd3", Files.readString(site.data.resolve("version.txt")).strip());
                if (api == null) api = site.apiServer();
                api.awaitReady(Duration.ofMinutes(3));
                int read = objects.assertServed(api.client());
                JsonNode pod = site.awaitMirrorPodReady();
                steps.add("-> %s serving %d ms after the edit (mirror pod ready, restarts %d), %d keys + %d leases intact, %d objects uid+rv".formatted(
                        target, served, restarts(pod), seed.kvs.size(), seed.leases.size(), read));
            }
            objects.assertNewWrites(api.client(), "written-on-the-node");
            steps.forEach(s -> report("entrypoint: " + s));
        } finally {
            if (api != null) api.close();
            site.remove();
        }
    }

    static int restarts(JsonNode pod) {
        return pod.path("status").path("containerStatuses").path(0).path("restartCount").asInt();
    }

    /** The keys and leases a scenario seeds, as the source etcd served them. */
    record Seed(Map<String, TlsEtcd.Kv> kvs, Map<Long, TlsEtcd.Lease> leases) {

        /** 40 keys, 2 leases with keys attached, 10 updates, 3 deletes. */
        static Seed write(TlsEtcd etcd) throws Exception {
            long[] leases = {etcd.grant(7200), etcd.grant(7200)};
            Map<Integer, Long> leaseOf = new LinkedHashMap<>();
            for (int i = 0; i < 40; i++) {
                long lease = i % 8 < 2 ? leases[i % 8] : 0;
                leaseOf.put(i, lease);
                etcd.put(key(i), "{\"kind\":\"ConfigMap\",\"n\":" + i + ",\"data\":\"" + "x".repeat(i * 10) + "\"}", lease);
            }
            for (int i = 0; i < 40; i += 4) etcd.put(key(i), "updated-" + i, leaseOf.get(i));
            for (int i : new int[] {5, 15, 25}) etcd.delete(key(i));
            Map<Long, TlsEtcd.Lease> granted = new LinkedHashMap<>();
            for (long l : leases) granted.put(l, etcd.lease(l));
            return new Seed(etcd.range(PREFIX), granted);
        }

        static String key(int i) {
            return PREFIX + "k-%02d".formatted(i);
        }

        void check(TlsEtcd etcd, String at) throws Exception {
            Map<String, TlsEtcd.Kv> now = etcd.range(PREFIX);
            for (Map.Entry<String, TlsEtcd.Kv> e : kvs.entrySet()) {
                assertEquals(e.getValue(), now.get(e.getKey()), at + ": " + e.getKey() + " (value, create/mod revision, version, lease)");
            }
            assertEquals(kvs.keySet(), now.keySet(), at + ": the keys under " + PREFIX);
            for (Map.Entry<Long, TlsEtcd.Lease> e : leases.entrySet()) {
                assertEquals(e.getValue(), etcd.lease(e.getKey()), at + ": lease " + e.getKey() + " (granted TTL, attached keys)");
            }
        }
    }

    /**
     * One etcd member's place on the node: data dir, a throwaway CA with server/peer/client certificates in
     * etcd's file names, free ports for client, peer, metrics and the runner's private etcd.
     */
    static final class EtcdSite {
        final Path dir;
        final Path data;
        final Path pki;
        final int client;
        final int peer;
        final int metrics;
        final int runnerClient;
        final int runnerPeer;
        private TlsEtcd tls;

        private EtcdSite(Path dir, int[] ports) throws Exception {
            this.dir = dir;
            this.data = dir.resolve("data");
            this.pki = Files.createDirectories(dir.resolve("pki"));
            client = ports[0];
            peer = ports[1];
            metrics = ports[2];
            runnerClient = ports[3];
            runnerPeer = ports[4];
            node.ownsPorts(ports);
        }

        static EtcdSite create(Path dir) throws Exception {
            List<Integer> picked = new ArrayList<>();
            while (picked.size() < 5) {
                int p = FreePorts.pick().client();
                if (!picked.contains(p)) picked.add(p);
            }
            EtcdSite site = new EtcdSite(dir, picked.stream().mapToInt(Integer::intValue).toArray());
            TestCertificates ca = TestCertificates.newCa(site.pki);
            Files.copy(ca.caFile(), site.pki.resolve("ca.crt"));
            for (String name : List.of("server", "peer")) {
                TestCertificates.Pem pem = ca.issue(name);
                Files.move(pem.cert(), site.pki.resolve(name + ".crt"));
                Files.move(pem.key(), site.pki.resolve(name + ".key"));
            }
            ca.issue("client");
            return site;
        }

        TlsEtcd client() throws Exception {
            if (tls == null) {
                tls = new TlsEtcd(java.net.URI.create("https://127.0.0.1:" + client), pki.resolve("ca.crt"), pki.resolve("client.pem"),
                        pki.resolve("client-key.pem"));
            }
            return tls;
        }

        /** A kube-apiserver on this etcd (client TLS), with one work dir so a restarted one accepts its tokens. */
        KubeApiServer apiServer() throws Exception {
            return KubeApiServer.start(apiServerBinary, java.net.URI.create("https://127.0.0.1:" + client), dir.resolve("apiserver"),
                    Duration.ofMinutes(3), List.of("--etcd-cafile=" + pki.resolve("ca.crt"), "--etcd-certfile=" + pki.resolve("client.pem"),
                            "--etcd-keyfile=" + pki.resolve("client-key.pem")));
        }

        /**
         * A shipped manifest as rendered for this node: the member's address becomes 127.0.0.1, its ports this
         * site's, the host paths this site's, TARGET_VERSION the target; the runner gets free ports for its
         * private etcd (its defaults, 18629 and 2380, may be taken on a shared test machine).
         */
        String render(String manifest, String target) throws Exception {
            String y = Files.readString(MANIFESTS.resolve(manifest));
            y = y.replace("https://127.0.0.1:2379,https://10.0.0.11:2379", "https://127.0.0.1:2379").replace("10.0.0.11", "127.0.0.1");
            y = y.replace(":2379", ":" + client).replace(":2380", ":" + peer).replace(":2381", ":" + metrics).replace("port: 2381", "port: " + metrics);
            y = y.replace("path: /var/lib/etcd\n", "path: " + data + "\n").replace("path: /etc/kubernetes/pki/etcd\n", "path: " + pki + "\n");
            String withTarget = y.replaceAll("(- name: TARGET_VERSION\\n\\s+value: )\"[^\"]*\"", "$1\"" + target + "\"");
            assertTrue(!withTarget.equals(y) || y.contains("value: \"" + target + "\""), manifest + ": no TARGET_VERSION to set");
            Matcher separator = java.util.regex.Pattern.compile("\\n(\\s+)- (--|--no-exec)\\n").matcher(withTarget);
            assertTrue(separator.find(), manifest + ": no runner argument list");
            String indent = separator.group(1);
            String ports = "\n" + indent + "- --port=" + runnerClient + "\n" + indent + "- --peer-port=" + runnerPeer;
            return withTarget.substring(0, separator.start()) + ports + withTarget.substring(separator.start());
        }

        /** The rendered manifest's etcd flags (after "--"), host paths, for the same member started directly on the host. */
        List<String> etcdFlags(String manifest) throws Exception {
            JsonNode pod = YAML.readTree(render(manifest, "3.6.16"));
            List<String> args = new ArrayList<>();
            pod.path("spec").path("containers").path(0).path("args").forEach(a -> args.add(a.asText()));
            List<String> flags = new ArrayList<>();
            for (String a : args.subList(args.indexOf("--") + 1, args.size())) flags.add(a.replace("/etc/kubernetes/pki/etcd", pki.toString()));
            flags.add("--data-dir=" + data);
            return flags;
        }

        /** The member as the manifest configures it, but started by the test with etcd VERSION from the host's binaries. */
        HostProcess startOnHost(String version) throws Exception {
            Files.createDirectories(data, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                    java.nio.file.attribute.PosixFilePermissions.fromString("rwx------")));
            List<String> command = new ArrayList<>(List.of(BIN_DIR.resolve("etcd-" + version).toString()));
            command.addAll(etcdFlags("etcd-static-pod.yaml"));
            HostProcess p = HostProcess.start(command, dir.resolve("host-etcd-" + version + ".log"));
            try {
                KubeletNode.await("etcd " + version + " on the host serves", Duration.ofMinutes(1), () -> {
                    if (!p.process.isAlive()) throw new IllegalStateException("etcd exited: " + KubeletNode.tail(p.log));
                    return client().serving();
                });
                return p;
            } catch (Exception | Error e) {
                p.close();
                throw e;
            }
        }

        void awaitServing(String version, Duration deadline) throws Exception {
            try {
                KubeletNode.await("etcd " + version + " serves", deadline,
                        () -> client().serverVersion().map(version::equals).orElse(false) && client().serving());
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\nmirror pod status: " + status() + "\n" + node.containerLogs("etcd"), e);
            }
        }

        String status() throws Exception {
            JsonNode pod = node.mirrorPod("etcd");
            return pod == null ? "(no mirror pod)" : pod.path("status").toString();
        }

        JsonNode awaitMirrorPodReady() throws Exception {
            JsonNode[] pod = new JsonNode[1];
            KubeletNode.await("mirror pod etcd-" + KubeletNode.NAME + " ready", Duration.ofMinutes(1), () -> {
                pod[0] = node.mirrorPod("etcd");
                return pod[0] != null && pod[0].path("status").path("containerStatuses").path(0).path("ready").asBoolean();
            });
            return pod[0];
        }

        /** The manifest gone, the pod gone (kubelet's own view) and its ports free again. */
        void remove() throws Exception {
            node.removeManifest("etcd.yaml");
            KubeletNode.await("no pod on the kubelet", Duration.ofSeconds(90), () -> node.kubeletPods().isEmpty());
            KubeletNode.await("the site's ports free", Duration.ofSeconds(30), () -> KubeletNode.bindable(client) && KubeletNode.bindable(peer)
                    && KubeletNode.bindable(metrics) && KubeletNode.bindable(runnerClient) && KubeletNode.bindable(runnerPeer));
        }
    }

    /** A process the test starts on the host (SIGTERM on close, SIGKILL after 30 s; always reaped). */
    record HostProcess(Process process, Path log) implements AutoCloseable {
        static HostProcess start(List<String> command, Path log) throws Exception {
            ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
            b.environment().keySet().removeIf(k -> k.startsWith("ETCD"));
            return new HostProcess(b.start(), log);
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    /** A Kubernetes tool from scripts/build-kubernetes.sh (cached; built on first use). */
    static Path kubernetesTool(String tool) throws Exception {
        Process build = new ProcessBuilder("bash", SCRIPTS.resolve("build-kubernetes.sh").toString(), "--version", KubeApiServer.VERSION, tool)
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String out = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!build.waitFor(40, TimeUnit.MINUTES) || build.exitValue() != 0) {
            build.destroyForcibly();
            throw new AssertionError("build-kubernetes.sh " + tool + " failed");
        }
        return Path.of(out.lines().reduce((a, b) -> b).orElseThrow());
    }

    static long ms(long since) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }

    static void report(String line) {
        System.out.println("[NodeCheck] " + line);
        synchronized (REPORT) {
            REPORT.add(line);
        }
    }
}
