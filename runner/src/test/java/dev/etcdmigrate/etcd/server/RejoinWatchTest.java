package dev.etcdmigrate.etcd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The verdicts a rejoining member's output leads to, on a hand-driven clock (lines as etcd 3.6 logs them). */
class RejoinWatchTest {

    private static final Duration PATIENCE = Duration.ofSeconds(5);
    private static final Duration PEERS_DOWN = Duration.ofSeconds(30);
    private static final String UNKNOWN_CA =
            "{\"level\":\"warn\",\"msg\":\"prober detected unhealthy status\",\"error\":\"Get"
                    + " \\\"https://10.7.0.2:2380/version\\\": tls: failed to verify certificate: x509: certificate signed by unknown authority\"}";
    private static final String REFUSED =
            "{\"level\":\"warn\",\"msg\":\"prober detected unhealthy status\",\"error\":\"dial tcp"
                    + " 10.7.0.3:2380: connect: connection refused\"}";
    private static final String ELECTED =
            "{\"level\":\"info\",\"msg\":\"raft.node: 8e9e05c52164694d elected leader 91bc3c398fb3c146 at term 3\"}";
    private static final String BIND =
            "{\"level\":\"fatal\",\"msg\":\"discovery failed\",\"error\":\"listen tcp 10.9.9.9:2380: bind:"
                    + " cannot assign requested address\"}";

    private final AtomicLong now = new AtomicLong();
    private final AtomicInteger verdicts = new AtomicInteger();
    private final RejoinWatch watch =
            new RejoinWatch(PATIENCE, PEERS_DOWN, now::get).onVerdict(verdicts::incrementAndGet);

    private void after(Duration d) {
        now.addAndGet(d.toNanos());
    }

    @Test
    void aTlsFailureWithoutALeaderIsAVerdictOncePatienceIsOut() {
        watch.accept(UNKNOWN_CA);
        assertEquals(Optional.empty(), watch.verdict(), "a leader may still be heard");
        after(PATIENCE);
        watch.accept(UNKNOWN_CA);
        String why = watch.verdict().orElseThrow();
        assertTrue(
                why.contains("no raft leader after 5 s")
                        && why.contains("not signed by the CA")
                        && why.contains("x509"),
                why);
        assertEquals(1, verdicts.get(), "the action runs once");
        watch.accept(UNKNOWN_CA);
        assertEquals(1, verdicts.get());
    }

    @Test
    void aLeaderHeardMeansTheMemberIsIn() {
        watch.accept(REFUSED); // one peer down, the other two form the quorum
        watch.accept(ELECTED);
        after(PATIENCE.multipliedBy(3));
        watch.accept(REFUSED);
        assertEquals(Optional.empty(), watch.verdict());
        assertEquals(0, verdicts.get());
    }

    @Test
    void peersThatRefuseAndNoLeaderMeanNoQuorum() {
        watch.accept(REFUSED);
        after(PATIENCE);
        assertEquals(Optional.empty(), watch.verdict(), "peers that do not run may be restarting with this member");
        after(PEERS_DOWN.minus(PATIENCE).minusMillis(1));
        assertEquals(Optional.empty(), watch.verdict());
        after(Duration.ofMillis(1));
        assertTrue(
                watch.verdict().orElseThrow().contains("too few members are running for a quorum"),
                watch.verdict().get());
    }

    @Test
    void aLostLeaderStartsThePatienceAgain() {
        watch.accept(ELECTED);
        after(PATIENCE.multipliedBy(2));
        watch.accept("raft.node: 8e9e05c52164694d lost leader 91bc3c398fb3c146 at term 4");
        watch.accept(REFUSED);
        assertEquals(Optional.empty(), watch.verdict());
        after(PEERS_DOWN);
        assertTrue(watch.verdict().isPresent());
    }

    @Test
    void aPeerAddressOfAnotherHostIsAVerdictAtOnce() {
        watch.accept(BIND);
        String why = watch.verdict().orElseThrow();
        assertTrue(why.contains("10.9.9.9:2380"), why); // the address named
        assertEquals(1, verdicts.get());
    }

    @Test
    void theMostTellingSymptomIsReported() {
        watch.accept(REFUSED);
        watch.accept(UNKNOWN_CA);
        watch.accept(REFUSED);
        after(PATIENCE);
        assertTrue(
                watch.verdict().orElseThrow().contains("x509"), watch.verdict().get());
    }

    @Test
    void noSymptomNoVerdict() {
        after(PATIENCE.multipliedBy(10));
        watch.accept("{\"level\":\"info\",\"msg\":\"starting etcd\"}");
        assertEquals(Optional.empty(), watch.verdict(), "a slow start alone is left to --start-timeout");
    }

    @Test
    void aDisabledWatchNeverJudges() {
        RejoinWatch off = RejoinWatch.disabled();
        off.accept(BIND);
        assertEquals(Optional.empty(), off.verdict());
    }
}
