package dev.etcdmigrate.it.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.SampleData;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.PutOption;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** etcd3 data rolled back to etcd2 (3.4 with --enable-v2, and 2.2), checked through the v2 API. */
public class RollbackToV2IT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int KILL_TRIALS = 5; // per moment, see killedDuringTheRollbackThenRerunConverges

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    /** What a key must be in v2 afterwards: its value, and the TTL its lease had (0: none). */
    public record Expected(String value, long ttl, Instant at) {}

    @ParameterizedTest(name = "3.4.23/etcd3 -> {0}/etcd2")
    @ValueSource(strings = {"3.4.23", "2.2.5"})
    void everyKeyValueAndTtlComesBack(String targetVersion, @TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Map<String, Expected> expected = seed(data, 10_000, Map.of());
        try (RunnerProcess runner =
                RunnerProcess.run(RunnerArgs.migrate(data, targetVersion, "--target-storage", "etcd2"))) {
            assertEquals(0, runner.exitCode(), runner.output());
            List<JsonNode> dumped = runner.events("keys-dumped");
            assertEquals(1, dumped.size(), runner.output());
            assertEquals(
                    expected.size(), dumped.getFirst().path("keys").asLong(), "every key dumped:\n" + runner.output());
        }
        assertEquals(targetVersion + "/etcd2", Files.readString(data.resolve("version.txt")));
        Release target = EtcdFixture.release(targetVersion);
        try (PrivateEtcd server = etcd.startEtcd2(target, data)) {
            Map<String, JsonNode> v2 = readV2(server, expected.keySet());
            assertEquals(expected.keySet(), v2.keySet(), "the key set");
            Instant now = Instant.now();
            expected.forEach((key, want) -> {
                JsonNode node = v2.get(key);
                assertEquals(want.value(), node.path("value").asText(), "value of " + key);
                if (want.ttl() > 0) {
                    long ttl = node.path("ttl").asLong();
                    long elapsed = Duration.between(want.at(), now).toSeconds();
                    assertTrue(
                            ttl > 0 && ttl >= want.ttl() - elapsed - 3 && ttl <= want.ttl() + 1,
                            key + ": v2 TTL " + ttl + " for a lease of " + want.ttl() + " s granted " + elapsed
                                    + " s ago");
                } else {
                    assertTrue(node.path("ttl").isMissingNode(), key + " has no TTL");
                }
            });
            server.stop(Duration.ofSeconds(20));
        }
    }

    @Test
    void keysThatAreAlsoDirectoriesAreRefusedWithTheDataDirUnchanged(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        seed(
                data,
                20,
                Map.of("/registry/pods/ns-1", "a key that is also a directory".getBytes(StandardCharsets.UTF_8)));
        assertRefused(data, "/registry/pods/ns-1");
    }

    @Test
    void binaryValuesAreRefusedWithTheDataDirUnchanged(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        byte[] protobuf = {'k', '8', 's', 0, 0x0a, (byte) 0x89, (byte) 0xff, 0x12, 0x03};
        seed(data, 20, Map.of("/registry/secrets/default/token", protobuf));
        assertRefused(data, "/registry/secrets/default/token", "STORAGE_MEDIA_TYPE=application/json");
    }

    @ParameterizedTest(name = "killed after {0}")
    @ValueSource(strings = {"keys-dumped", "keyspace-matched"})
    void killedDuringTheRollbackThenRerunConverges(String moment, @TempDir Path dir) throws Exception {
        // after keyspace-matched only the member swap (a few fsyncs) stands between the event and version.txt: a
        // kill that lands after the swap proves nothing about the moment, so that trial is discarded for a new one
        for (int trial = 1; ; trial++) {
            Path data = dir.resolve("data-" + trial);
            Map<String, Expected> expected = seed(data, 300, Map.of());
            List<String> args = RunnerArgs.migrate(data, "3.4.23", "--target-storage", "etcd2");
            try (RunnerProcess runner = RunnerProcess.start(args, Map.of())) {
                runner.awaitEvent(moment, Duration.ofMinutes(2)); // the dump is written; the v2 store matches the dump
                runner.killHard();
            }
            String recorded = Files.readString(data.resolve("version.txt"));
            if (recorded.equals("3.4.23/etcd2") && trial < KILL_TRIALS) {
                System.out.println("[rollback] killed after " + moment + ": trial " + trial + " landed after the swap");
                continue;
            }
            assertEquals("3.4.23/etcd3", recorded, "trial " + trial + " of " + KILL_TRIALS + ": killed after the swap");
            assertRerunConverges(data, expected);
            return;
        }
    }

    private void assertRerunConverges(Path data, Map<String, Expected> expected) throws Exception {
        try (RunnerProcess rerun = RunnerProcess.run(RunnerArgs.migrate(data, "3.4.23", "--target-storage", "etcd2"))) {
            assertEquals(0, rerun.exitCode(), rerun.output());
        }
        assertEquals("3.4.23/etcd2", Files.readString(data.resolve("version.txt")));
        assertKeysAndValuesServed(etcd, EtcdFixture.release("3.4.23"), data, expected);
    }

    /** The etcd2 {@code target} serves exactly the expected keys with their values (through the v2 API). */
    public static void assertKeysAndValuesServed(
            EtcdFixture etcd, Release target, Path data, Map<String, Expected> expected) throws Exception {
        try (PrivateEtcd server = etcd.startEtcd2(target, data)) {
            Map<String, JsonNode> v2 = readV2(server, expected.keySet());
            assertEquals(expected.keySet(), v2.keySet());
            expected.forEach((key, want) ->
                    assertEquals(want.value(), v2.get(key).path("value").asText(), key));
            server.stop(Duration.ofSeconds(20));
        }
    }

    /** Refused (exit 3) naming each of {@code named} (the offending key, the setting that avoids it), the data dir unchanged. */
    private void assertRefused(Path data, String... named) throws Exception {
        Map<String, String> untouched = TreeDigest.of(data);
        try (RunnerProcess runner =
                RunnerProcess.run(RunnerArgs.migrate(data, "3.4.23", "--target-storage", "etcd2"))) {
            assertEquals(3, runner.exitCode(), runner.output());
            JsonNode ending = runner.ending();
            assertEquals("refused", ending.path("event").asText(), runner.output());
            assertEquals(3, ending.path("exitCode").asInt(), runner.output());
            for (String name : named) {
                assertTrue(
                        ending.path("reason").asText().contains(name),
                        "'" + name + "' in the reason:\n" + runner.output());
            }
            assertEquals(0, runner.count("keys-dumped"), "refused before the load:\n" + runner.output());
        }
        assertEquals(untouched, TreeDigest.of(data), "byte-identical after the refusal");
    }

    /** v3 data written by 3.4.23 through jetcd: the conversion dataset's shapes, plus extra raw keys. */
    private Map<String, Expected> seed(Path data, int plainKeys, Map<String, byte[]> extra) throws Exception {
        return seed(etcd, data, plainKeys, extra);
    }

    public static Map<String, Expected> seed(EtcdFixture etcd, Path data, int plainKeys, Map<String, byte[]> extra)
            throws Exception {
        Map<String, Expected> expected = new TreeMap<>();
        Release v34 = EtcdFixture.release("3.4.23");
        dev.etcdmigrate.datadir.Permissions.ownerOnlyDir(data);
        etcd.withClient(v34, data, client -> {
            long lease600 =
                    client.getLeaseClient().grant(600).get(30, TimeUnit.SECONDS).getID();
            long lease300 =
                    client.getLeaseClient().grant(300).get(30, TimeUnit.SECONDS).getID();
            put(client, expected, "/registry/a/b/c/deep", "nested", 0, 0);
            put(client, expected, "/registry/configmaps/empty", "", 0, 0);
            put(client, expected, "/registry/_hidden", "hidden value", 0, 0);
            put(client, expected, "/_top-hidden", "also hidden", 0, 0);
            put(client, expected, "/registry/ünïcödé/ключ", "non-ascii key", 0, 0);
            put(client, expected, "/registry/big", "x".repeat(1 << 20), 0, 0);
            put(client, expected, "/registry/events/default/pod-1.event", "event", lease600, 600);
            put(client, expected, "/registry/leases/kube-system/lease", "lease", lease300, 300);
            List<CompletableFuture<?>> pending = new ArrayList<>();
            for (int i = 0; i < plainKeys; i++) {
                String key = "/registry/pods/ns-" + (i % 17) + "/pod-" + i;
                String value = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"pod-" + i + "\"}}";
                expected.put(key, new Expected(value, 0, Instant.now()));
                pending.add(client.getKVClient().put(SampleData.bytes(key), SampleData.bytes(value)));
                if (pending.size() == 256) {
                    CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new))
                            .get(60, TimeUnit.SECONDS);
                    pending.clear();
                }
            }
            CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
            for (var e : extra.entrySet()) {
                client.getKVClient()
                        .put(SampleData.bytes(e.getKey()), ByteSequence.from(e.getValue()))
                        .get(30, TimeUnit.SECONDS);
            }
        });
        new dev.etcdmigrate.datadir.DataDir(data)
                .writeVersion(dev.etcdmigrate.version.DataVersion.parse("3.4.23/etcd3"));
        return expected;
    }

    private static void put(
            Client client, Map<String, Expected> expected, String key, String value, long lease, long ttl)
            throws Exception {
        PutOption option = lease == 0
                ? PutOption.DEFAULT
                : PutOption.builder().withLeaseId(lease).build();
        client.getKVClient()
                .put(SampleData.bytes(key), SampleData.bytes(value), option)
                .get(30, TimeUnit.SECONDS);
        expected.put(key, new Expected(value, ttl, Instant.now()));
    }

    /** Every key the v2 API lists (recursive GET), plus the hidden ones of {@code expected} fetched by name. */
    private static Map<String, JsonNode> readV2(PrivateEtcd server, Set<String> expected) throws Exception {
        List<String> hidden =
                expected.stream().filter(dev.etcdmigrate.ondisk.V2Key::isHidden).toList();
        HttpClient http = HttpClient.newHttpClient();
        Map<String, JsonNode> keys = new TreeMap<>();
        HttpResponse<String> all = http.send(
                HttpRequest.newBuilder(server.gateway().baseUrl().resolve("/v2/keys/?recursive=true"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        collect(JSON.readTree(all.body()).path("node"), keys);
        for (String key : hidden) {
            StringBuilder path = new StringBuilder("/v2/keys");
            for (String segment : key.substring(1).split("/")) {
                path.append('/')
                        .append(URLEncoder.encode(segment, StandardCharsets.UTF_8)
                                .replace("+", "%20"));
            }
            HttpResponse<String> one = http.send(
                    HttpRequest.newBuilder(server.gateway().baseUrl().resolve(path.toString()))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, one.statusCode(), "GET " + key + ": " + one.body());
            keys.put(key, JSON.readTree(one.body()).path("node"));
        }
        return keys;
    }

    private static void collect(JsonNode node, Map<String, JsonNode> keys) {
        if (node.path("dir").asBoolean(false)) {
            node.path("nodes").forEach(child -> collect(child, keys));
        } else if (node.has("key")) {
            keys.put(node.path("key").asText(), node);
        }
    }
}
