package dev.etcdmigrate.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;

/**
 * The etcd2 dataset of the conversion tests, written through /v2/keys: nested directories, empty
 * values, hidden keys, non-ASCII keys, a 1 MiB value, TTL keys inside and outside the TTL directory,
 * a TTL key that will have expired, and many plain keys. Remembers what v2 answered for each key.
 */
public final class V2Dataset {

    public static final String TTL_DIR = "/registry/events";
    private static final ObjectMapper JSON = new ObjectMapper();

    /** What v2 reported for a key: its value, indexes, TTL (0: none) and when it was written. */
    public record Written(String value, long createdIndex, long modifiedIndex, long ttl, Instant at) {}

    public final Map<String, Written> keys = new TreeMap<>();
    public String expiredKey;

    public static V2Dataset write(PrivateEtcd etcd, int plainKeys) throws Exception {
        V2Dataset d = new V2Dataset();
        HttpClient http = HttpClient.newHttpClient();
        URI base = etcd.gateway().baseUrl();
        d.put(http, base, "/registry/a/b/c/deep", "nested", 0);
        d.put(http, base, "/registry/configmaps/empty", "", 0);
        d.put(http, base, "/registry/_hidden", "hidden value", 0);
        d.put(http, base, "/_top-hidden", "also hidden", 0);
        d.put(http, base, "/registry/ünïcödé/ключ", "non-ascii key", 0);
        d.put(http, base, "/registry/日本/値", "値も", 0);
        d.put(http, base, "/registry/big", "x".repeat(1 << 20), 0);
        // TTLs in wall time: long enough for the long power-cut and I/O-error runs on one seed, within the
        // conversion's 2-second lease steps (up to an hour), apart from the TTL dir's default hour
        d.put(http, base, TTL_DIR + "/default/pod-1.event", "event with ttl", 3300);
        d.put(http, base, TTL_DIR + "/default/pod-2.event", "event without ttl", 0);
        d.put(http, base, "/registry/leases/kube-system/lease", "ttl outside the ttl dir", 3000);
        d.expiredKey = "/registry/short-lived";
        d.put(http, base, d.expiredKey, "gone soon", 1);
        Semaphore window = new Semaphore(32);
        List<CompletableFuture<Void>> pending = new ArrayList<>();
        for (int i = 0; i < plainKeys; i++) {
            String key = "/registry/pods/ns-" + (i % 17) + "/pod-" + i;
            String value = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"pod-" + i + "\"}}";
            window.acquire();
            pending.add(http.sendAsync(request(base, key, value, 0), HttpResponse.BodyHandlers.ofString())
                    .thenAccept(r -> d.record(key, value, 0, r))
                    .whenComplete((r, e) -> window.release()));
        }
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).join();
        return d;
    }

    private void put(HttpClient http, URI base, String key, String value, long ttl) throws Exception {
        record(key, value, ttl, http.send(request(base, key, value, ttl), HttpResponse.BodyHandlers.ofString()));
    }

    private static HttpRequest request(URI base, String key, String value, long ttl) {
        StringBuilder path = new StringBuilder("/v2/keys");
        for (String segment : key.substring(1).split("/")) {
            path.append('/')
                    .append(URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20"));
        }
        String form = "value=" + URLEncoder.encode(value, StandardCharsets.UTF_8) + (ttl > 0 ? "&ttl=" + ttl : "");
        return HttpRequest.newBuilder(base.resolve(path.toString()))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .PUT(HttpRequest.BodyPublishers.ofString(form))
                .build();
    }

    private void record(String key, String value, long ttl, HttpResponse<String> response) {
        if (response.statusCode() != 201 && response.statusCode() != 200) {
            throw new IllegalStateException(
                    "PUT " + key + " answered " + response.statusCode() + ": " + response.body());
        }
        try {
            JsonNode node = JSON.readTree(response.body()).path("node");
            synchronized (keys) {
                keys.put(
                        key,
                        new Written(
                                value,
                                node.path("createdIndex").asLong(),
                                node.path("modifiedIndex").asLong(),
                                ttl,
                                Instant.now()));
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** The keys that must exist after a conversion (the expired one must not). */
    public Map<String, Written> live() {
        Map<String, Written> live = new TreeMap<>(keys);
        live.remove(expiredKey);
        return live;
    }
}
