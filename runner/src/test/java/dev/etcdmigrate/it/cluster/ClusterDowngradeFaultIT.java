package dev.etcdmigrate.it.cluster;

import static dev.etcdmigrate.it.support.Jetcd.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.ItConv2Events;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerProcess;
import io.etcd.jetcd.Client;
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
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fault-injection harness's rolling-downgrade scenario: a three-member 3.7 cluster is downgraded
 * to 3.6 one member at a time, and the runners of the first member (the one that enables the
 * cluster's downgrade job) and of the second (which finds it enabled) are SIGKILLed with every process
 * they started at a uniformly random moment of the step (as measured on a clean run), then rerun.
 * After each kill version.txt names 3.7.3 or 3.6.16; after the reruns and the last member the cluster
 * version is 3.6, no downgrade job is left, and every member holds every seeded key at its revision.
 * {@code fault.trials} (default 2), {@code fault.seed} as in {@code FaultInjectionIT}. Runs with -Pha.
 */
class ClusterDowngradeFaultIT {

    private static final int MEMBERS = 3;
    private static final Duration DEADLINE = Duration.ofMinutes(3);

    private final List<Client> clients = new ArrayList<>();
    private ClusterLab cluster;

    @AfterEach
    void stopAll() throws Exception {
        for (Client c : clients) c.close();
        if (cluster != null) cluster.close();
    }

    @Test
    void aRollingDowngradeResumesAfterKillsOfTheEnablingAndOfALaterMember(@TempDir Path dir) throws Exception {
        Release newer = EtcdFixture.newest();
        Release older = EtcdFixture.V3_RELEASES.get(EtcdFixture.V3_RELEASES.size() - 2);
        int trials = Integer.getInteger("fault.trials", 2);
        long seed = Long.getLong("fault.seed", System.nanoTime());
        Random random = new Random(seed);
        System.out.println("[fault] cluster downgrade " + newer.version() + " -> " + older.version() + ": " + trials
                + " trials, -Dfault.seed=" + seed);

        Path template = dir.resolve("template");
        cluster = ClusterLab.create(
                Files.createDirectories(template),
                MEMBERS,
                ClusterLab.Layout.ONE_HOST,
                "downgrade-fault-it",
                ClusterLab.Tls.PEER);
        List<Member> members = cluster.members();

        // the template: a 3.7 cluster with seeded keys, every member stopped
        List<RunnerProcess> serving = new ArrayList<>();
        for (Member m : members) serving.add(cluster.start(m, newer));
        for (int i = 0; i < MEMBERS; i++) ClusterLab.awaitServing(members.get(i), serving.get(i), DEADLINE);
        Client seeder = client(members.stream().map(Member::clientUrl).toArray(String[]::new));
        for (int k = 0; k < 200; k++) {
            seeder.getKVClient()
                    .put(bytes("/registry/seed/" + k), bytes("value-" + k))
                    .get(30, TimeUnit.SECONDS);
        }
        Keyspace seeded = Keyspace.read(seeder);
        for (RunnerProcess r : serving) stop(r);

        Duration window = null;
        List<String> landed = new ArrayList<>();
        for (int trial = 0; trial <= trials; trial++) { // trial 0: the clean run that measures the step
            Path trialDir = dir.resolve("trial-" + trial);
            Trees.copy(template, trialDir);
            List<Member> here = members.stream().map(m -> m.in(trialDir)).toList();
            List<RunnerProcess> running = new ArrayList<>();
            for (Member m : here) running.add(cluster.start(m, newer));
            for (int i = 0; i < MEMBERS; i++) ClusterLab.awaitServing(here.get(i), running.get(i), DEADLINE);
            for (int i = 0; i < MEMBERS; i++) {
                Member m = here.get(i);
                stop(running.get(i));
                if (trial == 0 || i == MEMBERS - 1) {
                    RunnerProcess clean = cluster.start(m, older);
                    ItConv2Events.awaitStepStarted(clean, 1, 1, DEADLINE);
                    long start = System.nanoTime();
                    ItConv2Events.awaitStepFinished(clean, 1, 1, DEADLINE);
                    if (trial == 0 && i == 0) {
                        window = Duration.ofNanos(System.nanoTime() - start);
                        System.out.println(
                                "[fault] cluster downgrade: window " + window.toMillis() + " ms (first member's step)");
                    }
                    running.set(i, clean);
                } else {
                    double fraction = random.nextDouble();
                    // own process group: one SIGKILL reaches the runner and every etcd/etcdctl it started
                    RunnerProcess victim =
                            cluster.start(m, older, cluster.certificates().caFile(), m.peerUrl(), true);
                    ItConv2Events.awaitStepStarted(victim, 1, 1, DEADLINE);
                    boolean exited =
                            victim.process().waitFor((long) (fraction * window.toNanos()), TimeUnit.NANOSECONDS);
                    victim.killGroup();
                    String recorded = Files.readString(m.data().resolve("version.txt"));
                    assertTrue(
                            recorded.equals(newer.version() + "/etcd3") || recorded.equals(older.version() + "/etcd3"),
                            "version.txt after the kill: " + recorded);
                    String where = "trial " + trial + " " + m.name() + " killed at " + String.format("%.3f", fraction)
                            + " of the window, "
                            + (exited
                                    ? "after exit"
                                    : ItConv2Events.stepFinished(victim, 1, 1) ? "after the step" : "inside the step")
                            + ", version.txt " + recorded;
                    landed.add(where);
                    System.out.println("[fault] " + where);
                    RunnerProcess rerun = cluster.start(m, older);
                    rerun.awaitEvent("exec", DEADLINE);
                    running.set(i, rerun);
                }
                ClusterLab.awaitServing(m, running.get(i), DEADLINE);
                assertEquals(
                        older.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
            }
            for (int i = 0; i < MEMBERS; i++) {
                if (!running.get(i).process().isAlive()) {
                    List<String> lines = running.get(i).output().lines().toList();
                    throw new AssertionError(here.get(i).name() + "'s etcd exited with "
                            + running.get(i).exitCode() + ": "
                            + String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size())));
                }
            }
            awaitJson(
                    here.getFirst(),
                    "/version",
                    v -> v.path("etcdcluster").asText().startsWith(older.minorLine() + "."),
                    "cluster version");
            for (Member m : here) {
                awaitJson(
                        m,
                        "/v3/maintenance/status",
                        s -> !s.path("downgradeInfo").path("enabled").asBoolean(false),
                        "downgrade job ended");
                Keyspace onMember = Keyspace.read(client(m.clientUrl()));
                assertTrue(!onMember.entries().containsKey(PrivateEtcd.PROBE_KEY), "no probe key left on " + m.name());
                assertEquals(Map.of(), seeded.differences(onMember), "keys, values and revisions on " + m.name());
            }
            for (RunnerProcess r : running) stop(r);
            Trees.deleteRecursively(trialDir);
            System.out.println("[fault] cluster downgrade trial " + trial + ": ok");
        }
        System.out.println("[fault] cluster downgrade summary: " + trials + " trials, kills: " + landed
                + " (-Dfault.seed=" + seed + ")");
    }

    private static void stop(RunnerProcess serving) throws Exception {
        serving.process().toHandle().destroy(); // SIGTERM to the exec'd etcd
        int code = serving.awaitExit(Duration.ofSeconds(30));
        assertTrue(code == 0 || code == 143, "etcd stopped with " + code);
    }

    private static void awaitJson(
            Member m, String path, Predicate<com.fasterxml.jackson.databind.JsonNode> wanted, String what)
            throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        Poll.untilTrue(Duration.ofMinutes(1), Duration.ofMillis(200), what + " on " + m.name(), () -> {
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(m.clientUrl() + path));
            request = path.equals("/version") ? request.GET() : request.POST(HttpRequest.BodyPublishers.ofString("{}"));
            String body = http.send(request.build(), HttpResponse.BodyHandlers.ofString())
                    .body();
            if (wanted.test(new ObjectMapper().readTree(body))) return true;
            throw new IllegalStateException("last answer: " + body);
        });
    }

    private Client client(String... endpoints) {
        Client client = Client.builder().endpoints(endpoints).build();
        clients.add(client);
        return client;
    }
}
