package dev.etcdmigrate.etcd.client;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** The v2 keys API (/v2/keys) over plain HTTP: writes for probes on etcd2 data and for a rollback's load. */
public final class V2Client {

    private final HttpClient http;
    private final URI base;

    public V2Client(HttpClient http, URI clientUrl) {
        this.http = http;
        this.base = clientUrl;
    }

    /** PUT key=value, with a TTL in seconds when ttl &gt; 0. */
    public void put(String key, String value, long ttl) throws IOException, InterruptedException {
        String form = "value=" + URLEncoder.encode(value, StandardCharsets.UTF_8) + (ttl > 0 ? "&ttl=" + ttl : "");
        send(
                HttpRequest.newBuilder(keyUri(key))
                        .header("Content-Type", "application/x-www-form-urlencoded")
                        .timeout(Duration.ofSeconds(10))
                        .PUT(HttpRequest.BodyPublishers.ofString(form))
                        .build(),
                200,
                201);
    }

    /** Many PUTs at once, a bounded number in flight (HTTP/1.1 connections to one server). */
    public final class Loader implements AutoCloseable {
        private final java.util.concurrent.Semaphore window;
        private final java.util.Queue<java.util.concurrent.CompletableFuture<?>> pending =
                new java.util.concurrent.ConcurrentLinkedQueue<>();
        private final java.util.concurrent.atomic.AtomicReference<Throwable> failure =
                new java.util.concurrent.atomic.AtomicReference<>();

        private Loader(int inFlight) {
            this.window = new java.util.concurrent.Semaphore(inFlight);
        }

        public void put(String key, String value, long ttl) throws IOException, InterruptedException {
            if (failure.get() != null)
                throw new IOException("a v2 write failed: " + failure.get().getMessage(), failure.get());
            String form = "value=" + URLEncoder.encode(value, StandardCharsets.UTF_8) + (ttl > 0 ? "&ttl=" + ttl : "");
            HttpRequest request = HttpRequest.newBuilder(keyUri(key))
                    .header("Content-Type", "application/x-www-form-urlencoded")
                    .timeout(Duration.ofSeconds(30))
                    .PUT(HttpRequest.BodyPublishers.ofString(form))
                    .build();
            window.acquire();
            pending.add(http.sendAsync(request, HttpResponse.BodyHandlers.ofString())
                    .whenComplete((response, error) -> {
                        window.release();
                        if (error != null) {
                            failure.compareAndSet(null, error);
                        } else if (response.statusCode() != 200 && response.statusCode() != 201) {
                            failure.compareAndSet(
                                    null,
                                    new IOException("PUT " + request.uri().getRawPath() + " answered "
                                            + response.statusCode() + ": " + response.body()));
                        }
                    }));
            pending.removeIf(java.util.concurrent.CompletableFuture::isDone);
        }

        /** Waits for every PUT; fails if any did. */
        @Override
        public void close() throws IOException {
            pending.forEach(f -> f.exceptionally(e -> null).join());
            if (failure.get() != null)
                throw new IOException("a v2 write failed: " + failure.get().getMessage(), failure.get());
        }
    }

    public Loader loader(int inFlight) {
        return new Loader(inFlight);
    }

    /** A key's value, or null when it does not exist. */
    public String get(String key) throws IOException, InterruptedException {
        HttpResponse<java.io.InputStream> response = http.send(
                HttpRequest.newBuilder(keyUri(key))
                        .timeout(Duration.ofSeconds(30))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        try (var json = new com.fasterxml.jackson.core.JsonFactory().createParser(response.body())) {
            if (response.statusCode() == 404) return null;
            if (response.statusCode() != 200)
                throw new IOException("GET " + key + " answered " + response.statusCode());
            String[] value = new String[1];
            walk(json, (k, v) -> value[0] = v);
            return value[0];
        }
    }

    public interface KeyValueConsumer {
        void accept(String key, String value) throws IOException;
    }

    /**
     * Every key the v2 API lists (a recursive GET; hidden keys are not listed), streamed: memory does not
     * grow with the store.
     */
    public void forEachListedKey(KeyValueConsumer consumer) throws IOException, InterruptedException {
        HttpResponse<java.io.InputStream> response = http.send(
                HttpRequest.newBuilder(base.resolve("/v2/keys/?recursive=true"))
                        .timeout(Duration.ofMinutes(5))
                        .GET()
                        .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        if (response.statusCode() != 200) {
            response.body().close();
            throw new IOException("GET /v2/keys/?recursive=true answered " + response.statusCode());
        }
        try (var json = new com.fasterxml.jackson.core.JsonFactory().createParser(response.body())) {
            walk(json, consumer);
        }
    }

    /** Walks a v2 answer ({"node": {...}}) and reports every node that is not a directory. */
    private static void walk(com.fasterxml.jackson.core.JsonParser json, KeyValueConsumer consumer) throws IOException {
        json.nextToken();
        while (json.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
            String field = json.currentName();
            json.nextToken();
            if (field.equals("node")) node(json, consumer);
            else json.skipChildren();
        }
    }

    private static void node(com.fasterxml.jackson.core.JsonParser json, KeyValueConsumer consumer) throws IOException {
        String key = null;
        String value = null;
        boolean dir = false;
        while (json.nextToken() == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
            String field = json.currentName();
            json.nextToken();
            switch (field) {
                case "key" -> key = json.getText();
                case "value" -> value = json.getText();
                case "dir" -> dir = json.getBooleanValue();
                case "nodes" -> {
                    while (json.nextToken() == com.fasterxml.jackson.core.JsonToken.START_OBJECT) node(json, consumer);
                }
                default -> json.skipChildren();
            }
        }
        if (!dir && key != null) consumer.accept(key, value == null ? "" : value);
    }

    public void delete(String key) throws IOException, InterruptedException {
        send(
                HttpRequest.newBuilder(keyUri(key))
                        .timeout(Duration.ofSeconds(10))
                        .DELETE()
                        .build(),
                200);
    }

    /** /v2/keys followed by the key, each path segment percent-encoded. */
    URI keyUri(String key) {
        StringBuilder path = new StringBuilder("/v2/keys");
        for (String segment : key.split("/", -1)) {
            if (segment.isEmpty()) continue;
            path.append('/')
                    .append(URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20"));
        }
        return base.resolve(path.toString());
    }

    private void send(HttpRequest request, int... ok) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
        for (int code : ok) {
            if (response.statusCode() == code) return;
        }
        String body = response.body();
        throw new IOException(request.method() + " " + request.uri().getRawPath() + " answered " + response.statusCode()
                + ": " + (body.length() > 200 ? body.substring(0, 200) + "..." : body));
    }
}
