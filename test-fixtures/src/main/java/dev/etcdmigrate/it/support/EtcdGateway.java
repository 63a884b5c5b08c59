package dev.etcdmigrate.it.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * The tests' client of etcd's v3 JSON gateway ({@code /v3/...}, {@code /version}), over plain HTTP or over TLS with a
 * client certificate (a static pod's etcd, a cluster with client-cert auth): keys with their revisions and leases,
 * leases with their keys, the versions a member reports, and raw calls for what has no method. The runner's own
 * client (main's GatewayClient) carries only what a step needs; this one carries what the tests check.
 */
public final class EtcdGateway {

    /** One key as etcd stores it. */
    public record Kv(String value, long createRevision, long modRevision, long version, long lease) {}

    /** A lease: its granted TTL and the keys attached to it (the remaining TTL is only checked to be positive). */
    public record Lease(long grantedTtl, Set<String> keys) {}

    /** The key {@link #serving()} reads and {@link #awaitWrite} writes. */
    public static final String PROBE_KEY = "/it/probe";

    private static final ObjectMapper JSON = new ObjectMapper();

    private final URI base;
    private final HttpClient http;
    private final Duration timeout;

    /** Every request through http, each bounded by timeout. */
    public EtcdGateway(URI base, HttpClient http, Duration timeout) {
        this.base = base;
        this.http = http;
        this.timeout = timeout;
    }

    /** Plain HTTP (a private or a container's etcd); a 2 s connect timeout, 10 s per request. */
    public static EtcdGateway plain(URI base) {
        return new EtcdGateway(
                base,
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build(),
                Duration.ofSeconds(10));
    }

    public static EtcdGateway plain(String host, int port) {
        return plain(URI.create("http://" + host + ":" + port));
    }

    /** HTTPS trusting only ca, presenting cert/key (PEM, the key PKCS#8 EC); a 2 s connect timeout, 10 s per request. */
    public static EtcdGateway tls(URI base, Path ca, Path cert, Path key) throws Exception {
        return new EtcdGateway(
                base,
                HttpClient.newBuilder()
                        .sslContext(sslContext(ca, cert, key))
                        .connectTimeout(Duration.ofSeconds(2))
                        .build(),
                Duration.ofSeconds(10));
    }

    /** The same client with another bound per request. */
    public EtcdGateway withTimeout(Duration perRequest) {
        return new EtcdGateway(base, http, perRequest);
    }

    public URI base() {
        return base;
    }

    /** Trusts only the test CA; presents the client certificate (client-cert auth on the members). */
    public static SSLContext sslContext(Path ca, Path cert, Path key) throws Exception {
        CertificateFactory x509 = CertificateFactory.getInstance("X.509");
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(ca)) {
            trust.setCertificateEntry("ca", x509.generateCertificate(in));
        }
        Certificate certificate;
        try (InputStream in = Files.newInputStream(cert)) {
            certificate = x509.generateCertificate(in);
        }
        String pem = Files.readString(key).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        PrivateKey privateKey = KeyFactory.getInstance("EC")
                .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("client", privateKey, new char[0], new Certificate[] {certificate});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return context;
    }

    /** Puts key = value; the revision of the put. */
    public long put(String key, String value) throws IOException, InterruptedException {
        return put(key, value, 0);
    }

    /** The same, attached to a lease (0: none). */
    public long put(String key, String value, long lease) throws IOException, InterruptedException {
        ObjectNode body = JSON.createObjectNode().put("key", b64(key)).put("value", b64(value));
        if (lease != 0) body.put("lease", Long.toString(lease));
        JsonNode reply = post("/v3/kv/put", body, timeout);
        if (!reply.has("header")) throw new IOException("put " + key + " answered " + reply);
        return reply.path("header").path("revision").asLong();
    }

    /** The value of key, or empty when it has none (a linearizable read). */
    public Optional<String> get(String key) throws IOException, InterruptedException {
        JsonNode kvs = post("/v3/kv/range", JSON.createObjectNode().put("key", b64(key)), timeout)
                .path("kvs");
        if (!kvs.isArray() || kvs.isEmpty()) return Optional.empty();
        return Optional.of(unb64(kvs.get(0).path("value").asText()));
    }

    public void delete(String key) throws IOException, InterruptedException {
        post("/v3/kv/deleterange", JSON.createObjectNode().put("key", b64(key)), timeout);
    }

    /** A new lease of ttlSeconds; its id. */
    public long grant(long ttlSeconds) throws IOException, InterruptedException {
        return post("/v3/lease/grant", JSON.createObjectNode().put("TTL", Long.toString(ttlSeconds)), timeout)
                .path("ID")
                .asLong();
    }

    /** Every key under prefix with its value, revisions, version and lease. */
    public Map<String, Kv> range(String prefix) throws IOException, InterruptedException {
        byte[] end = prefix.getBytes(StandardCharsets.UTF_8);
        end[end.length - 1]++;
        JsonNode r = post(
                "/v3/kv/range",
                JSON.createObjectNode()
                        .put("key", b64(prefix))
                        .put("range_end", Base64.getEncoder().encodeToString(end)),
                timeout);
        Map<String, Kv> kvs = new TreeMap<>();
        for (JsonNode kv : r.path("kvs")) {
            kvs.put(
                    unb64(kv.path("key").asText()),
                    new Kv(
                            unb64(kv.path("value").asText()),
                            kv.path("create_revision").asLong(),
                            kv.path("mod_revision").asLong(),
                            kv.path("version").asLong(),
                            kv.path("lease").asLong()));
        }
        return kvs;
    }

    /** The lease with its granted TTL and attached keys; fails if it expired (TTL -1). */
    public Lease lease(long id) throws IOException, InterruptedException {
        JsonNode r = post(
                "/v3/lease/timetolive",
                JSON.createObjectNode().put("ID", Long.toString(id)).put("keys", true),
                timeout);
        if (r.path("TTL").asLong(-1) <= 0) throw new AssertionError("lease " + id + " is gone: " + r);
        Set<String> keys = new TreeSet<>();
        r.path("keys").forEach(k -> keys.add(unb64(k.asText())));
        return new Lease(r.path("grantedTTL").asLong(), keys);
    }

    /** The server version from /version ("etcdserver"), or empty while etcd does not answer. */
    public Optional<String> serverVersion() {
        return versionField("etcdserver");
    }

    /** The cluster version from /version ("etcdcluster"), or empty while etcd does not answer. */
    public Optional<String> clusterVersion() {
        return versionField("etcdcluster");
    }

    /** /version's body answered within within, or null when it was not (down, out of service, slow). */
    public CompletableFuture<String> versionAsync(Duration within) {
        return http.sendAsync(
                        HttpRequest.newBuilder(base.resolve("/version"))
                                .timeout(within)
                                .GET()
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .thenApply(r -> r.statusCode() == 200 ? r.body() : null)
                .exceptionally(t -> null);
    }

    /** True when a linearizable read succeeds (etcd has a leader and serves). */
    public boolean serving() {
        try {
            get(PROBE_KEY);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (Exception notYet) {
            return false;
        }
    }

    /**
     * A serializable read answered within timeout: the member's own etcd serves its client URL, whether or not the
     * cluster has a leader at that moment (a sampler of members in and out of service; a slow answer counts as out).
     */
    public boolean serving(Duration within) {
        try {
            post(
                    "/v3/kv/range",
                    JSON.createObjectNode().put("key", b64(PROBE_KEY)).put("serializable", true),
                    within);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } catch (Exception notNow) {
            return false;
        }
    }

    /** Puts the probe key until a put succeeds (a write, not just /health), or fails after the deadline. */
    public void awaitWrite(Duration deadline) throws InterruptedException {
        Poll.untilTrue(deadline, Duration.ofMillis(100), "a successful write to " + base, () -> {
            put(PROBE_KEY, "ok");
            return true;
        });
    }

    /** POST path with a JSON body; the response body (HTTP 200 only). */
    public String post(String path, String jsonBody) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(base.resolve(path))
                .timeout(timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(jsonBody)));
    }

    /** GET path; the response body (HTTP 200 only). */
    public String getPath(String path) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(base.resolve(path)).timeout(timeout).GET());
    }

    private Optional<String> versionField(String field) {
        try {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(base.resolve("/version"))
                            .timeout(Duration.ofSeconds(3))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) return Optional.empty();
            return Optional.of(JSON.readTree(r.body()).path(field).asText());
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    private JsonNode post(String path, ObjectNode body, Duration within) throws IOException, InterruptedException {
        return JSON.readTree(send(HttpRequest.newBuilder(base.resolve(path))
                .timeout(within)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))));
    }

    private String send(HttpRequest.Builder builder) throws IOException, InterruptedException {
        HttpRequest request = builder.build();
        HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException(
                    request.method() + " " + request.uri().getPath() + ": HTTP " + r.statusCode() + " " + r.body());
        }
        return r.body();
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String unb64(String s) {
        return new String(Base64.getDecoder().decode(s), StandardCharsets.UTF_8);
    }
}
