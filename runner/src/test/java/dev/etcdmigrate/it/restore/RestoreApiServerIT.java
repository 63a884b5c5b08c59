package dev.etcdmigrate.it.restore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.it.cluster.ClusterLab;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.k8s.KubeApiServer;
import dev.etcdmigrate.k8s.KubeClient;
import io.etcd.jetcd.ByteSequence;
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
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A restore from one snapshot is safe for Kubernetes (docs/restore.md): a real kube-apiserver serves a live 3.5
 * cluster, objects are written before and after an `etcdctl snapshot save`, the runner restores every member from
 * that snapshot into 3.7 (revision bumped, old revisions marked compacted), and a kube-apiserver started on the
 * restored cluster serves exactly the snapshot's objects; every new resourceVersion is above every one served before,
 * a watch from a pre-restore resourceVersion ends with 410 Gone (through the watch cache and, without it, from etcd),
 * and list-then-watch clients (one that ran across the restore, one started after it) converge to the restored state.
 */
class RestoreApiServerIT {

    private static final Duration DEADLINE = Duration.ofMinutes(6);
    private static final Duration API_READY = Duration.ofMinutes(3);
    private static final Duration CONVERGE = Duration.ofMinutes(1);
    private static final int POST_SNAPSHOT_UPDATES = 150;
    /** The runner's default bump (docs/restore.md): not given on the command line, so the default is what is tested. */
    private static final long DEFAULT_BUMP = 1_000_000_000L;

    private static final String NS = "restored";
    private static final String CONFIGMAPS = "/api/v1/namespaces/" + NS + "/configmaps";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Path apiServer;

    private ClusterLab cluster;
    private KubeApiServer api;

