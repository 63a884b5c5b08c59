package dev.etcdmigrate.etcd.client;

import static dev.etcdmigrate.etcd.client.GatewayTransport.b64;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.security.GeneralSecurityException;
import java.time.Duration;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
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
     * The client of every private etcd, which serves plain HTTP on loopback. It gets a TLS context that trusts
     * nothing: the default one parses the JDK's CA store first (tens of ms before step 1), and an https URL
     * reaching this client by mistake fails its handshake instead of trusting the public CAs.
     */
    public static HttpClient newHttpClient() {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2))
                .sslContext(trustingNothing())
                .build();
    }

    private static SSLContext trustingNothing() {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(new KeyManager[0], new TrustManager[0], null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("no TLS implementation in this Java runtime", e);
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
