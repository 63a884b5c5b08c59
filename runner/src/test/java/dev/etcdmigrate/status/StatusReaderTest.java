package dev.etcdmigrate.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.cluster.ClusterView.Record;
import dev.etcdmigrate.cluster.ClusterView.Status;
import dev.etcdmigrate.cluster.RecordValue;
import dev.etcdmigrate.cluster.RolloutRules;
import dev.etcdmigrate.cluster.RolloutRules.Decision;
import dev.etcdmigrate.cluster.RolloutRules.Leg;
import dev.etcdmigrate.cluster.RolloutRules.Self;
import dev.etcdmigrate.status.StatusReport.State;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** status's verdict over scripted cluster answers: done, rolling, stuck, and what a member waits for. */
class StatusReaderTest {

    private static final Instant NOW = Instant.parse("2026-11-27T12:00:00Z");

    private static Member up(String name, String version, long raftIndex, String job) {
        EtcdVersion v = EtcdVersion.parse(version);
        return Member.up(
                name,
                Status.of(
                        v,
                        raftIndex,
                        name.equals("m0"),
                        Optional.of(v.line()),
                        Optional.ofNullable(job).map(MinorLine::parse)));
    }

    private static Member up(String name, String version) {
        return up(name, version, 100, null);
    }

    private static Optional<MinorLine> line(String l) {
        return Optional.of(MinorLine.parse(l));
    }

    private static Optional<Record> record(String holder, String from, String to, Duration age) {
        return Optional.of(
                new Record(new RecordValue(holder, MinorLine.parse(from), MinorLine.parse(to), NOW.minus(age)), 42));
    }

    private static StatusReport judge(
            String target, List<Member> members, String clusterVersion, Optional<Record> record) {
        return new StatusReader(
                        null,
                        Optional.ofNullable(target).map(MinorLine::parse),
                        Duration.ofMinutes(10),
                        rev -> "remove " + rev)
                .judge(
                        List.of("http://m0:2379"),
                        members,
                        line(clusterVersion),
                        record,
                        // these records name no URL (as the release before wrote them): the member list's answer
                        record.flatMap(r -> RolloutRules.listedAnswer(r.value().holder(), members)),
                        NOW);
    }

    @Test
    void everyMemberOnTheTargetWithNothingHeldIsDone() {
        StatusReport r =
                judge("3.7", List.of(up("m0", "3.7.3"), up("m1", "3.7.3"), up("m2", "3.7.3")), "3.7", Optional.empty());
        assertEquals(State.DONE, r.state());
        assertEquals(0, StatusCommand.exitCode(r.state()));
        assertTrue(r.members().stream()
                .allMatch(m -> m.nextLeg().isEmpty() && m.waitsFor().isEmpty()));
    }

    @Test
    void membersOnTwoLinesAreRollingAndEachWaitsForWhatItsRulesSay() {
        List<Member> members = List.of(up("m0", "3.6.16"), up("m1", "3.5.35", 90, null), up("m2", "3.5.35"));
        StatusReport r = judge("3.7", members, "3.5", Optional.empty());
        assertEquals(State.ROLLING, r.state());
        assertEquals(4, StatusCommand.exitCode(r.state()));
        assertEquals(Optional.of("3.6 -> 3.7"), r.members().get(0).nextLeg());
        assertEquals(Optional.of("3.5 -> 3.6"), r.members().get(1).nextLeg());
        assertEquals(10, r.members().get(1).raftLag());
        // m0's next leg 3.6 -> 3.7 waits at the gate: the rules' own reason, word for word
        Decision.Wait gate = RolloutRules.gate(
                        new Leg(MinorLine.parse("3.6"), MinorLine.parse("3.7")),
                        new Self("m0", 3, false),
                        members,
                        line("3.5"))
                .orElseThrow();
        assertEquals(Optional.of(gate.why()), r.members().get(0).waitsFor());
    }

    @Test
    void aHeldRecordIsRollingAndOthersWaitForItsHolder() {
        // m0 took the record and checks the margin before it stops its member: the others wait for it
        List<Member> members = List.of(up("m0", "3.5.35"), up("m1", "3.5.35"), up("m2", "3.5.35"));
        Optional<Record> held = record("m0", "3.5", "3.6", Duration.ofSeconds(20));
        StatusReport r = judge("3.6", members, "3.5", held);
        assertEquals(State.ROLLING, r.state());
        assertEquals("m0", r.record().orElseThrow().holder());
        assertEquals(20, r.record().orElseThrow().age().toSeconds());
        assertEquals(Optional.empty(), r.record().orElseThrow().stale());
        Decision take = RolloutRules.take(
                new Leg(MinorLine.parse("3.5"), MinorLine.parse("3.6")),
                new Self("m1", 3, false),
                held,
                RolloutRules.listedAnswer("m0", members));
        assertEquals(
                Optional.of(((Decision.Wait) take).why()), r.members().get(1).waitsFor());
    }