    @BeforeAll
    static void build() throws Exception {
        long t0 = System.nanoTime();
        apiServer = KubeApiServer.binary();
        System.out.printf(
                "[RestoreApiServerIT] kube-apiserver %s ready in %d ms: %s%n",
                KubeApiServer.VERSION, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), apiServer);
    }

    @AfterEach
    void stopAll() throws Exception {
        try {
            if (api != null) api.close();
        } finally {
            if (cluster != null) cluster.close();
        }
    }

    @Test
    void theApiServerOnARestoredClusterServesTheSnapshotAndEveryWatcherRelists(@TempDir Path dir) throws Exception {
        Release from = ClusterLab.line("3.5");
        Release to = EtcdFixture.newest();
        long t0 = System.nanoTime();
        cluster = ClusterLab.create(dir, 3, ClusterLab.Layout.ONE_HOST, "restore-api", ClusterLab.Tls.PEER);
        List<Member> members = cluster.members();
        List<RunnerProcess> serving = new ArrayList<>();
        for (Member m : members) serving.add(cluster.start(m, from));
        for (int i = 0; i < members.size(); i++) ClusterLab.awaitServing(members.get(i), serving.get(i), DEADLINE);
        Path apiDir = dir.resolve("apiserver");
        // the API server comes back on the same URL, as on a control-plane node: the informer keeps its client
        int apiPort = FreePorts.pick().client();
        api = startApiServer(apiDir, apiPort);
        KubeClient c = api.client();
        Served served = new Served();

        served.note(c.create("/api/v1/namespaces", object("Namespace", NS, null)));
        for (int i = 0; i < 8; i++) served.note(c.create(CONFIGMAPS, configMap("cm-" + i, "before-" + i)));
        Informer acrossTheRestore = new Informer(c);
        acrossTheRestore.sync();
        JsonNode beforeSnapshot = served.note(c.list(CONFIGMAPS, ""));
        Map<String, Obj> inSnapshot = Obj.items(beforeSnapshot);
        String snapshotRv =
                beforeSnapshot.path("metadata").path("resourceVersion").asText();
        Path snapshot = dir.resolve("snapshot.db");
        RestoreIT.etcdctl(from, members.getFirst().clientUrl(), "snapshot", "save", snapshot.toString());

        // what the snapshot does not hold: new objects, an update and a delete
        List<String> lost = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            served.note(c.create(CONFIGMAPS, configMap("after-" + i, "lost-" + i)));
            lost.add("after-" + i);
        }
        // a busy object: more revisions after the snapshot than the walk and the API server's restart add, so that a
        // restore keeping the snapshot's revisions would hand out resourceVersions that clients already saw
        JsonNode busy = c.get(CONFIGMAPS + "/after-0");
        for (int k = 0; k < POST_SNAPSHOT_UPDATES; k++) {
            ((ObjectNode) busy.path("data")).put("value", "lost-0-" + k);
            busy = served.note(c.update(CONFIGMAPS + "/after-0", busy));
        }
        JsonNode updated = c.get(CONFIGMAPS + "/cm-1");
        ((ObjectNode) updated.path("data")).put("value", "changed-after");
        served.note(c.update(CONFIGMAPS + "/cm-1", updated));
        served.note(c.delete(CONFIGMAPS + "/cm-2"));
        Map<String, Obj> beforeRestore = Obj.items(served.note(c.list(CONFIGMAPS, "")));
        Poll.untilTrue(CONVERGE, Duration.ofMillis(100), "the informer sees the writes after the snapshot", () -> {
            acrossTheRestore.sync();
            return acrossTheRestore.cache.equals(beforeRestore);
        });
        served.note(acrossTheRestore.resourceVersion);

        // the runbook's order: the API server stops before etcd does; then the highest revision etcd ever had
        api.close();
        api = null;
        long lastOld;
        try (Client etcd =
                Client.builder().endpoints(cluster.endpoints().split(",")).build()) {
            lastOld = etcd.getKVClient()
                    .get(ByteSequence.from("/", StandardCharsets.UTF_8))
                    .get(30, TimeUnit.SECONDS)
                    .getHeader()
                    .getRevision();
        }
        assertTrue(lastOld >= served.highest, "etcd's revision " + lastOld + " covers every served " + served.highest);
        for (RunnerProcess r : serving) {
            r.process().toHandle().destroy(); // the exec'd etcd stops as under the kubelet
            r.awaitExit(Duration.ofSeconds(30));
        }

        String sha = RestoreIT.sha256(snapshot);
        long restoreStarted = System.nanoTime();
        List<RunnerProcess> restored = new ArrayList<>();
        for (Member m : members) {
            restored.add(cluster.start(
                    m,
                    to,
                    cluster.certificates().caFile(),
                    m.listenPeerUrl(),
                    false,
                    "--restore-snapshot",
                    snapshot.toString(),
                    "--restore-sha256",
                    sha));
        }
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            RunnerProcess r = restored.get(i);
            r.awaitEvent("exec", DEADLINE);
            ClusterLab.awaitServing(m, r, DEADLINE);
            JsonNode done = r.events("snapshot-restored").getFirst();
            assertEquals(from.version(), done.path("version").asText(), "restored with the snapshot's line's tool");
            assertEquals(DEFAULT_BUMP, done.path("bumpRevision").asLong(), "the default bump");
            // after the restore the data is the snapshot's line's, walked one minor at a time to the target
            JsonNode plan = r.events("plan-made").getFirst();
            assertEquals(from.version() + "/etcd3", plan.path("current").asText(), plan.toString());
            List<String> walk = new ArrayList<>();
            plan.path("steps").forEach(step -> walk.add(step.path("result").asText()));
            assertEquals(
                    List.of(ClusterLab.line("3.6").version() + "/etcd3", to.version() + "/etcd3"),
                    walk,
                    "the walk " + from.version() + " -> 3.6 -> " + to.version());
            assertEquals(to.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
            assertEquals(to.version(), etcdVersion(m), "the member serves as etcd " + to.version());
        }
        long restoreSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - restoreStarted);

        api = startApiServer(apiDir, apiPort);
        c = api.client();
        // object by object: the snapshot's objects as they were, with their uid and resourceVersion; the rest gone
        for (Map.Entry<String, Obj> e : inSnapshot.entrySet()) {
            assertEquals(
                    e.getValue(), Obj.of(c.get(CONFIGMAPS + "/" + e.getKey())), e.getKey() + " as in the snapshot");
        }
        for (String name : lost) assertEquals(404, c.status(CONFIGMAPS + "/" + name), name + " was written after");
        assertEquals(inSnapshot, Obj.items(c.list(CONFIGMAPS, "")), "exactly the snapshot's configmaps");
        assertEquals(200, c.status("/api/v1/namespaces/" + NS), "the namespace");

        // every pre-restore resourceVersion is history the restored cluster no longer serves
        List<String> watchEnds = new ArrayList<>();
        for (String old : List.of(snapshotRv, String.valueOf(served.highest))) {
            KubeClient.WatchResult watch = c.watch(CONFIGMAPS, old, 5, 10);
            assertTrue(
                    watch.gone(), "a watch from the pre-restore resourceVersion " + old + " ends with 410: " + watch);
            watchEnds.add(old + ": " + watchEnd(watch));
            HttpResponse<String> exact =
                    c.raw("GET", CONFIGMAPS + "?resourceVersion=" + old + "&resourceVersionMatch=Exact", null);
            assertEquals(
                    410, exact.statusCode(), "a list at the pre-restore resourceVersion " + old + ": " + exact.body());
        }
        JsonNode created = c.create(CONFIGMAPS, configMap("new-0", "after-restore"));
        long newRv = rv(created);
        assertTrue(
                newRv > lastOld, "a new resourceVersion " + newRv + " above every pre-restore one (" + lastOld + ")");
        long listRv = rv(c.list(CONFIGMAPS, ""));
        assertTrue(listRv > lastOld, "a list's resourceVersion " + listRv + " above " + lastOld);

        // the informer that ran across the restore: its watch from its last resourceVersion is refused, it relists
        int relistsBefore = acrossTheRestore.relists;
        acrossTheRestore.sync();
        assertEquals(relistsBefore + 1, acrossTheRestore.relists, "the informer relisted");
        Map<String, Obj> now = Obj.items(c.list(CONFIGMAPS, ""));
        assertEquals(now, acrossTheRestore.cache, "the informer's cache is the restored state after its relist");
        assertFalse(acrossTheRestore.cache.keySet().stream().anyMatch(lost::contains), "no lost object cached");
        // and a client that lists and then watches from the list's resourceVersion, started after the restore
        Informer fresh = new Informer(c);
        fresh.sync();
        assertEquals(now, fresh.cache);

        // writes after the restore reach both through their watches
        c.create(CONFIGMAPS, configMap("new-1", "after-restore"));
        JsonNode cm3 = c.get(CONFIGMAPS + "/cm-3");
        ((ObjectNode) cm3.path("data")).put("value", "changed-after-restore");
        c.update(CONFIGMAPS + "/cm-3", cm3);
        c.delete(CONFIGMAPS + "/cm-4");
        Map<String, Obj> last = Obj.items(c.list(CONFIGMAPS, ""));
        for (Informer informer : List.of(acrossTheRestore, fresh)) {
            Poll.untilTrue(CONVERGE, Duration.ofMillis(100), "a list-then-watch client converges", () -> {
                informer.sync();
                return informer.cache.equals(last);
            });
        }
        assertEquals(relistsBefore + 1, acrossTheRestore.relists, "its watch resumed without another relist");
        assertEquals(1, fresh.relists, "the fresh client listed once");
        for (Obj o : last.values()) {
            if (!inSnapshot.containsValue(o))
                assertTrue(Long.parseLong(o.resourceVersion()) > lastOld, "written after the restore: " + o);
        }

        // the API server's watch cache answers 410 for anything older than the cache; without it every watch goes
        // to etcd, and etcd itself ends a watch from a pre-restore revision as compacted
        api.close();
        api = startApiServer(apiDir, apiPort, List.of("--watch-cache=false"));
        for (String old : List.of(snapshotRv, String.valueOf(served.highest))) {
            KubeClient.WatchResult watch = api.client().watch(CONFIGMAPS, old, 5, 10);
            assertTrue(watch.gone(), "without the watch cache, a watch from " + old + " ends with 410: " + watch);
            watchEnds.add("uncached " + old + ": " + watchEnd(watch));
        }

        System.out.printf(
                "[RestoreApiServerIT] %s -> %s, 3 members: %d configmaps in the snapshot (rv %s), %d written after it"
                        + " (one of them updated %d times) and 1 updated, 1 deleted; highest rv served before the restore %d, etcd's %d; restore and walk"
                        + " %d s; after: %d objects as in the snapshot, watch and Exact list from old rvs 410, first new"
                        + " rv %d, informer relisted once and converged; watches from old rvs: %s; %d s in all%n",
                from.version(),
                to.version(),
                inSnapshot.size(),
                snapshotRv,
                lost.size(),
                POST_SNAPSHOT_UPDATES,
                served.highest,
                lastOld,
                restoreSeconds,
                inSnapshot.size(),
                newRv,
                watchEnds,
                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0));
    }

    private KubeApiServer startApiServer(Path workDir, int port) throws Exception {
        return startApiServer(workDir, port, List.of());
    }

    private KubeApiServer startApiServer(Path workDir, int port, List<String> flags) throws Exception {
        return KubeApiServer.start(apiServer, "127.0.0.1", port, cluster.endpoints(), workDir, API_READY, flags);
    }

    /** How a watch ended with 410, and the API server's reason. */
    private static String watchEnd(KubeClient.WatchResult watch) {
        JsonNode first = watch.events().getFirst();
        return (watch.httpStatus() == 410 ? "HTTP 410 " : "ERROR event 410 ")
                + first.path("object")
                        .path("message")
                        .asText(first.path("message").asText());
    }

    /** GET /version on the member's client URL: the release of the etcd serving there. */
    private static String etcdVersion(Member m) throws Exception {
        HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(URI.create(m.clientUrl() + "/version"))
                        .timeout(Duration.ofSeconds(10))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return JSON.readTree(r.body()).path("etcdserver").asText();
    }

    private static JsonNode object(String kind, String name, String data) throws Exception {
        String json = "{\"apiVersion\":\"v1\",\"kind\":\"%s\",\"metadata\":{\"name\":\"%s\"}%s}"
                .formatted(kind, name, data == null ? "" : ",\"data\":{\"value\":\"" + data + "\"}");
        return JSON.readTree(json);
    }

    private static JsonNode configMap(String name, String value) throws Exception {
        return object("ConfigMap", name, value);
    }

    private static long rv(JsonNode object) {
        return Long.parseLong(object.path("metadata").path("resourceVersion").asText());
    }

    /** The highest resourceVersion any answer before the restore carried. */
    private static final class Served {
        long highest;

        JsonNode note(JsonNode answer) {
            note(answer.path("metadata").path("resourceVersion").asText());
            answer.path("items").forEach(this::note);
            return answer;
        }

        void note(String resourceVersion) {
            if (resourceVersion != null && !resourceVersion.isEmpty())
                highest = Math.max(highest, Long.parseLong(resourceVersion));
        }
    }

    /** A configmap as a client caches it: its identity, version and data. */
    record Obj(String uid, String resourceVersion, JsonNode data) {
        static Obj of(JsonNode item) {
            JsonNode meta = item.path("metadata");
            return new Obj(
                    meta.path("uid").asText(), meta.path("resourceVersion").asText(), item.path("data"));
        }

        /** name -> object of a list's items. */
        static Map<String, Obj> items(JsonNode list) {
            Map<String, Obj> items = new TreeMap<>();
            list.path("items")
                    .forEach(i -> items.put(i.path("metadata").path("name").asText(), of(i)));
            return items;
        }
    }

    /**
     * What an informer does: list, then watch from the list's resourceVersion and apply the events, resuming each
     * watch from the last resourceVersion seen; a watch answered with 410 Gone means a relist.
     */
    private static final class Informer {
        private final KubeClient client;
        final Map<String, Obj> cache = new TreeMap<>();
        String resourceVersion;
        int relists;

        Informer(KubeClient client) {
            this.client = client;
        }

        /** One list, or one watch (ended by the server after a few seconds) whose events are applied. */
        void sync() throws Exception {
            if (resourceVersion == null) {
                relist();
                return;
            }
            KubeClient.WatchResult watch = client.watch(CONFIGMAPS, resourceVersion, 2, 1000);
            if (watch.gone()) {
                relist();
                return;
            }
            assertEquals(200, watch.httpStatus(), "watch from " + resourceVersion + ": " + watch);
            for (JsonNode event : watch.events()) {
                String type = event.path("type").asText();
                JsonNode object = event.path("object");
                if (type.equals("ERROR")) {
                    // "Expired" may also end a stream that delivered events first: relist, as an informer does
                    if (object.path("code").asInt() == 410) {
                        relist();
                        return;
                    }
                    throw new AssertionError("a watch error other than 410: " + event);
                }
                String name = object.path("metadata").path("name").asText();
                switch (type) {
                    case "ADDED", "MODIFIED" -> cache.put(name, Obj.of(object));
                    case "DELETED" -> cache.remove(name);
                    case "BOOKMARK" -> {}
                    default -> throw new AssertionError("an unknown watch event: " + event);
                }
                resourceVersion =
                        object.path("metadata").path("resourceVersion").asText();
            }
        }

        private void relist() throws Exception {
            JsonNode list = client.list(CONFIGMAPS, "");
            cache.clear();
            cache.putAll(Obj.items(list));
            resourceVersion = list.path("metadata").path("resourceVersion").asText();
            relists++;
        }
    }
}
