package dev.etcdmigrate.image;

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
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * etcd's JSON gateway (/v3/...) over client-certificate TLS, as the static pod serves it: writes the
 * seed, then reads every key with its revisions and lease, and the leases with their attached keys.
 */
final class TlsEtcd {

    /** One key as etcd stores it. */
    record Kv(String value, long createRevision, long modRevision, long version, long lease) {}

    /** A lease: its granted TTL and the keys attached to it (the remaining TTL is only checked to be positive). */
    record Lease(long grantedTtl, Set<String> keys) {}

    private static final ObjectMapper JSON = new ObjectMapper();
    private final URI base;
    private final HttpClient http;

    TlsEtcd(URI base, Path caFile, Path certFile, Path keyFile) throws Exception {
        this.base = base;
        CertificateFactory x509 = CertificateFactory.getInstance("X.509");
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (InputStream in = Files.newInputStream(caFile)) {
            trust.setCertificateEntry("ca", x509.generateCertificate(in));
        }
        Certificate cert;
        try (InputStream in = Files.newInputStream(certFile)) {
            cert = x509.generateCertificate(in);
        }
        String pem =
                Files.readString(keyFile).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        PrivateKey key = KeyFactory.getInstance("EC")
                .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("client", key, new char[0], new Certificate[] {cert});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        this.http = HttpClient.newBuilder()
                .sslContext(tls)
                .connectTimeout(Duration.ofSeconds(2))
                .build();
    }

    /** The server version from /version, or empty while etcd does not answer. */
    Optional<String> serverVersion() {
        return versionField("etcdserver");
    }

    /** True when a linearizable read succeeds (etcd has a leader and serves). */
    boolean serving() {
        try {
            range("/node-it/probe");
            return true;
        } catch (Exception notYet) {
            return false;
        }
    }

    /**
     * A serializable read answered within timeout: the member's own etcd serves its client URL, whether or not the
     * cluster has a leader at that moment (a sampler of members in and out of service; a slow answer counts as out).
     */
    boolean serving(Duration timeout) {
        try {
            post(
                    "/v3/kv/range",
                    JSON.createObjectNode().put("key", b64("/node-it/probe")).put("serializable", true),
                    timeout);
            return true;
        } catch (Exception notNow) {
            return false;
        }
    }

    /** The cluster version from /version ("etcdcluster"), or empty while etcd does not answer. */
    Optional<String> clusterVersion() {
        return versionField("etcdcluster");
    }

    /** One field of /version, or empty while etcd does not answer. */
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

    long put(String key, String value, long lease) throws Exception {
        ObjectNode body = JSON.createObjectNode().put("key", b64(key)).put("value", b64(value));
        if (lease != 0) body.put("lease", Long.toString(lease));
        return post("/v3/kv/put", body).path("header").path("revision").asLong();
    }

    void delete(String key) throws Exception {
        post("/v3/kv/deleterange", JSON.createObjectNode().put("key", b64(key)));
    }

    long grant(long ttlSeconds) throws Exception {
        return post("/v3/lease/grant", JSON.createObjectNode().put("TTL", Long.toString(ttlSeconds)))
                .path("ID")
                .asLong();
    }

    /** Every key under prefix with its value, revisions, version and lease. */
    Map<String, Kv> range(String prefix) throws Exception {
        byte[] end = prefix.getBytes(StandardCharsets.UTF_8);
        end[end.length - 1]++;
        JsonNode r = post(
                "/v3/kv/range",
                JSON.createObjectNode()
                        .put("key", b64(prefix))
                        .put("range_end", Base64.getEncoder().encodeToString(end)));
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
    Lease lease(long id) throws Exception {
        JsonNode r = post(
                "/v3/lease/timetolive",
                JSON.createObjectNode().put("ID", Long.toString(id)).put("keys", true));
        if (r.path("TTL").asLong(-1) <= 0) throw new AssertionError("lease " + id + " is gone: " + r);
        Set<String> keys = new TreeSet<>();
        r.path("keys").forEach(k -> keys.add(unb64(k.asText())));
        return new Lease(r.path("grantedTTL").asLong(), keys);
    }

    private JsonNode post(String path, ObjectNode body) throws Exception {
        return post(path, body, Duration.ofSeconds(10));
    }

    private JsonNode post(String path, ObjectNode body, Duration timeout) throws Exception {
        HttpResponse<String> r = http.send(
                HttpRequest.newBuilder(base.resolve(path))
                        .timeout(timeout)
                        .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) throw new IOException(path + ": HTTP " + r.statusCode() + " " + r.body());
        return JSON.readTree(r.body());
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    private static String unb64(String s) {
        return new String(Base64.getDecoder().decode(s), StandardCharsets.UTF_8);
    }
}