    @Test
    void aRecordWhoseHolderServesPastItsLineIsStuckWithTheCommandThatRemovesIt() {
        List<Member> members = List.of(up("m0", "3.7.3"), up("m1", "3.7.3"), up("m2", "3.7.3"));
        StatusReport r = judge("3.7", members, "3.7", record("m1", "3.5", "3.6", Duration.ofSeconds(5)));
        assertEquals(State.STUCK, r.state());
        assertEquals(5, StatusCommand.exitCode(r.state()));
        assertTrue(r.record().orElseThrow().stale().isPresent());
        assertEquals(Optional.of("remove 42"), r.record().orElseThrow().removeCommand());
    }

    @Test
    void aRecordNamingWhereItsHolderServesIsJudgedByTheAnswerThere() {
        // the member list's URL for m1 shows 3.7 (e.g. another etcd there), m1's own URL does not answer: not over
        List<Member> members = List.of(up("m0", "3.6.16"), up("m1", "3.7.3"), up("m2", "3.6.16"));
        Optional<Record> held = Optional.of(new Record(
                new RecordValue(
                        "m1",
                        MinorLine.parse("3.6"),
                        MinorLine.parse("3.7"),
                        NOW.minusSeconds(5),
                        List.of("https://10.0.0.2:2379")),
                42));
        StatusReader reader = new StatusReader(null, line("3.7"), Duration.ofMinutes(10), rev -> "remove " + rev);
        StatusReport silent =
                reader.judge(List.of("http://m0:2379"), members, line("3.6"), held, Optional.empty(), NOW);
        assertEquals(State.ROLLING, silent.state());
        assertEquals(Optional.empty(), silent.record().orElseThrow().stale());
        assertEquals(
                List.of("https://10.0.0.2:2379"), silent.record().orElseThrow().serves());
        assertTrue(
                StatusJson.render(silent).contains("\"serves\":[\"https://10.0.0.2:2379\"]"),
                StatusJson.render(silent));
        assertTrue(
                StatusText.render(silent).contains("(it serves on https://10.0.0.2:2379)"), StatusText.render(silent));
        // its own URL answers at 3.7: over, and no runner is left waiting to take it over
        StatusReport over = reader.judge(
                List.of("http://m0:2379"),
                members,
                line("3.6"),
                held,
                members.get(1).status(),
                NOW);
        assertTrue(over.record().orElseThrow().stale().isPresent());
        // a record of the release before names none: the JSON leaves the field out
        StatusReport old = judge("3.7", members, "3.6", record("m1", "3.6", "3.7", Duration.ofSeconds(5)));
        assertTrue(!StatusJson.render(old).contains("\"serves\":"), StatusJson.render(old));
    }

    @Test
    void aRecordOfAMemberTheClusterNoLongerListsIsStuck() {
        List<Member> members = List.of(up("m0", "3.6.16"), up("m1", "3.6.16"), up("m2", "3.6.16"));
        StatusReport r = judge("3.6", members, "3.6", record("old", "3.5", "3.6", Duration.ofSeconds(5)));
        assertEquals(State.STUCK, r.state());
        assertTrue(r.record().orElseThrow().stale().isPresent());
    }

    @Test
    void aRecordHeldLongerThanTheThresholdIsStuckButNotStale() {
        List<Member> members = List.of(up("m0", "3.5.35"), up("m1", "3.5.35"), up("m2", "3.5.35"));
        StatusReport r = judge("3.6", members, "3.5", record("m0", "3.5", "3.6", Duration.ofMinutes(11)));
        assertEquals(State.STUCK, r.state());
        assertEquals(Optional.empty(), r.record().orElseThrow().stale());
        assertEquals(Optional.empty(), r.record().orElseThrow().removeCommand());
    }

    @Test
    void aDowngradeJobIsRollingEvenWithEveryMemberOnOneLine() {
        List<Member> members =
                List.of(up("m0", "3.7.3", 100, "3.6"), up("m1", "3.7.3", 100, "3.6"), up("m2", "3.7.3", 100, "3.6"));
        StatusReport r = judge(null, members, "3.6", Optional.empty());
        assertEquals(State.ROLLING, r.state());
        assertEquals(Optional.of("3.6"), r.downgradeJob());
    }

    @Test
    void theJsonLeavesOutWhatIsAbsentAndNamesTheState() {
        StatusReport r =
                judge("3.7", List.of(up("m0", "3.7.3"), Member.down("m1", "refused")), "3.7", Optional.empty());
        String json = StatusJson.render(r);
        assertTrue(json.contains("\"state\":\"rolling\""), json);
        assertTrue(!json.contains("\"etcdVersion\":null"), json);
        assertTrue(StatusText.render(r).lines().noneMatch(l -> l.contains("null")), StatusText.render(r));
    }
}
