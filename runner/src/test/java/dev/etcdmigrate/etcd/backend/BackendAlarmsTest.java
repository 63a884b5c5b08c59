package dev.etcdmigrate.etcd.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.etcd.client.GatewayClient;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The check that a step's etcd raised no alarm, against a loopback server answering as etcd's gateway does. A cluster
 * member's private etcd answers the alarm request only with a quorum (etcd puts it through raft), which it lacks for
 * moments while its peers restart (every member edited at once): etcd's "request timed out" is then no answer.
 */
class BackendAlarmsTest {

    private static final Map.Entry<Integer, String> TIMED_OUT = Map.entry(
            503, "{\"code\":14,\"message\":\"etcdserver: request timed out, possibly due to connection lost\"}");

    private HttpServer server;
    private GatewayClient gateway;
    /** The answers to the alarm requests in turn; the last one stays. */
    private final Deque<Map.Entry<Integer, String>> answers = new ArrayDeque<>();

    private int asked;

    @BeforeEach
    void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/v3/maintenance/alarm", exchange -> {
            exchange.getRequestBody().readAllBytes();
            Map.Entry<Integer, String> answer;
            synchronized (answers) {
                asked++;
                answer = answers.size() > 1 ? answers.removeFirst() : answers.getFirst();
            }
            byte[] body = answer.getValue().getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(answer.getKey(), body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        gateway = new GatewayClient(
                GatewayClient.newHttpClient(),
                URI.create("http://127.0.0.1:" + server.getAddress().getPort()),
                "/v3");
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void aClusterBetweenLeadersIsAskedAgainUntilItAnswers() throws Exception {
        answers.add(TIMED_OUT);
        answers.add(TIMED_OUT);
        answers.add(Map.entry(200, "{\"header\":{\"revision\":\"9\"}}"));
        BackendAlarms.checkNoneRaised(gateway, "3.6.16", Duration.ofSeconds(30));
        assertEquals(3, asked);
    }

    @Test
    void anAlarmRaisedFailsTheStep() {
        answers.add(TIMED_OUT);
        answers.add(Map.entry(200, "{\"alarms\":[{\"memberID\":\"42\",\"alarm\":\"NOSPACE\"}]}"));
        FailedException failed = assertThrows(
                FailedException.class, () -> BackendAlarms.checkNoneRaised(gateway, "3.6.16", Duration.ofSeconds(30)));
        assertTrue(failed.getMessage().contains("NOSPACE of member 42"), failed.getMessage());
    }

    @Test
    void noAnswerWithinTheDeadlineFailsWithEtcdsWords() {
        answers.add(TIMED_OUT);
        IOException last = assertThrows(
                IOException.class, () -> BackendAlarms.checkNoneRaised(gateway, "3.6.16", Duration.ofSeconds(3)));
        assertTrue(last.getMessage().contains("request timed out"), last.getMessage());
        assertTrue(asked > 1, "asked again before giving up: " + asked);
    }

    @Test
    void anEtcdThatIsGoneFailsAtOnce() {
        server.stop(0);
        long started = System.nanoTime();
        assertThrows(
                ConnectException.class, () -> BackendAlarms.checkNoneRaised(gateway, "3.6.16", Duration.ofSeconds(60)));
        assertTrue(
                System.nanoTime() - started < Duration.ofSeconds(20).toNanos(),
                "not waited out: " + (System.nanoTime() - started) / 1_000_000 + " ms");
    }
}
