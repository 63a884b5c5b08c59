package dev.etcdmigrate.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.it.support.Poll;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;

/** etcd's v3 JSON gateway (POST /v3/kv/put, /v3/kv/range; GET /version) through java.net.http. */
final class Gateway {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private final URI base;

    Gateway(String host, int port) {
        this.base = URI.create("http://" + host + ":" + port);
    }

    URI base() {
        return base;
    }

    void put(String key, String value) throws IOException, InterruptedException {
        JsonNode reply = post("/v3/kv/put", Map.of("key", b64(key), "value", b64(value)));
        if (!reply.has("header")) {
            throw new IOException("put " + key + " answered " + reply);
        }
    }

    Optional<String> get(String key) throws IOException, InterruptedException {
        JsonNode kvs = post("/v3/kv/range", Map.of("key", b64(key))).path("kvs");
        if (!kvs.isArray() || kvs.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(
                new String(Base64.getDecoder().decode(kvs.get(0).path("value").asText()), StandardCharsets.UTF_8));
    }

    /** The server's version, e.g. 3.7.3 (GET /version, field etcdserver). */
    String serverVersion() throws IOException, InterruptedException {
        HttpResponse<String> response = HTTP.send(
                HttpRequest.newBuilder(base.resolve("/version"))
                        .timeout(Duration.ofSeconds(5))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(response.body()).path("etcdserver").asText();
    }

    /** Puts a probe key until a put succeeds (a write, not just /health), or fails after the timeout. */
    void awaitWrite(Duration timeout) throws InterruptedException {
        Poll.untilTrue(timeout, Duration.ofMillis(100), "a successful write to " + base, () -> {
            put("/image-it/probe", "ok");
            return true;
        });
    }

    private JsonNode post(String path, Map<String, String> body) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(base.resolve(path))
                .timeout(Duration.ofSeconds(5))
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                .header("Content-Type", "application/json")
                .build();
        HttpResponse<String> response = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException("POST " + path + ": HTTP " + response.statusCode() + " " + response.body());
        }
        return JSON.readTree(response.body());
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }
}
