package dev.etcdmigrate.it.cluster;

import static dev.etcdmigrate.it.support.Jetcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.ItConv2Events;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import io.etcd.jetcd.Client;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three members on loopback with peer TLS (certificates made here, given to the runner through
 * ETCD_CREDS): a rolling upgrade by one minor, one runner per member, while the other two keep
 * serving writes; the first member's --initial-cluster names only itself, as kubeadm init writes it. Every key is intact on every member and each version.txt names the new version.
 */
class MultiMemberIT {

    private static final int MEMBERS = 3;
    private static final Duration DEADLINE = Duration.ofMinutes(2);

    private final List<Client> clients = new ArrayList<>();
    private ClusterLab cluster;

    @AfterEach
    void stopAll() throws Exception {
        for (Client client : clients) client.close();
        if (cluster != null) cluster.close();
    }

    @Test
    void aRollingOneMinorUpgradeWithOneRunnerPerMemberKeepsEveryKey(@TempDir Path dir) throws Exception {
        List<Release> releases = EtcdFixture.V3_RELEASES;
        Release from = releases.get(releases.size() - 2);
        Release to = EtcdFixture.newest();
        cluster = ClusterLab.create(dir, MEMBERS, ClusterLab.Layout.ONE_HOST, "rolling-it", ClusterLab.Tls.PEER);
        cluster.kubeadmFirstNode(true); // m0's flags name only m0 once its data exists
        List<Member> members = cluster.members();

        // The cluster starts at the older minor: each runner finds an empty data dir and execs etcd.
        List<RunnerProcess> serving = new ArrayList<>();
        for (Member m : members) serving.add(cluster.start(m, from));
        for (RunnerProcess r : serving) r.awaitEvent("exec", DEADLINE);
        Client all = client(members.stream().map(Member::clientUrl).toArray(String[]::new));
        for (int k = 0; k < 300; k++) {
            put(all, "/registry/seed/" + k, "value-" + k);
        }
        Keyspace seeded = Keyspace.read(all);

        Map<String, String> acked = new ConcurrentHashMap<>();
        for (int i = 0; i < MEMBERS; i++) {
            Member m = members.get(i);
            Member other = members.get((i + 1) % MEMBERS);
            RunnerProcess old = serving.get(i);
            old.process().toHandle().destroy(); // SIGTERM to the exec'd etcd: the member goes down for its upgrade
            int code = old.awaitExit(Duration.ofSeconds(30));
            assertTrue(code == 0 || code == 143, "etcd " + m.name() + " stopped with " + code);

            try (Writer writer = new Writer(client(other.clientUrl()), "/registry/rolling/" + m.name() + "/", acked)) {
                long migrationStart = System.nanoTime();
                // the first member as kubeadm init leaves it: --initial-cluster names only itself, the data three
                RunnerProcess upgraded = cluster.start(m, to);
                serving.set(i, upgraded);
                if (i == 0) {
                    JsonNode taken = upgraded.awaitEvent("members-from-data", DEADLINE);
                    assertEquals(MEMBERS, taken.path("members").asInt(), upgraded.output());
                    for (Member peer : members)
                        assertTrue(
                                taken.path("initialCluster").asText().contains(peer.peerUrl()),
                                peer.peerUrl() + " in " + taken);
                }
                // the step's private etcd rejoins the cluster's peers on the member's own peer URL
                upgraded.awaitEvent(
                        "etcd-started",
                        e -> e.path("version").asText().equals(to.version())
                                && e.path("rejoining").asBoolean()
                                && e.path("peerUrl").asText().equals(m.peerUrl()),
                        DEADLINE);
                ItConv2Events.awaitStepFinished(upgraded, 1, 1, DEADLINE);
                long migrationEnd = System.nanoTime();
                upgraded.awaitEvent("exec", DEADLINE);
                long during = writer.successesBetween(migrationStart, migrationEnd);
                System.out.printf(
                        "%s: %s -> %s in %d ms; %s acknowledged %d writes meanwhile%n",
                        m.name(),
                        from.version(),
                        to.version(),
                        Duration.ofNanos(migrationEnd - migrationStart).toMillis(),
                        other.name(),
                        during);
                assertTrue(
                        during > 0,
                        "member " + other.name() + " took writes while " + m.name() + " migrated ("
                                + writer.successes.size() + " in all)");
            }
            assertEquals(to.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
            put(
                    client(m.clientUrl()),
                    "/registry/rolling/" + m.name() + "/back",
                    "serving"); // serving before the next one goes
            acked.put("/registry/rolling/" + m.name() + "/back", "serving");
        }

        awaitClusterVersion(members.getFirst(), to.minorLine().toString());
        Keyspace reference = null;
        for (Member m : members) {
            Keyspace onMember = Keyspace.read(client(m.clientUrl()));
            Map<String, String> seedDiff = seeded.differences(new Keyspace(
                    onMember.revision(),
                    onMember.entries().entrySet().stream()
                            .filter(e -> seeded.entries().containsKey(e.getKey()))
                            .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue))));
            assertEquals(Map.of(), seedDiff, "seeded keys, values and revisions on " + m.name());
            for (Map.Entry<String, String> e : acked.entrySet()) {
                Keyspace.Entry entry = onMember.entries().get(e.getKey());
                assertTrue(
                        entry != null && e.getValue().equals(new String(entry.value(), StandardCharsets.UTF_8)),
                        "acknowledged write " + e.getKey() + " on " + m.name());
            }
            assertTrue(!onMember.entries().containsKey(PrivateEtcd.PROBE_KEY), "no probe key left");
            assertEquals(
                    seeded.entries().size() + acked.size(), onMember.entries().size(), "no other key on " + m.name());
            if (reference != null) assertEquals(reference.entries(), onMember.entries(), "members agree");
            reference = onMember;
        }
    }

    /**
     * A chain the cluster cannot take is refused before anything changes: 3.5 -> 3.7 starts with the leg
     * 3.5 -> 3.6, which a member can join only while every other member runs 3.5 or 3.6 (or 3.4, one minor behind,
     * where it waits for them), and the other member (an etcd 3.3 answering on the client URL this member
     * advertises) runs 3.3.
     */
    @Test
    void aChainAnotherMemberCannotTakeIsRefused(@TempDir Path dir) throws Exception {
        Release v33 = EtcdFixture.V3_RELEASES.stream()
                .filter(r -> r.minorLine().toString().equals("3.3"))
                .findFirst()
                .orElseThrow();
        Release v35 = EtcdFixture.V3_RELEASES.stream()
                .filter(r -> r.minorLine().toString().equals("3.5"))
                .findFirst()
                .orElseThrow();
        Release to = EtcdFixture.newest();
        Path data = dir.resolve("data");
        try (EtcdFixture etcd = new EtcdFixture()) {
            etcd.seed(v35, data, 20);
        }
        Map<String, String> before = TreeDigest.of(data);
        var ports = dev.etcdmigrate.etcd.server.FreePorts.pick();
        String client = "http://127.0.0.1:" + ports.client();
        String peer = "http://127.0.0.1:" + ports.peer();
        Process other = new ProcessBuilder(
                        EtcdFixture.binDir().resolve("etcd-" + v33.version()).toString(),
                        "--name",
                        "b",
                        "--data-dir",
                        dir.resolve("b").toString(),
                        "--listen-client-urls",
                        client,
                        "--advertise-client-urls",
                        client,
                        "--listen-peer-urls",
                        peer,
                        "--initial-advertise-peer-urls",
                        peer,
                        "--initial-cluster",
                        "b=" + peer)
                .redirectErrorStream(true)
                .redirectOutput(dir.resolve("b.log").toFile())
                .start();
        try {
            awaitAnswer(client + "/version");
            List<String> args = new ArrayList<>(RunnerArgs.migrate(data, to.version()));
            args.addAll(List.of(
                    "--initial-cluster",
                    "it=https://127.0.0.1:1,b=" + peer + ",c=https://127.0.0.1:3",
                    "--",
                    "--advertise-client-urls",
                    client));
            try (RunnerProcess runner = RunnerProcess.run(args)) {
                assertEquals(3, runner.exitCode(), runner.output());
                JsonNode refused = runner.ending();
                assertEquals("refused", refused.path("event").asText(), runner.output());
                String reason = refused.path("reason").asText();
                assertTrue(reason.contains("b runs " + v33.version()), reason);
                assertEquals(3, refused.path("exitCode").asInt(), runner.output());
                assertEquals(0, runner.count("etcd-started"), "no etcd was started");
            }
        } finally {
            other.destroy();
            other.waitFor();
        }
        assertEquals(before, TreeDigest.of(data), "byte-identical");
    }

    private static void awaitAnswer(String url) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        Poll.untilTrue(
                DEADLINE,
                Duration.ofMillis(100),
                url + " answering",
                () -> http.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
                                .statusCode()
                        == 200);
    }

    private Client client(String... endpoints) {
        Client client = Client.builder().endpoints(endpoints).build();
        clients.add(client);
        return client;
    }

    private static void put(Client client, String key, String value) throws Exception {
        client.getKVClient().put(bytes(key), bytes(value)).get(30, TimeUnit.SECONDS);
    }

    /** Polls /version until the cluster version names the line: every member then runs it. */
    private static void awaitClusterVersion(Member m, String line) throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest request =
                HttpRequest.newBuilder(URI.create(m.clientUrl() + "/version")).build();
        Poll.untilTrue(DEADLINE, Duration.ofMillis(100), "cluster version " + line, () -> {
            String body =
                    http.send(request, HttpResponse.BodyHandlers.ofString()).body();
            if (new ObjectMapper().readTree(body).path("etcdcluster").asText().startsWith(line + ".")) return true;
            throw new IllegalStateException(body);
        });
    }

    /** Writes to one member in a loop while another migrates, recording when each write was acknowledged. */
    private static final class Writer implements AutoCloseable {
        private final Client client;
        private final String prefix;
        private final Map<String, String> acked;
        private final ConcurrentLinkedQueue<Long> successes = new ConcurrentLinkedQueue<>();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final Thread thread;

        Writer(Client client, String prefix, Map<String, String> acked) {
            this.client = client;
            this.prefix = prefix;
            this.acked = acked;
            this.thread = Thread.ofPlatform().name("writer-" + prefix).start(this::loop);
        }

        private void loop() {
            for (int n = 0; !stop.get(); n++) {
                String key = prefix + n;
                try {
                    put(client, key, "v" + n);
                    acked.put(key, "v" + n);
                    successes.add(System.nanoTime());
                } catch (Exception e) {
                    // a leader election while the member is down: the next write retries
                    if (e instanceof InterruptedException) return;
                }
            }
        }

        long successesBetween(long start, long end) {
            return successes.stream().filter(t -> t >= start && t <= end).count();
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join(Duration.ofSeconds(40));
        }
    }
}
