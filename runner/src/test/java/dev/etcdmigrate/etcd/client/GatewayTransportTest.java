package dev.etcdmigrate.etcd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The one gateway call of both clients, against a loopback server that answers as etcd's gateway does. */
class GatewayTransportTest {

    private HttpServer server;
    private URI base;
    private final List<String> bodies = new CopyOnWriteArrayList<>();
    /** path -> status and body of the answer */
    private final Map<String, Map.Entry<Integer, String>> answers = Map.of(
            "/v3/kv/put", Map.entry(200, "{\"header\":{\"revision\":\"7\"}}"),
            "/v3beta/kv/range", Map.entry(200, "{\"error\":\"etcdserver: user name is empty\",\"code\":3}"),
            "/v3/maintenance/status", Map.entry(503, "{\"error\":\"etcdserver: leader changed\"}"),
            "/version", Map.entry(200, "{\"etcdserver\":\"3.6.16\",\"etcdcluster\":\"3.6.0\"}"));

    @BeforeEach
    void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            bodies.add(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            var answer = answers.getOrDefault(exchange.getRequestURI().getPath(), Map.entry(404, "404 page not found"));
            byte[] body = answer.getValue().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(answer.getKey(), body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        base = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void aPutSendsBase64AndReadsTheRevision() throws Exception {
        GatewayClient client = new GatewayClient(GatewayClient.newHttpClient(), base, "/v3");
        assertEquals(7, client.put("/a", "b"));
        assertEquals("{\"key\":\"L2E=\",\"value\":\"Yg==\"}", bodies.getFirst());
        assertEquals("3.6.0", client.version().path("etcdcluster").asText());
    }

    @Test
    void etcdsRefusalsAreFailuresInItsOwnWords() {
        GatewayTransport transport = new GatewayTransport(GatewayClient.newHttpClient(), Duration.ofSeconds(2));
        IOException refused =
                assertThrows(IOException.class, () -> transport.post(base.resolve("/v3/maintenance/status"), "{}"));
        assertTrue(
                refused.getMessage().contains("answered 503: {\"error\":\"etcdserver: leader changed\"}"),
                refused::getMessage);
        IOException inReply =
                assertThrows(IOException.class, () -> transport.post(base.resolve("/v3beta/kv/range"), "{}"));
        assertTrue(inReply.getMessage().contains("user name is empty"), inReply::getMessage);
        assertThrows(GatewayTransport.NotFound.class, () -> transport.post(base.resolve("/v3beta/kv/put"), "{}"));
    }

    @Test
    void theClusterClientFallsBackToTheOlderPrefixOnA404() throws Exception {
        // a 3.3 member serves /v3beta only: the range is served there only, the record is read all the same
        ClusterClient client = new ClusterClient(GatewayClient.newHttpClient(), List.of(base), "/v3");
        assertEquals("3.6", client.clusterVersion().orElseThrow().toString());
        var auth = assertThrows(ClusterClient.AuthEnabledException.class, client::record);
        assertTrue(auth.getMessage().contains("user name is empty"), auth::getMessage);
    }

    @Test
    void base64RoundTrips() {
        assertEquals("/registry/ü", GatewayTransport.fromB64(GatewayTransport.b64("/registry/ü")));
    }
}
