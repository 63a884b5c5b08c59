package dev.etcdmigrate.etcd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import dev.etcdmigrate.cluster.ClusterView;
import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An answer counts only from the member asked: two members list one client URL (shared, or load-balanced), and the
 * etcd behind it answers as one of them (its header's member ID), against a loopback server that answers as etcd's
 * gateway does.
 */
class ClusterClientTest {

    private HttpServer server;
    private URI base;
    /** Each path's answer: its HTTP status and body (a path not here answers 404, as etcd's gateway does). */
    private final Map<String, Map.Entry<Integer, String>> answers = new java.util.concurrent.ConcurrentHashMap<>();

    @BeforeEach
    void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        base = URI.create("http://127.0.0.1:" + server.getAddress().getPort());
        answer(
                "/v3/cluster/member/list",
                "{\"header\":{\"member_id\":\"11\"},\"members\":["
                        + "{\"ID\":\"11\",\"name\":\"m0\",\"clientURLs\":[\"" + base + "\"]},"
                        + "{\"ID\":\"22\",\"name\":\"m1\",\"clientURLs\":[\"" + base + "\"]}]}");
        answer(
                "/v3/maintenance/status",
                "{\"header\":{\"member_id\":\"11\"},\"version\":\"3.6.16\",\"raftIndex\":\"500\",\"leader\":\"11\","
                        + "\"downgradeInfo\":{}}");
        answer("/v3/kv/range", "{\"header\":{\"member_id\":\"11\"},\"count\":\"0\"}");
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            Map.Entry<Integer, String> answer =
                    answers.get(exchange.getRequestURI().getPath());
            byte[] body = (answer == null ? "404 page not found" : answer.getValue()).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(answer == null ? 404 : answer.getKey(), body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
    }

    private void answer(String path, String body) {
        answers.put(path, Map.entry(200, body));
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void anAnswerFromAnotherMemberIsNoAnswerOfTheMemberAsked() throws Exception {
        ClusterClient client = new ClusterClient(GatewayClient.newHttpClient(), List.of(base), "/v3");
        List<Member> members = client.members();
        assertTrue(members.get(0).status().isPresent(), members.toString());
        assertTrue(members.get(0).status().get().leader());
        assertEquals(500, members.get(0).status().get().raftIndex());
        assertTrue(members.get(1).status().isEmpty(), members.toString());
        assertTrue(
                members.get(1).problem().contains("answered as member 11 (m0), not as member 22"),
                members.get(1).problem());
        // where the take-over reads a record's holder: the same rule
        assertTrue(client.statusAt("m0", List.of(base.toString())).isPresent());
        assertTrue(client.statusAt("m1", List.of(base.toString())).isEmpty());
        // a name the cluster does not list: nothing answers as it
        assertTrue(client.statusAt("gone", List.of(base.toString())).isEmpty());
        // a URL that does not answer, then one that does: the first answer as that member counts
        assertTrue(client.statusAt("m0", List.of("http://127.0.0.1:1", base.toString()))
                .isPresent());
    }

    @Test
    void aFreshClientLearnsTheMembersIdsBeforeItReadsAHolder() throws Exception {
        // the sweep before an exec may read a holder before this client read any member list
        ClusterClient client = new ClusterClient(GatewayClient.newHttpClient(), List.of(base), "/v3");
        assertTrue(client.statusAt("m1", List.of(base.toString())).isEmpty());
        assertEquals(
                "3.6",
                client.statusAt("m0", List.of(base.toString()))
                        .orElseThrow()
                        .line()
                        .toString());
    }

    /**
     * A member whose Maintenance/Status has no downgradeInfo (3.5) is asked about a downgrade job the way etcd answers
     * it (a VALIDATE to the minor below the cluster version), so a job the leader has not ended yet is seen.
     */
    @Test
    void aJobTheStatusDoesNotReportIsAskedOfEtcd() throws Exception {
        answer(
                "/v3/maintenance/status",
                "{\"header\":{\"member_id\":\"11\"},\"version\":\"3.5.35\",\"raftIndex\":\"500\",\"leader\":\"11\"}");
        answer("/version", "{\"etcdserver\":\"3.5.35\",\"etcdcluster\":\"3.5.0\"}");
        ClusterClient client = new ClusterClient(GatewayClient.newHttpClient(), List.of(base), "/v3");
        // no route (a line without downgrades): no job
        assertEquals(
                Optional.empty(),
                client.members().getFirst().status().orElseThrow().downgradeTarget());
        // etcd's refusal of a VALIDATE while a job runs: the job, to the cluster version
        answers.put(
                "/v3/maintenance/downgrade",
                Map.entry(
                        400,
                        "{\"error\":\"etcdserver: cluster has a downgrade job in progress\",\"code\":9,"
                                + "\"message\":\"etcdserver: cluster has a downgrade job in progress\"}"));
        assertEquals(
                Optional.of(MinorLine.parse("3.5")),
                client.members().getFirst().status().orElseThrow().downgradeTarget());
        // VALIDATE answered: no job
        answer("/v3/maintenance/downgrade", "{\"header\":{\"member_id\":\"11\"},\"version\":\"3.5.0\"}");
        assertEquals(
                Optional.empty(),
                client.members().getFirst().status().orElseThrow().downgradeTarget());
        // any other failure (no quorum for its linearizable read): not an answer, never "no job"
        answers.put("/v3/maintenance/downgrade", Map.entry(503, "{\"error\":\"etcdserver: request timed out\"}"));
        Member m0 = client.members().getFirst();
        assertTrue(m0.status().isEmpty(), m0.toString());
    }

    @Test
    void everyFieldOfStatusAndTheMemberListIsRead() throws Exception {
        // a member cut from its peers: it answers locally, follows no leader and says so; m1 is a learner
        HttpServer cut = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        URI at = URI.create("http://127.0.0.1:" + cut.getAddress().getPort());
        Map<String, String> answers = Map.of(
                "/v3/cluster/member/list",
                "{\"header\":{\"member_id\":\"18446744073709551615\"},\"members\":["
                        + "{\"ID\":\"18446744073709551615\",\"name\":\"m0\",\"clientURLs\":[\"" + at + "\"]},"
                        + "{\"ID\":\"22\",\"name\":\"m1\",\"isLearner\":true}]}",
                "/v3/maintenance/status",
                "{\"header\":{\"member_id\":\"18446744073709551615\"},\"version\":\"3.5.35\",\"dbSize\":\"4096\","
                        + "\"leader\":\"0\",\"raftIndex\":\"900\",\"raftTerm\":\"7\",\"raftAppliedIndex\":\"880\","
                        + "\"errors\":[\"etcdserver: no leader\",\"memberID:1 alarm:NOSPACE \"],\"isLearner\":false}",
                "/version",
                "{\"etcdserver\":\"3.5.35\",\"etcdcluster\":\"3.5.0\"}",
                "/v3/kv/range",
                "{\"error\":\"etcdserver: request timed out\",\"code\":14}");
        cut.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            String path = exchange.getRequestURI().getPath();
            String answer = answers.get(path);
            byte[] body = (answer == null ? "404 page not found" : answer).getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(answer == null ? 404 : path.equals("/v3/kv/range") ? 503 : 200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        cut.start();
        try {
            ClusterClient client = new ClusterClient(GatewayClient.newHttpClient(), List.of(at), "/v3");
            List<Member> members = client.members();
            Member m0 = members.get(0);
            dev.etcdmigrate.cluster.ClusterView.Status s = m0.status().orElseThrow();
            assertEquals(-1L, m0.id()); // 2^64 - 1: an unsigned ID
            assertEquals(-1L, s.memberId());
            assertEquals(0, s.leaderId());
            assertEquals(7, s.raftTerm());
            assertEquals(900, s.raftIndex());
            assertEquals(880, s.raftAppliedIndex());
            assertEquals(4096, s.dbSize());
            assertEquals(List.of("etcdserver: no leader", "memberID:1 alarm:NOSPACE "), s.errors());
            assertTrue(!s.leader() && !s.learner() && !m0.learner());
            assertTrue(members.get(1).learner(), members.toString());
            // the linearizable read through m0 is not served: the reason, no failure
            assertTrue(
                    client.linearizableThrough("m0").orElseThrow().contains("503"),
                    client.linearizableThrough("m0").toString());
            assertTrue(client.linearizableThrough("m1").isPresent()); // no client URL
        } finally {
            cut.stop(0);
        }
    }

    @Test
    void aLinearizableReadCountsOnlyAsTheMemberAsked() throws Exception {
        ClusterClient client = new ClusterClient(GatewayClient.newHttpClient(), List.of(base), "/v3");
        client.members();
        assertTrue(client.linearizableThrough("m0").isEmpty());
        // m1 lists the same URL, where m0 serves: no proof that m1 is connected
        assertTrue(client.linearizableThrough("m1").orElseThrow().contains("answered as member 11"));
    }

    /**
     * The one try to release while the runner's member is down walks every endpoint within one budget in all: three
     * endpoints that never answer cost the budget, not three times the client's own timeout (3 s each).
     */
    @Test
    void aBoundedTryEndsWithinItsBudgetHoweverManyEndpointsHang() throws Exception {
        java.util.concurrent.CountDownLatch over = new java.util.concurrent.CountDownLatch(1);
        List<HttpServer> hanging = new java.util.ArrayList<>();
        List<URI> urls = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                HttpServer h = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
                h.createContext("/", exchange -> {
                    try {
                        over.await(); // an etcd without a quorum: no answer until the test is over
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    exchange.close();
                });
                h.start();
                hanging.add(h);
                urls.add(URI.create("http://127.0.0.1:" + h.getAddress().getPort()));
            }
            ClusterClient client = new ClusterClient(GatewayClient.newHttpClient(), urls, "/v3");
            dev.etcdmigrate.cluster.ClusterView.Record record = new dev.etcdmigrate.cluster.ClusterView.Record(
                    new dev.etcdmigrate.cluster.RecordValue(
                            "m0", MinorLine.parse("3.6"), MinorLine.parse("3.7"), java.time.Instant.EPOCH),
                    7);
            long start = System.nanoTime();
            IOException failed = org.junit.jupiter.api.Assertions.assertThrows(
                    IOException.class,
                    () -> client.within(java.time.Duration.ofMillis(800)).delete(record));
            long millis = (System.nanoTime() - start) / 1_000_000;
            assertTrue(millis < 2_500, "the try took " + millis + " ms: " + failed.getMessage());
        } finally {
            over.countDown();
            for (HttpServer h : hanging) h.stop(0);
        }
    }

    /**
     * "No member answered" is told apart from "no etcd is there": an etcd that answers with an error (a 503 with the
     * gateway's body for a leader change) or takes the request and does not answer in time is there, on any endpoint
     * of the walk, first or last; a closed port (refused) is not.
     */
    @Test
    void anEtcdThatAnsweredLateOrWithAnErrorIsThereAClosedPortIsNot() throws Exception {
        URI closed = URI.create("http://127.0.0.1:"
                + dev.etcdmigrate.etcd.server.FreePorts.pick().client());
        java.time.Duration timeout = java.time.Duration.ofMillis(700);
        IOException nothing = org.junit.jupiter.api.Assertions.assertThrows(
                IOException.class,
                () -> new ClusterClient(GatewayClient.newHttpClient(), List.of(closed), "/v3", timeout).members());
        org.junit.jupiter.api.Assertions.assertFalse(
                nothing instanceof ClusterView.EtcdReached, "refused is no etcd: " + nothing);

        answers.put(
                "/v3/cluster/member/list",
                Map.entry(
                        503,
                        "{\"error\":\"etcdserver: leader changed\",\"code\":14,"
                                + "\"message\":\"etcdserver: leader changed\"}"));
        for (List<URI> walk : List.of(List.of(base), List.of(closed, base), List.of(base, closed))) {
            IOException failed = org.junit.jupiter.api.Assertions.assertThrows(
                    IOException.class,
                    () -> new ClusterClient(GatewayClient.newHttpClient(), walk, "/v3", timeout).members());
            assertTrue(failed instanceof ClusterView.EtcdReached, walk + ": a 503 is an etcd there: " + failed);
        }

        java.util.concurrent.CountDownLatch over = new java.util.concurrent.CountDownLatch(1);
        HttpServer silent = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        silent.createContext("/", exchange -> {
            try {
                over.await(); // a member under load, or waiting for a quorum: no answer within the client's time
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            exchange.close();
        });
        silent.start();
        try {
            URI late = URI.create("http://127.0.0.1:" + silent.getAddress().getPort());
            for (List<URI> walk : List.of(List.of(late), List.of(late, closed))) {
                IOException failed = org.junit.jupiter.api.Assertions.assertThrows(
                        IOException.class,
                        () -> new ClusterClient(GatewayClient.newHttpClient(), walk, "/v3", timeout).members());
                assertTrue(
                        failed instanceof ClusterView.EtcdReached,
                        walk + ": a late answer is an etcd there: " + failed);
            }
        } finally {
            over.countDown();
            silent.stop(0);
        }
    }

    /**
     * An etcd stopped or too busy to answer still has its port: the kernel takes the connection, TLS's handshake never
     * finishes, and the client calls that a connect timeout. An etcd is there (a member may be out by its runner's
     * choice beside it), never "no member runs"; a port that refuses is nothing there.
     */
    @Test
    void aPortThatTakesConnectionsButNeverAnswersTlsIsAnEtcdReached() throws Exception {
        try (ServerSocket silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            URI endpoint = URI.create("https://127.0.0.1:" + silent.getLocalPort());
            ClusterClient client = new ClusterClient(tlsClient(), List.of(endpoint), "/v3", Duration.ofSeconds(3));
            IOException e = assertThrows(IOException.class, client::members);
            assertInstanceOf(ClusterView.EtcdReached.class, e, e.toString());
        }
        int closed;
        try (ServerSocket gone = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            closed = gone.getLocalPort();
        }
        ClusterClient client = new ClusterClient(
                tlsClient(), List.of(URI.create("https://127.0.0.1:" + closed)), "/v3", Duration.ofSeconds(3));
        IOException e = assertThrows(IOException.class, client::members);
        assertFalse(e instanceof ClusterView.EtcdReached, e.toString());
    }

    /** A client that speaks TLS (the runner's is built from the member's certificates), as a member's would. */
    private static java.net.http.HttpClient tlsClient() {
        return java.net.http.HttpClient.newBuilder()
                .version(java.net.http.HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(2))
                .build();
    }

    @Test
    void thePrivateEtcdsClientRefusesHttpsBeforeSendingAnything() throws Exception {
        try (ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            GatewayClient gateway = new GatewayClient(
                    GatewayClient.newHttpClient(), URI.create("https://127.0.0.1:" + listener.getLocalPort()), "/v3");
            listener.setSoTimeout(1);
            assertThrows(Exception.class, () -> gateway.put("k", "v"));
            assertThrows(java.net.SocketTimeoutException.class, listener::accept, "no connection was made");
        }
    }
}
