package dev.etcdmigrate.etcd.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Base64;
import javax.net.ssl.KeyManager;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;

/**
 * The few v3 calls a step needs, over etcd's JSON gateway (plain HTTP on the client port). A cold
 * JVM reaches its first request far sooner this way than through a gRPC client.
 */
public final class GatewayClient {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final HttpClient http;
    private final URI base;
    private final String prefix;

    /** @param prefix the line's gateway prefix, e.g. /v3 (catalog: line.jsonGateway) */
    public GatewayClient(HttpClient http, URI clientUrl, String prefix) {
        this.http = http;
        this.base = clientUrl;
        this.prefix = prefix;
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

    /** GET /version: etcdserver, etcdcluster and (3.6+) storage. */
    public JsonNode version() throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(base.resolve("/version"))
                .timeout(Duration.ofSeconds(5))
                .GET()
                .build();
        return parse(send(request));
    }

    private JsonNode post(String path, String body) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(base.resolve(prefix + path))
                .timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        return parse(send(request));
    }

    private String send(HttpRequest request) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        if (response.statusCode() != 200) {
            throw new IOException(request.method() + " " + request.uri().getPath() + " answered "
                    + response.statusCode() + ": " + abbreviate(response.body()));
        }
        return response.body();
    }

    private static JsonNode parse(String body) throws IOException {
        return JSON.readTree(body);
    }

    private static String abbreviate(String body) {
        return body.length() > 300 ? body.substring(0, 300) + "..." : body;
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }
}
