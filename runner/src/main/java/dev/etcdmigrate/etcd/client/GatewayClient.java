package dev.etcdmigrate.etcd.client;

import static dev.etcdmigrate.etcd.client.GatewayTransport.b64;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.security.SecureRandom;
import java.time.Duration;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLContextSpi;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocketFactory;
import javax.net.ssl.SSLSessionContext;
import javax.net.ssl.SSLSocketFactory;
import javax.net.ssl.TrustManager;

/**
 * The few v3 calls a step needs, over etcd's JSON gateway (plain HTTP on the client port). A cold
 * JVM reaches its first request far sooner this way than through a gRPC client.
 */
public final class GatewayClient {

    private final URI base;
    private final String prefix;
    private final GatewayTransport calls;
    private final GatewayTransport versions;

    /** @param prefix the line's gateway prefix, e.g. /v3 (catalog: line.jsonGateway) */
    public GatewayClient(HttpClient http, URI clientUrl, String prefix) {
        this.base = clientUrl;
        this.prefix = prefix;
        this.calls = new GatewayTransport(http, Duration.ofSeconds(10));
        this.versions = new GatewayTransport(http, Duration.ofSeconds(5));
    }

    public URI baseUrl() {
        return base;
    }

    /**
     * The client of the private etcds a run starts, which serve plain HTTP on loopback and nothing else. It makes no
     * TLS context at all: even one that trusts nothing sets up the runtime's TLS (its security providers, cipher
     * suites and a random source), about 90 ms of CPU that the start path shares two cores with. An https URL given
     * to it fails at once, before any byte is sent.
     */
    public static HttpClient newHttpClient() {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2))
                .sslContext(new NoTls())
                .sslParameters(new SSLParameters())
                .build();
    }

    /** A TLS context that cannot make a connection (see {@link #newHttpClient}). */
    private static final class NoTls extends SSLContext {
        NoTls() {
            super(new Refusing(), null, "none");
        }
    }

    private static final class Refusing extends SSLContextSpi {
        private static UnsupportedOperationException refused() {
            return new UnsupportedOperationException("this client speaks plain HTTP to a private etcd on loopback");
        }

        @Override
        protected void engineInit(KeyManager[] km, TrustManager[] tm, SecureRandom sr) {
            throw refused();
        }

        @Override
        protected SSLSocketFactory engineGetSocketFactory() {
            throw refused();
        }

        @Override
        protected SSLServerSocketFactory engineGetServerSocketFactory() {
            throw refused();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine() {
            throw refused();
        }

        @Override
        protected SSLEngine engineCreateSSLEngine(String host, int port) {
            throw refused();
        }

        @Override
        protected SSLSessionContext engineGetServerSessionContext() {
            throw refused();
        }

        @Override
        protected SSLSessionContext engineGetClientSessionContext() {
            throw refused();
        }

        @Override
        protected SSLParameters engineGetDefaultSSLParameters() {
            return new SSLParameters();
        }

        @Override
        protected SSLParameters engineGetSupportedSSLParameters() {
            return new SSLParameters();
        }
    }

    /** Writes key=value; returns the revision the write created. */
    public long put(String key, String value) throws IOException, InterruptedException {
        JsonNode reply = post("/kv/put", "{\"key\":\"" + b64(key) + "\",\"value\":\"" + b64(value) + "\"}");
        return reply.path("header").path("revision").asLong();
    }

    public void delete(String key) throws IOException, InterruptedException {
        post("/kv/deleterange", "{\"key\":\"" + b64(key) + "\"}");
    }

    /** Maintenance/Status of the member (3.6+ include downgradeInfo). */
    public JsonNode status() throws IOException, InterruptedException {
        return post("/maintenance/status", "{}");
    }

    /** An active alarm: the member that raised it (etcd's ID as a decimal string) and its type (NOSPACE, CORRUPT). */
    public record Alarm(String memberId, String type) {}

    /** Maintenance/Alarm GET: every active alarm of the cluster. */
    public java.util.List<Alarm> alarms() throws IOException, InterruptedException {
        JsonNode reply = post("/maintenance/alarm", "{\"action\":\"GET\"}");
        java.util.List<Alarm> alarms = new java.util.ArrayList<>();
        for (JsonNode alarm : reply.path("alarms")) {
            alarms.add(new Alarm(
                    alarm.path("memberID").asText("0"), alarm.path("alarm").asText("NOSPACE")));
        }
        return alarms;
    }

    /** Maintenance/Alarm DEACTIVATE of one member's alarm. */
    public void disarm(Alarm alarm) throws IOException, InterruptedException {
        post(
                "/maintenance/alarm",
                "{\"action\":\"DEACTIVATE\",\"memberID\":\"" + alarm.memberId() + "\",\"alarm\":\"" + alarm.type()
                        + "\"}");
    }

    /**
     * The downgrade job where Maintenance/Status does not report one (3.5), asked with a downgrade VALIDATE
     * ({@link GatewayTransport#unreportedDowngradeJob}).
     */
    public java.util.Optional<dev.etcdmigrate.version.MinorLine> unreportedDowngradeJob()
            throws IOException, InterruptedException {
        return calls.unreportedDowngradeJob(base, prefix);
    }

    /** GET /version: etcdserver, etcdcluster and (3.6+) storage. */
    public JsonNode version() throws IOException, InterruptedException {
        return versions.get(base.resolve("/version"));
    }

    private JsonNode post(String path, String body) throws IOException, InterruptedException {
        return calls.post(base.resolve(prefix + path), body);
    }
}
