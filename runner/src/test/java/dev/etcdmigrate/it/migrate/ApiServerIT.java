package dev.etcdmigrate.it.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.SingleMember;
import dev.etcdmigrate.k8s.ClusterObjects;
import dev.etcdmigrate.k8s.KubeApiServer;
import dev.etcdmigrate.k8s.KubeClient;
import dev.etcdmigrate.version.DataVersion;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
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
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A real kube-apiserver writes a cluster into etcd of the source line; the runner (exec mode) then
 * carries the data dir and becomes the etcd on the same client URL, which the running API server
 * reconnects to. Afterwards every object must be served with its uid and resourceVersion, a list at an
 * old resourceVersion (Exact) served, a watch from it must work or answer 410, new writes must work; then
 * the same again through a freshly started API server. The control path (3.7.3 -> 3.7.3: the runner
 * only restarts etcd) shows which watch outcome comes from restarts rather than from a migration.
 */
class ApiServerIT {

    private static final Duration API_READY = Duration.ofMinutes(3);
    private static final List<String> REPORT = new ArrayList<>();
    private static Path apiServer;

    @BeforeAll
    static void build() throws Exception {
        long t0 = System.nanoTime();
        apiServer = KubeApiServer.binary();
        System.out.printf(
                "[ApiServerIT] kube-apiserver %s ready in %d ms: %s%n",
                KubeApiServer.VERSION, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), apiServer);
    }

    @AfterAll
    static void report() {
        REPORT.forEach(line -> System.out.println("[ApiServerIT] " + line));
    }

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({"3.4.23, 3.7.3", "3.5.35, 3.7.3", "3.6.16, 3.7.3", "3.7.3, 3.5.35", "3.7.3, 3.7.3"})
    void theApiServerReadsItsClusterAfterTheRunnerCarriedTheDataDir(String from, String to, @TempDir Path dir)
            throws Exception {
        Release source = EtcdFixture.release(from);
        ServerPorts ports = FreePorts.pick();
        Path data = dir.resolve("data");
        Permissions.ownerOnlyDir(data);
        long t0 = System.nanoTime();
        ClusterObjects objects;
        Map<String, Integer> written;
        KubeApiServer api = null;
        try {
            try (SourceEtcd etcd = SourceEtcd.start(source, data, ports, List.of(), dir.resolve("source-etcd.log"))) {
                api = KubeApiServer.start(apiServer, ports.clientUrl(), dir.resolve("apiserver"), API_READY);
                objects = ClusterObjects.write(api.client());
                objects.assertServed(api.client());
                written = objects.counts();
            }
            new DataDir(data)
                    .writeVersion(new DataVersion(source.etcdVersion(), dev.etcdmigrate.version.StorageApi.ETCD3));

            try (RunnerProcess runner = RunnerProcess.start(RunnerArgs.migrateAndServe(data, to, ports), Map.of())) {
                runner.awaitEvent("exec", Duration.ofMinutes(5));
                // the API server that wrote the objects reconnects to the runner's etcd on the same URL
                api.awaitReady(API_READY);
                KubeClient c = api.client();
                int read = objects.assertServed(c);
                objects.assertListAtOld(c);
                String watchRunning = objects.watchFromOld(c);
                objects.assertNewWrites(c, "written-after-migration");

                api.close();
                api = KubeApiServer.start(apiServer, ports.clientUrl(), dir.resolve("apiserver"), API_READY);
                c = api.client();
                int readAgain = objects.assertServed(c);
                objects.assertListAtOld(c);
                String watchRestarted = objects.watchFromOld(c);
                objects.assertNewWrites(c, "written-after-restart");

                assertEquals(to + "/etcd3", Files.readString(data.resolve("version.txt")));
                REPORT.add(
                        "%s -> %s: %d objects %s (+%d deleted -> 404) read with uid+resourceVersion twice (%d, %d); list at rv %s Exact = %s;"
                                        .formatted(
                                                from,
                                                to,
                                                written.values().stream()
                                                        .mapToInt(Integer::intValue)
                                                        .sum(),
                                                written,
                                                objects.deleted.size(),
                                                read,
                                                readAgain,
                                                objects.oldResourceVersion,
                                                objects.listAtOld)
                                + " watch from rv %s: reconnected API server %s, restarted API server %s; new writes ok; %d s"
                                        .formatted(
                                                objects.oldResourceVersion,
                                                watchRunning,
                                                watchRestarted,
                                                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)));
                api.close();
                runner.process().destroy();
                runner.awaitExit(Duration.ofSeconds(30));
            }
        } finally {
            if (api != null) api.close();
        }
    }

    /**
     * etcd2 data in the API server's layout (JSON objects under /registry/..., as Kubernetes 1.5 and
     * older stored them through the v2 API) on 3.4.23 with v2 storage, converted by the runner and
     * served as etcd3 to an API server: uid kept, resourceVersion = the v2 modifiedIndex.
     */
    @Test
    void etcd2ObjectsInTheApiServersLayoutAreServedAfterTheConversion(@TempDir Path dir) throws Exception {
        Release source = EtcdFixture.release("3.4.23");
        String target = EtcdFixture.newest().version();
        ServerPorts ports = FreePorts.pick();
        Path data = dir.resolve("data");
        Permissions.ownerOnlyDir(data);
        long t0 = System.nanoTime();
        Map<String, ClusterObjects.Stored> live = new TreeMap<>();
        List<String> deleted = new ArrayList<>();
        try (SourceEtcd etcd =
                SourceEtcd.start(source, data, ports, source.line().v2EnableFlags(), dir.resolve("source-etcd.log"))) {
            V2Writer v2 = new V2Writer(ports.clientUrl());
            String ns = "legacy";
            v2.object(live, "/api/v1/namespaces/" + ns, "/registry/namespaces/" + ns, "Namespace", ns, null, "{}");
            for (int i = 0; i < 6; i++) {
                v2.object(
                        live,
                        "/api/v1/namespaces/" + ns + "/configmaps/cm-" + i,
                        "/registry/configmaps/" + ns + "/cm-" + i,
                        "ConfigMap",
                        "cm-" + i,
                        ns,
                        "{\"data\":{\"replicas\":\"" + i + "\"}}");
            }
            for (int i = 0; i < 3; i++) {
                v2.object(
                        live,
                        "/api/v1/namespaces/" + ns + "/secrets/s-" + i,
                        "/registry/secrets/" + ns + "/s-" + i,
                        "Secret",
                        "s-" + i,
                        ns,
                        "{\"type\":\"Opaque\",\"data\":{\"token\":\"c2VjcmV0LQ==\"}}");
            }
            for (int i = 0; i < 2; i++) {
                v2.object(
                        live,
                        "/api/v1/namespaces/" + ns + "/serviceaccounts/sa-" + i,
                        "/registry/serviceaccounts/" + ns + "/sa-" + i,
                        "ServiceAccount",
                        "sa-" + i,
                        ns,
                        "{}");
            }
            // an update keeps the uid and moves modifiedIndex; a delete leaves nothing to convert
            v2.object(
                    live,
                    "/api/v1/namespaces/" + ns + "/configmaps/cm-1",
                    "/registry/configmaps/" + ns + "/cm-1",
                    "ConfigMap",
                    "cm-1",
                    ns,
                    "{\"data\":{\"replicas\":\"10\"}}");
            v2.delete("/registry/configmaps/" + ns + "/cm-5");
            live.remove("/api/v1/namespaces/" + ns + "/configmaps/cm-5");
            deleted.add("/api/v1/namespaces/" + ns + "/configmaps/cm-5");
            v2.delete("/registry/secrets/" + ns + "/s-2");
            live.remove("/api/v1/namespaces/" + ns + "/secrets/s-2");
            deleted.add("/api/v1/namespaces/" + ns + "/secrets/s-2");
        }
        new DataDir(data).writeVersion(DataVersion.parse(source.version() + "/etcd2"));

        try (RunnerProcess runner = RunnerProcess.start(RunnerArgs.migrateAndServe(data, target, ports), Map.of());
                KubeApiServer api = startAfter(runner, ports, dir)) {
            KubeClient c = api.client();
            for (Map.Entry<String, ClusterObjects.Stored> e : live.entrySet()) {
                JsonNode now = c.get(e.getKey());
                assertEquals(
                        e.getValue(),
                        new ClusterObjects.Stored(
                                now.path("metadata").path("uid").asText(),
                                now.path("metadata").path("resourceVersion").asText()),
                        e.getKey() + ": uid and resourceVersion (= v2 modifiedIndex)");
            }
            for (String path : deleted) assertEquals(404, c.status(path), path);
            // the newest v2 index is a revision of the converted store: a list there shows the converted configmaps
            String lastV2Index = live.values().stream()
                    .map(ClusterObjects.Stored::resourceVersion)
                    .max((a, b) -> Long.compare(Long.parseLong(a), Long.parseLong(b)))
                    .orElseThrow();
            String collection = "/api/v1/namespaces/legacy/configmaps";
            JsonNode atOld = c.list(collection, "resourceVersion=" + lastV2Index + "&resourceVersionMatch=Exact");
            Map<String, String> expected = new TreeMap<>();
            live.forEach((path, s) -> {
                if (path.startsWith(collection + "/"))
                    expected.put(path.substring(collection.length() + 1), s.resourceVersion());
            });
            Map<String, String> served = new TreeMap<>();
            atOld.path("items")
                    .forEach(i -> served.put(
                            i.path("metadata").path("name").asText(),
                            i.path("metadata").path("resourceVersion").asText()));
            assertEquals(expected, served, "list at " + lastV2Index + " (Exact)");
            KubeClient.WatchResult watch = c.watch(collection, lastV2Index, 3, 10);
            String watchOutcome = watch.gone()
                    ? "410"
                    : watch.httpStatus() == 200
                            ? "works (" + watch.events().size() + " events)"
                            : "HTTP " + watch.httpStatus();
            assertTrue(watch.gone() || watch.httpStatus() == 200, "watch: " + watch);
            JsonNode created = c.create(
                    collection,
                    new ObjectMapper()
                            .readTree(
                                    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"written-after-conversion\"},\"data\":{\"k\":\"v\"}}"));
            assertTrue(
                    Long.parseLong(created.path("metadata")
                                    .path("resourceVersion")
                                    .asText())
                            > Long.parseLong(lastV2Index),
                    "new write after the v2 indexes");
            assertEquals(target + "/etcd3", Files.readString(data.resolve("version.txt")));
            REPORT.add(
                    "3.4.23/etcd2 -> %s/etcd3: %d objects %s (+%d deleted -> 404) read with their uid and resourceVersion = v2 modifiedIndex;"
                                    .formatted(
                                            target, live.size(), ClusterObjects.counts(live.keySet()), deleted.size())
                            + " list at rv %s Exact = %s; watch from rv %s: %s; new write ok (rv %s); %d s"
                                    .formatted(
                                            lastV2Index,
                                            served,
                                            lastV2Index,
                                            watchOutcome,
                                            created.path("metadata")
                                                    .path("resourceVersion")
                                                    .asText(),
                                            TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0)));
            api.close();
            runner.process().destroy();
            runner.awaitExit(Duration.ofSeconds(30));
        }
    }

    private static KubeApiServer startAfter(RunnerProcess runner, ServerPorts ports, Path dir) throws Exception {
        runner.awaitEvent("exec", Duration.ofMinutes(5));
        return KubeApiServer.start(apiServer, ports.clientUrl(), dir.resolve("apiserver"), API_READY);
    }

    /** JSON objects written through /v2/keys, recorded as the API server will report them. */
    private record V2Writer(URI etcd, HttpClient http) {
        V2Writer(URI etcd) {
            this(
                    etcd,
                    HttpClient.newBuilder()
                            .connectTimeout(Duration.ofSeconds(5))
                            .build());
        }

        void object(
                Map<String, ClusterObjects.Stored> live,
                String apiPath,
                String key,
                String kind,
                String name,
                String namespace,
                String rest)
                throws Exception {
            ObjectMapper json = new ObjectMapper();
            ClusterObjects.Stored before = live.get(apiPath);
            String uid = before != null ? before.uid() : UUID.randomUUID().toString();
            var object = json.createObjectNode().put("apiVersion", "v1").put("kind", kind);
            var meta = object.putObject("metadata")
                    .put("name", name)
                    .put("uid", uid)
                    .put("creationTimestamp", "2017-03-01T10:00:00Z");
            if (namespace != null) meta.put("namespace", namespace);
            object.setAll((com.fasterxml.jackson.databind.node.ObjectNode) json.readTree(rest));
            HttpResponse<String> r = send(
                    "PUT", key, "value=" + URLEncoder.encode(json.writeValueAsString(object), StandardCharsets.UTF_8));
            assertTrue(r.statusCode() == 200 || r.statusCode() == 201, "PUT " + key + ": " + r.statusCode());
            live.put(
                    apiPath,
                    new ClusterObjects.Stored(
                            uid,
                            json.readTree(r.body())
                                    .path("node")
                                    .path("modifiedIndex")
                                    .asText()));
        }

        void delete(String key) throws Exception {
            assertEquals(200, send("DELETE", key, null).statusCode(), "DELETE " + key);
        }

        private HttpResponse<String> send(String method, String key, String form)
                throws IOException, InterruptedException {
            HttpRequest.Builder b =
                    HttpRequest.newBuilder(etcd.resolve("/v2/keys" + key)).timeout(Duration.ofSeconds(10));
            if (form == null) b.method(method, HttpRequest.BodyPublishers.noBody());
            else
                b.header("Content-Type", "application/x-www-form-urlencoded")
                        .method(method, HttpRequest.BodyPublishers.ofString(form));
            return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    /** The source line's etcd on the client URL the runner will serve later (the API server keeps that URL). */
    private static final class SourceEtcd implements AutoCloseable {
        private final Process process;

        private SourceEtcd(Process process) {
            this.process = process;
        }

        static SourceEtcd start(Release release, Path data, ServerPorts ports, List<String> lineFlags, Path log)
                throws Exception {
            String client = ports.clientUrl().toString();
            String peer = ports.peerUrl(false).toString();
            List<String> command = new ArrayList<>(List.of(
                    EtcdFixture.binDir().resolve("etcd-" + release.version()).toString()));
            command.addAll(SingleMember.flags("it", data, client, peer));
            command.addAll(lineFlags);
            ProcessBuilder builder =
                    new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
            builder.environment().keySet().removeIf(k -> k.startsWith("ETCD"));
            SourceEtcd etcd = new SourceEtcd(builder.start());
            try {
                etcd.awaitServing(ports.clientUrl(), Duration.ofMinutes(1), log);
                return etcd;
            } catch (Exception | Error e) {
                etcd.close();
                throw e;
            }
        }

        /** /version answers (a read that leaves no v2 entry in the WAL, unlike /health on 3.4). */
        private void awaitServing(URI url, Duration deadline, Path log) throws Exception {
            HttpClient http = HttpClient.newHttpClient();
            try {
                Poll.untilTrue(deadline, Duration.ofMillis(50), "etcd serving " + url, () -> {
                    if (!process.isAlive()) throw new AssertionError("etcd exited " + process.exitValue());
                    return http.send(
                                            HttpRequest.newBuilder(url.resolve("/version"))
                                                    .timeout(Duration.ofSeconds(2))
                                                    .build(),
                                            HttpResponse.BodyHandlers.ofString())
                                    .statusCode()
                            == 200; // an IOException is "not listening yet"
                });
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + ":\n" + Files.readString(log), e);
            }
        }

        /** SIGTERM (etcd closes its WAL and bbolt cleanly), SIGKILL only if it hangs; always reaped. */
        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
