package dev.etcdmigrate.it.nemesis;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.etcdmigrate.it.cluster.ClusterLab.Ack;
import dev.etcdmigrate.it.cluster.ClusterLab.Fail;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The nemesis history's outage reading, on histories written by hand: no etcd, no network. */
class NemesisHistoryTest {

    /** Acknowledged writes to m0 every 100 ms in [from, to). */
    private static List<Ack> acks(long from, long to) {
        List<Ack> acks = new ArrayList<>();
        for (long t = from; t < to; t += 100) acks.add(new Ack(0, "/k" + t, t, t));
        return acks;
    }

    private static NemesisHistory history(List<Ack> acks, List<Fail> fails, List<long[]> quiet) {
        return new NemesisHistory(3, List.of(), List.of(), List.of(), acks, fails, quiet, 100_000);
    }

    @Test
    void aHealthyMembersFailedWriteWithTheWriterRunningIsAnOutageOfTheRunners() {
        List<Ack> acks = acks(0, 10_000);
        acks.addAll(acks(40_000, 41_000));
        NemesisHistory history = history(acks, List.of(new Fail(2, "/k", 12_000)), List.of());

        assertEquals(
                1, history.outagesMadeByTheNemesis().size(), history.outages().toString());
    }

    @Test
    void theWritersPauseEndsTheOutageEvenWhenTheWriteInFlightFailsAfterThePauseBegan() {
        List<Ack> acks = acks(0, 10_000);
        acks.addAll(acks(40_000, 41_000));
        // told to stop at 11 s, the writer's last write (sent at 9 s) times out at 12 s
        NemesisHistory history =
                history(acks, List.of(new Fail(2, "/k", 12_000)), List.of(new long[] {11_000, 39_900}));

        assertTrue(history.outages().isEmpty(), history.outages().toString());
    }

    @Test
    void anOutageAfterThePauseBeginsWhenTheWriterStartsAgain() {
        List<Ack> acks = acks(0, 10_000);
        acks.addAll(acks(44_000, 45_000));
        // paused from 11 s to 40 s; the new writer's first write fails at 43 s
        NemesisHistory history =
                history(acks, List.of(new Fail(2, "/k", 43_000)), List.of(new long[] {11_000, 40_000}));

        assertTrue(history.outages().isEmpty(), history.outages().toString());
    }

    @Test
    void aLongOutageAfterThePauseIsStillTheRunners() {
        List<Ack> acks = acks(0, 10_000);
        acks.addAll(acks(70_000, 71_000));
        NemesisHistory history =
                history(acks, List.of(new Fail(2, "/k", 43_000)), List.of(new long[] {11_000, 40_000}));

        List<NemesisHistory.Outage> outages = history.outages();
        assertEquals(1, outages.size(), outages.toString());
        assertEquals(40_000, outages.getFirst().fromMillis());
        assertEquals(1, history.outagesMadeByTheNemesis().size(), outages.toString());
    }

    @Test
    void aPauseBeforeTheLastAcknowledgementDoesNotShortenALaterOutage() {
        List<Ack> acks = acks(0, 5_000);
        acks.addAll(acks(8_000, 10_000));
        acks.addAll(acks(40_000, 41_000));
        NemesisHistory history = history(acks, List.of(new Fail(2, "/k", 12_000)), List.of(new long[] {5_000, 8_000}));

        assertEquals(
                1, history.outagesMadeByTheNemesis().size(), history.outages().toString());
    }

    private static NemesisHistory.Moment moment(int host, String event, long at, String from, String to) {
        ObjectNode json = JsonNodeFactory.instance.objectNode();
        json.put("event", event);
        if (from != null) json.put("from", from).put("to", to);
        return new NemesisHistory.Moment(host, event, at, json);
    }

    /**
     * A restart at the same line, which settles a record its release left, runs no step: the member counts again once
     * it execs the target, not at a quorum write that never comes. Another member's record after that exec leaves a
     * quorum; one taken while the first is still down does not.
     */
    @Test
    void aRestartAtTheSameLineEndsWithItsExec() {
        List<NemesisHistory.Moment> moments = List.of(
                moment(1, "restart-record-taken", 50_000, "3.7", "3.7"),
                moment(2, "restart-record-taken", 53_000, "3.7", "3.7"),
                moment(2, "exec", 54_500, null, null),
                moment(1, "restart-record-released", 55_000, null, null),
                moment(1, "exec", 55_050, null, null),
                moment(0, "restart-record-taken", 55_700, "3.7", "3.7"));
        NemesisHistory history =
                new NemesisHistory(3, List.of(), moments, List.of(), acks(0, 60_000), List.of(), List.of(), 100_000);

        List<String> stops = history.stopsLeftAQuorum();
        assertEquals(1, stops.size(), stops.toString());
        assertTrue(stops.getFirst().startsWith("m2 took the record"), stops.toString());
    }
}
