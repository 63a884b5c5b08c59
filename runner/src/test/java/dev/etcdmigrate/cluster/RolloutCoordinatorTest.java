package dev.etcdmigrate.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.cluster.ClusterView.EtcdReached;
import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.cluster.ClusterView.Record;
import dev.etcdmigrate.cluster.ClusterView.Status;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.RolloutEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * The restart rules over a scripted cluster: each pause of the coordinator lets the script move the cluster
 * on one tick, so a test states what the cluster does while a runner waits and what the runner may do.
 */
class RolloutCoordinatorTest {

    private static final MinorLine L35 = MinorLine.parse("3.5");
    private static final MinorLine L36 = MinorLine.parse("3.6");
    private static final MinorLine L37 = MinorLine.parse("3.7");

    /** A cluster of named members and one record, its revision counting writes as etcd's would. */
    static final class FakeCluster implements ClusterView {
        final Map<String, Optional<Status>> members = new LinkedHashMap<>();
        Optional<MinorLine> clusterVersion = Optional.empty();
        Optional<Record> record = Optional.empty();
        long revision = 100;
        int ticks;
        final List<Consumer<FakeCluster>> script = new ArrayList<>();
        final List<String> writes = new ArrayList<>();
        /** How many reads of the members fail as etcd's client does when no member answers. */
        int unanswered;
        /** How many reads of the members fail with an etcd there (a 503 "leader changed", an answer too late). */
        int reachedUnanswered;
        /** How many reads of the record fail so (e.g. 503 "leader changed" on every member tried). */
        int unansweredRecords;
        /** How many reads of the record miss one another runner is creating right then. */
        int staleRecordReads;
        /** How many creations commit and then lose their answer (the client sees an error). */
        int lostCreateAnswers;
        /**
         * What a member answers on its own client URLs (the ones a record names), where it differs from what the member
         * list's URL for it answered (there, e.g., another etcd on one host); unset: the same answer.
         */
        final Map<String, Optional<Status>> ownUrls = new LinkedHashMap<>();
        /** The statusAt reads: member and URLs. */
        final List<String> statusReads = new ArrayList<>();
        /** Members cut from their peers: they answer locally, but no linearizable read is served through them. */
        final java.util.Set<String> cut = new java.util.HashSet<>();
        /** The leadership moves asked for, by target. */
        final List<String> moves = new ArrayList<>();

        FakeCluster member(String name, String version, long raftIndex) {
            members.put(name, Optional.of(status(version, raftIndex, Optional.empty())));
            return this;
        }

        FakeCluster down(String name) {
            members.put(name, Optional.empty());
            return this;
        }

        static Status status(String version, long raftIndex, Optional<MinorLine> job) {
            return Status.of(EtcdVersion.parse(version), raftIndex, false, Optional.empty(), job);
        }

        void tick() {
            ticks++;
            if (ticks > 200) throw new AssertionError("the coordinator never went on; writes: " + writes);
            if (!script.isEmpty()) script.removeFirst().accept(this);
        }

        @Override
        public List<Member> members() throws IOException {
            if (unanswered > 0) {
                unanswered--;
                throw new IOException("no member answered");
            }
            if (reachedUnanswered > 0) {
                reachedUnanswered--;
                throw new EtcdReached("no member answered (last: 503 leader changed)", null);
            }
            List<Member> list = new ArrayList<>();
            members.forEach((n, s) -> list.add(s.isPresent() ? Member.up(n, s.get()) : Member.down(n, "refused")));
            return list;
        }

        @Override
        public Optional<MinorLine> clusterVersion() {
            return clusterVersion;
        }

        @Override
        public Optional<Record> record() throws IOException {
            if (unansweredRecords > 0) {
                unansweredRecords--;
                throw new IOException("no member answered (last: 503 leader changed)");
            }
            if (staleRecordReads > 0) {
                staleRecordReads--;
                return Optional.empty();
            }
            return record;
        }

        @Override
        public Optional<Record> create(RecordValue value) throws IOException {
            if (record.isPresent()) return Optional.empty();
            record = Optional.of(new Record(value, ++revision));
            writes.add("create " + value.holder());
            if (lostCreateAnswers > 0) {
                lostCreateAnswers--;
                throw new IOException("the answer to the creation was lost");
            }
            return record;
        }

        @Override
        public boolean delete(Record r) {
            if (record.isEmpty() || record.get().modRevision() != r.modRevision()) return false;
            record = Optional.empty();
            revision++;
            writes.add("delete " + r.value().holder());
            return true;
        }

        @Override
        public boolean holds(Record r) {
            return record.isPresent() && record.get().modRevision() == r.modRevision();
        }

        @Override
        public Optional<String> linearizableThrough(String member) {
            if (members.getOrDefault(member, Optional.empty()).isEmpty()) return Optional.of("refused");
            return cut.contains(member) ? Optional.of("context deadline exceeded") : Optional.empty();
        }

        @Override
        public void moveLeader(String to) {
            moves.add(to);
        }

        @Override
        public Optional<Status> statusAt(String member, List<String> urls) {
            statusReads.add(member + " " + urls);
            return ownUrls.containsKey(member) ? ownUrls.get(member) : members.getOrDefault(member, Optional.empty());
        }
    }

    private final List<Event> events = new ArrayList<>();

    /** What the coordinator noted, in order (the runner's .etcd-migrate/restart-record). */
    private final List<String> notes = new ArrayList<>();

    /** Each runner's note (its .etcd-migrate/restart-record), by member name. */
    private final Map<String, Note> stored = new LinkedHashMap<>();

    private NoteStore store(String self) {
        return new NoteStore() {
            @Override
            public Note read() {
                return stored.getOrDefault(self, Note.NONE);
            }

            @Override
            public void write(Note note) {
                stored.put(self, note);
                notes.add(
                        switch (note) {
                            case Note.None n -> "none";
                            case Note.Taking t -> "may hold";
                            case Note.Holds h -> "holds " + h.revision();
                        });
            }
        };
    }

    static RolloutRules.Leg leg(MinorLine from, MinorLine to) {
        return new RolloutRules.Leg(from, to);
    }

    private RolloutCoordinator coordinator(FakeCluster cluster, String self, int members) {
        return coordinator(cluster, self, members, RuleSet.REAL);
    }

    private RolloutCoordinator coordinator(FakeCluster cluster, String self, int members, RuleSet rules) {
        Log log = Log.silent();
        log.subscribe(events::add);
        return new RolloutCoordinator(
                cluster,
                store(self),
                self,
                List.of("http://" + self + ":2379"),
                members,
                RolloutPolicy.DEFAULT,
                new RolloutCoordinator.Ticker() {
                    @Override
                    public Instant now() {
                        return Instant.EPOCH;
                    }

                    @Override
                    public void pause() {
                        cluster.tick();
                    }
                },
                log,
                rules);
    }

    /** A script tick on which the coordinator releases the record (the holder's member runs the new line). */
    private static Consumer<FakeCluster> releases(RolloutCoordinator coordinator, Record record) {
        return c -> {
            try {
                coordinator.release(record);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        };
    }

    private <T extends Event> List<T> events(Class<T> type) {
        return events.stream().filter(type::isInstance).map(type::cast).toList();
    }

    @Test
    void aHealthyClusterOnTheLineLetsTheMemberRestartAtOnce() throws Exception {
        FakeCluster cluster = new FakeCluster()
                .member("a", "3.6.16", 500)
                .member("b", "3.6.16", 500)
                .member("c", "3.6.16", 500);
        cluster.clusterVersion = Optional.of(L36);
        Record held = coordinator(cluster, "a", 3).beforeRestart(leg(L36, L37));
        assertEquals("a", held.value().holder());
        assertEquals(L37, held.value().to());
        assertEquals(0, cluster.ticks, "no wait");
        assertEquals(1, events(RolloutEvent.RestartRecordTaken.class).size());
    }

    /**
     * HaRolloutIT's kill trials: a runner killed holding the record starts again while the cluster elects a leader;
     * it reads its record again after a pause instead of exiting 1 with its member stopped.
     */
    @Test
    void aHolderStartedAgainReadsItsRecordAgainWhileNoMemberAnswers() throws Exception {
        FakeCluster cluster = new FakeCluster();
        cluster.record = Optional.of(new Record(new RecordValue("a", L36, L37, Instant.EPOCH), 7));
        cluster.unansweredRecords = 2;
        assertEquals(cluster.record, coordinator(cluster, "a", 3).ownRecord(60));
        assertEquals(2, cluster.ticks, "one pause per unanswered read");
        cluster.unansweredRecords = 3;
        assertThrows(IOException.class, () -> coordinator(cluster, "a", 3).ownRecord(3), "at most that many reads");
    }

    @Test
    void aClusterThatDoesNotAnswerYetIsWaitedForNotAFailure() throws Exception {
        // every manifest edited at once: this member serves first, before any member (itself included) answers
        FakeCluster cluster = new FakeCluster()
                .member("a", "3.6.16", 500)
                .member("b", "3.6.16", 500)
                .member("c", "3.6.16", 500);
        cluster.clusterVersion = Optional.of(L36);
        cluster.unanswered = 3;
        Record held = coordinator(cluster, "a", 3).beforeRestart(leg(L36, L37));
        assertEquals("a", held.value().holder());
        assertEquals(3, cluster.ticks, "one pause per unanswered read");
        assertEquals(List.of("create a"), cluster.writes, "nothing written while nobody answered");
        List<RolloutEvent.RolloutWaiting> waits = events(RolloutEvent.RolloutWaiting.class);
        assertEquals(1, waits.size(), "one event for the same reason: " + waits);
        assertTrue(
                waits.getFirst().why().contains("no member answered"),
                waits.getFirst().why());
    }

    @Test
    void theUpgradeGateWaitsUntilEveryMemberRunsTheLineAndTheClusterVersionFollows() throws Exception {
        FakeCluster cluster = new FakeCluster()
                .member("a", "3.6.16", 500)
                .member("b", "3.5.35", 500)
                .member("c", "3.5.35", 500);
        cluster.clusterVersion = Optional.of(L35);
        cluster.script.add(c -> c.member("b", "3.6.16", 510));
        cluster.script.add(c -> c.member("c", "3.6.16", 520));
        cluster.script.add(c -> {}); // every member on 3.6, the cluster version not yet
        cluster.script.add(c -> c.clusterVersion = Optional.of(L36));
        coordinator(cluster, "a", 3).beforeRestart(leg(L36, L37));
        assertEquals(4, cluster.ticks);
        assertTrue(cluster.writes.equals(List.of("create a")), "the record only after the gate: " + cluster.writes);
        List<RolloutEvent.RolloutWaiting> waits = events(RolloutEvent.RolloutWaiting.class);
        assertEquals(List.of("b", "c"), waits.getFirst().members(), "the lagging members are named");
        assertTrue(
                waits.getFirst().why().contains("b runs 3.5.35"),
                waits.getFirst().why());
        assertTrue(
                waits.getLast().why().contains("cluster version is 3.5"),
                waits.getLast().why());
    }

    @Test
    void aMemberAlreadyOnTheNextLineDoesNotHoldTheGate() throws Exception {
        FakeCluster cluster = new FakeCluster()
                .member("a", "3.6.16", 500)
                .member("b", "3.7.3", 500)
                .member("c", "3.6.16", 500);
        cluster.clusterVersion = Optional.of(L36);
        coordinator(cluster, "a", 3).beforeRestart(leg(L36, L37));
        assertEquals(0, cluster.ticks);
    }

    @Test
    void neverRestartsWhileAnotherMemberIsDownMissingOrBehind() throws Exception {
        FakeCluster cluster = new FakeCluster()
                .member("a", "3.6.16", 5000)
                .member("b", "3.6.16", 5000)
                .member("c", "3.6.16", 5000);
        cluster.clusterVersion = Optional.of(L36);
        // after the gate opened: c goes down, comes back behind, then catches up
        RolloutCoordinator coordinator = coordinator(cluster, "a", 3);
        // c is down when the record is taken: the gate sees it lagging first (no answer)
        cluster.down("c");
        cluster.script.clear();
        cluster.script.add(c -> c.member("c", "3.6.16", 3000)); // back, 2000 entries behind
        cluster.script.add(c -> c.member("c", "3.6.16", 4990)); // caught up
        Record held = coordinator.beforeRestart(leg(L36, L37));
        assertEquals("a", held.value().holder());
        assertEquals(2, cluster.ticks);
        List<RolloutEvent.RolloutWaiting> waits = events(RolloutEvent.RolloutWaiting.class);
        assertTrue(
                waits.getFirst().why().contains("c does not answer"),
                waits.getFirst().why());
        assertTrue(
                waits.getLast().why().contains("raft entries behind"),
                waits.getLast().why());
        assertEquals(List.of("c"), waits.getLast().members());
        assertEquals(List.of("create a"), cluster.writes, "the record was kept while waiting, taken once");
    }

    @Test
    void aMissingMemberIsNamedAndNothingRestartsUntilItIsBack() throws Exception {
        FakeCluster cluster = new FakeCluster().member("a", "3.6.16", 500).member("b", "3.6.16", 500);
        cluster.clusterVersion = Optional.of(L36);
        cluster.script.add(c -> {});
        cluster.script.add(c -> c.member("c", "3.6.16", 500));
        coordinator(cluster, "a", 3).beforeRestart(leg(L36, L37));
        assertEquals(2, cluster.ticks);
        assertTrue(events(RolloutEvent.RolloutWaiting.class).getFirst().why().contains("2 of 3 members"));
        assertTrue(cluster.writes.equals(List.of("create a")));
    }

    @Test
    void oneRecordAtATime_theSecondRunnerWaitsUntilTheFirstReleases() throws Exception {
        FakeCluster cluster = new FakeCluster()
                .member("a", "3.6.16", 500)
                .member("b", "3.6.16", 500)
                .member("c", "3.6.16", 500);
        cluster.clusterVersion = Optional.of(L36);
        Record a = coordinator(cluster, "a", 3).beforeRestart(leg(L36, L37));
        // b waits while a holds it and a's member is out, then a's member runs 3.7 and a releases
        RolloutCoordinator aCoordinator = coordinator(cluster, "a", 3);
        cluster.script.add(c -> c.down("a"));
        cluster.script.add(c -> c.member("a", "3.7.3", 520));
        cluster.script.add(releases(aCoordinator, a));
        Record b = coordinator(cluster, "b", 3).beforeRestart(leg(L36, L37));
        assertEquals("b", b.value().holder());
        assertEquals(
                List.of("create a", "delete a", "create b"),
                cluster.writes.subList(0, 3),
                "b created its record only after a's was gone: " + cluster.writes);
        assertTrue(events(RolloutEvent.RolloutWaiting.class).stream()
                .anyMatch(w -> w.why().contains("member a holds the restart record")));
    }

    @Test
    void aHolderThatExecdOrCrashedIsReleasedOnceItsMemberRunsTheNamedLine() throws Exception {
        FakeCluster cluster = new FakeCluster()
                .member("a", "3.6.16", 500)
                .member("b", "3.6.16", 500)
                .member("c", "3.6.16", 500);
        cluster.clusterVersion = Optional.of(L36);
        coordinator(cluster, "a", 3).beforeRestart(leg(L36, L37)); // a's runner then dies, never releasing
        cluster.script.add(c -> c.down("a"));
        cluster.script.add(c -> c.member("a", "3.6.16", 500)); // still the old line: not over
        cluster.script.add(c -> c.member("a", "3.7.3", 600)); // its member answers at 3.7: over
        Record b = coordinator(cluster, "b", 3).beforeRestart(leg(L36, L37));
        assertEquals("b", b.value().holder());
        List<RolloutEvent.RestartRecordTakenOver> over = events(RolloutEvent.RestartRecordTakenOver.class);
        assertEquals(1, over.size());
        assertEquals("a", over.getFirst().holder());
        assertEquals(List.of("create a", "delete a", "create b"), cluster.writes);
    }

    @Test
    void aRestartedHolderRecognisesItsOwnRecordAndCarriesOn() throws Exception {
        FakeCluster cluster = new FakeCluster()
                .member("a", "3.6.16", 500)
                .member("b", "3.6.16", 500)
                .member("c", "3.6.16", 500);
        cluster.clusterVersion = Optional.of(L36);
        Record first = coordinator(cluster, "a", 3).beforeRestart(leg(L36, L37));
        // a's runner is killed and starts again: it finds its record, finishes the leg, releases it
        RolloutCoordinator again = coordinator(cluster, "a", 3);
        assertEquals(Optional.of(first), again.ownRecord(1));
        assertEquals(Optional.empty(), coordinator(cluster, "b", 3).ownRecord(1));
        again.release(again.ownRecord(1).orElseThrow());
        assertEquals(Optional.empty(), cluster.record, "no record left");
        // ... or, stopped before its member stopped, it takes the same record again without a second create
        Record taken = coordinator(cluster, "a", 3).beforeRestart(leg(L36, L37));
        RolloutCoordinator third = coordinator(cluster, "a", 3);
        assertEquals(taken, third.beforeRestart(leg(L36, L37)));
        assertEquals(List.of("create a", "delete a", "create a"), cluster.writes);
    }

    /**
     * The runner notes that it may hold the record before creating it, so that a run killed right after the creation
     * (before it could note the revision) still looks for it when it starts again; then the record it holds, and
     * nothing once it holds none (another runner was quicker, or a peer took it over).
     */
    @Test
    void theRecordIsNotedBeforeItIsCreatedAndDroppedWhenNotHeld() throws Exception {
        FakeCluster cluster = new FakeCluster()
                .member("a", "3.6.16", 500)
                .member("b", "3.6.16", 500)
                .member("c", "3.6.16", 500);
        cluster.clusterVersion = Optional.of(L36);
        Record a = coordinator(cluster, "a", 3).beforeRestart(leg(L36, L37));
        assertEquals(List.of("may hold", "holds " + a.modRevision()), notes);

        // b read no record, a's was created meanwhile: b's creation fails, it notes none, then waits for a
        notes.clear();
        cluster.staleRecordReads = 1;
        RolloutCoordinator aAgain = coordinator(cluster, "a", 3);
        cluster.script.add(releases(aAgain, a));
        Record b = coordinator(cluster, "b", 3).beforeRestart(leg(L36, L37));
        // b: may hold, none (a was quicker); a's release drops a's note; b: may hold, holds
        assertEquals(List.of("may hold", "none", "none", "may hold", "holds " + b.modRevision()), notes);
        coordinator(cluster, "b", 3).release(b);

        // c's creation commits but its answer is lost: the next pass finds c's own record and notes it
        notes.clear();
        cluster.lostCreateAnswers = 1;
        Record c = coordinator(cluster, "c", 3).beforeRestart(leg(L36, L37));
        assertEquals("c", c.value().holder());
        assertEquals(List.of("may hold", "holds " + c.modRevision()), notes);
        assertEquals(List.of("create a", "delete a", "create b", "delete b", "create c"), cluster.writes);
    }

    @Test
    void aRecordTakenOverWhileWaitingIsTakenAgainNotAssumed() throws Exception {
        FakeCluster cluster = new FakeCluster()
                .member("a", "3.6.16", 5000)
                .member("b", "3.6.16", 5000)
                .member("c", "3.6.16", 5000);
        cluster.clusterVersion = Optional.of(L36);
        RolloutCoordinator a = coordinator(cluster, "a", 3);
        cluster.member("c", "3.6.16", 1); // answers, far behind: the gate is open, the quorum margin is not
        cluster.script.add(c -> {
            c.member("c", "3.6.16", 5000);
            c.delete(c.record.orElseThrow()); // e.g. a peer's runner judged it over
        });
        Record again = a.beforeRestart(leg(L36, L37));
        assertEquals(List.of("create a", "delete a", "create a"), cluster.writes);
        assertEquals(List.of("may hold", "holds 101", "may hold", "holds " + again.modRevision()), notes);
    }

    @Test
    void aDowngradeWaitsForThePreviousJobToEndAndAcceptsTheJobToItsOwnTarget() throws Exception {
        FakeCluster cluster = new FakeCluster()
                .member("a", "3.6.16", 500)
                .member("b", "3.6.16", 500)
                .member("c", "3.6.16", 500);
        cluster.members.put("c", Optional.of(FakeCluster.status("3.6.16", 500, Optional.of(L36))));
        cluster.clusterVersion = Optional.of(L36);
        cluster.script.add(c -> c.member("c", "3.6.16", 500)); // the leader ended the job to 3.6
        coordinator(cluster, "a", 3).beforeRestart(leg(L36, L35));
        assertEquals(1, cluster.ticks);
        assertTrue(events(RolloutEvent.RolloutWaiting.class).getFirst().why().contains("downgrade job to 3.6"));
        // a job to 3.5 (another runner's leg enabled it) is this leg's own: no wait
        cluster.record = Optional.empty();
        cluster.clusterVersion = Optional.of(L35);
        cluster.members.put("c", Optional.of(FakeCluster.status("3.5.35", 500, Optional.of(L35))));
        cluster.ticks = 0;
        coordinator(cluster, "b", 3).beforeRestart(leg(L36, L35));
        assertEquals(0, cluster.ticks);
    }

    /**
     * Found on real etcd (3.4.23 -> 3.7.3 on one host): m1's release never reached the cluster, m1 went on to 3.7 and
     * exec'd it, so the record still named m1's leg 3.5 -> 3.6; the old take-over waited for m1 to answer at 3.6,
     * which it never does again (m0 and m2 waited 15 minutes). A holder past the record's line is done.
     */
    @Test
    void aHolderThatMovedPastTheRecordsLineIsTakenOver() throws Exception {
        FakeCluster cluster = new FakeCluster()
                .member("m0", "3.6.16", 500)
                .member("m1", "3.7.3", 500)
                .member("m2", "3.6.16", 500);
        cluster.clusterVersion = Optional.of(L36);
        cluster.record = Optional.of(new Record(new RecordValue("m1", L35, L36, Instant.EPOCH), 42));
        Record held = coordinator(cluster, "m0", 3).beforeRestart(leg(L36, L37));
        assertEquals("m0", held.value().holder());
        assertEquals(List.of("delete m1", "create m0"), cluster.writes);
        assertEquals(1, events(RolloutEvent.RestartRecordTakenOver.class).size());
        // a holder still at the record's start has not restarted (or not come back): never taken over
        cluster.writes.clear();
        cluster.record = Optional.of(new Record(new RecordValue("m1", L36, L37, Instant.EPOCH), 50));
        cluster.member("m1", "3.6.16", 500);
        cluster.script.add(c -> c.down("m1"));
        cluster.script.add(c -> c.member("m1", "3.7.3", 600));
        coordinator(cluster, "m2", 3).beforeRestart(leg(L36, L37));
        assertEquals(List.of("delete m1", "create m2"), cluster.writes);
        assertEquals(2, cluster.ticks);
        // downgrades: past is older
        assertTrue(RolloutRules.reached(L37, L36, L35));
        assertTrue(!RolloutRules.reached(L37, L36, L37));
    }

    /**
     * The take-over reads the holder where its record says it serves (its own client URLs); a record of the release
     * before names none and is read on the member list's URL, as that release did. Each row: what the member list's
     * URL for m1 answered, what m1's own URLs answer, then whether its restart 3.5 -> 3.6 is over with the URLs named
     * and without.
     */
    @Test
    void theTakeOverReadsTheHolderWhereItsRecordSaysItServes() throws Exception {
        List<String> urls = List.of("https://10.0.0.1:2379", "https://m1.example:2379");
        Record named = new Record(new RecordValue("m1", L35, L36, Instant.EPOCH, urls), 42);
        Record unnamed = new Record(new RecordValue("m1", L35, L36, Instant.EPOCH), 42);
        String[][] table = {
            // listed, own URLs, done (URLs named), done (none named)
            {"3.6.16", null, "false", "true"}, // a step's private etcd on the listed URL (one host, the old wiring)
            {"3.6.16", "3.6.16", "true", "true"},
            {"3.7.3", "3.7.3", "true", "true"}, // past the record's line
            {"3.5.35", "3.5.35", "false", "false"}, // not restarted yet
            {null, "3.6.16", "true", "false"}, // the listed URL does not answer, its own does
            {null, null, "false", "false"},
        };
        for (String[] row : table) {
            FakeCluster cluster = new FakeCluster().member("m0", "3.6.16", 500);
            if (row[0] == null) cluster.down("m1");
            else cluster.member("m1", row[0], 500);
            cluster.ownUrls.put(
                    "m1", Optional.ofNullable(row[1]).map(v -> FakeCluster.status(v, 500, Optional.empty())));
            List<Member> members = cluster.members();
            String what = java.util.Arrays.toString(row);
            assertEquals(
                    Boolean.parseBoolean(row[2]),
                    RolloutRules.holderDone(named, RolloutRules.holderAnswer(cluster, named, members)),
                    "URLs named: " + what);
            assertEquals(
                    Boolean.parseBoolean(row[3]),
                    RolloutRules.holderDone(unnamed, RolloutRules.holderAnswer(cluster, unnamed, members)),
                    "none named: " + what);
            assertEquals(List.of("m1 " + urls), cluster.statusReads, what); // only the record naming URLs is read there
        }
        // the record is written with the URLs and read back; one without them (the release before) still reads
        RecordValue value = named.value();
        assertTrue(value.toJson().contains("\"serves\":[\"https://10.0.0.1:2379\",\"https://m1.example:2379\"]"));
        assertEquals(value, RecordValue.parse(value.toJson()));
        assertEquals(
                unnamed.value(),
                RecordValue.parse(
                        "{\"holder\":\"m1\",\"from\":\"3.5\",\"to\":\"3.6\",\"at\":\"1970-01-01T00:00:00Z\"}"));
        assertTrue(!unnamed.value().toJson().contains("serves"));
        // a record of one line is never taken over: nothing is read
        FakeCluster cluster = new FakeCluster().member("m1", "3.6.16", 500);
        Record settling = new Record(new RecordValue("m1", L36, L36, Instant.EPOCH, urls), 43);
        assertTrue(!RolloutRules.holderDone(settling, RolloutRules.holderAnswer(cluster, settling, cluster.members())));
        assertEquals(List.of(), cluster.statusReads);
        // through the coordinator: m1's listed URL answers at 3.6 but its own does not yet, so m0 waits; once m1
        // serves there, m0 takes the record over
        FakeCluster waiting = new FakeCluster()
                .member("m0", "3.6.16", 500)
                .member("m1", "3.6.16", 500)
                .member("m2", "3.6.16", 500);
        waiting.clusterVersion = Optional.of(L36);
        waiting.record = Optional.of(new Record(new RecordValue("m1", L35, L36, Instant.EPOCH, urls), 42));
        waiting.ownUrls.put("m1", Optional.empty());
        waiting.script.add(c -> c.ownUrls.remove("m1"));
        Record held = coordinator(waiting, "m0", 3).beforeRestart(leg(L36, L37));
        assertEquals("m0", held.value().holder());
        assertEquals(List.of("http://m0:2379"), held.value().serves());
        assertEquals(List.of("delete m1", "create m0"), waiting.writes);
        assertEquals(1, waiting.ticks);
    }

    /**
     * A record of this runner's for an earlier leg (its release did not reach the cluster) is not this leg's: reused,
     * a peer would take it over (its member answers at the named line) while this runner stops its member under it.
     * It is released and taken afresh.
     */
    @Test
    void anOwnRecordOfAnEarlierLegIsReleasedNotReused() throws Exception {
        FakeCluster cluster = new FakeCluster()
                .member("a", "3.6.16", 500)
                .member("b", "3.6.16", 500)
                .member("c", "3.6.16", 500);
        cluster.clusterVersion = Optional.of(L36);
        cluster.record = Optional.of(new Record(new RecordValue("a", L35, L36, Instant.EPOCH), 42));
        Record held = coordinator(cluster, "a", 3).beforeRestart(leg(L36, L37));
        assertEquals(L36, held.value().from());
        assertEquals(List.of("delete a", "create a"), cluster.writes);
    }

    /**
     * Found on real etcd: a runner started again between legs plans one minor (3.6 -> 3.7) while the others still run
     * 3.5; it must not run that leg at once. It serves 3.6 while it waits (the others' gates wait for it to answer),
     * and runs the leg under the record once the gate opens.
     */
    @Test
    void aFirstLegWaitsForTheGateWhenOtherMembersAnswer() throws Exception {
        FakeCluster cluster =
                new FakeCluster().down("m1").member("m0", "3.5.35", 500).member("m2", "3.5.35", 500);
        cluster.clusterVersion = Optional.of(L35);
        List<String> did = new ArrayList<>();
        cluster.script.add(c -> c.member("m1", "3.6.16", 500)); // serving 3.6 now
        cluster.script.add(c -> c.member("m0", "3.6.16", 500));
        cluster.script.add(c -> c.member("m2", "3.6.16", 500));
        cluster.script.add(c -> c.clusterVersion = Optional.of(L36));
        coordinator(cluster, "m1", 3)
                .run(
                        List.of(leg(L36, L37)),
                        i -> did.add("leg " + i + " with " + cluster.writes),
                        reached -> {
                            did.add("serve " + reached);
                            return Optional.of(new RolloutCoordinator.Serving() {
                                @Override
                                public void requireAlive() {}

                                @Override
                                public void stop() {
                                    did.add("stop");
                                }

                                @Override
                                public void close() {}
                            });
                        },
                        Optional.of(L35),
                        false);
        assertEquals(List.of("serve -1", "stop", "leg 0 with [create m1]"), did);
        assertEquals(List.of("create m1", "delete m1"), cluster.writes);
        // every member edited at once: nobody answers, the first leg runs at once as before
        did.clear();
        cluster.unanswered = 1;
        coordinator(cluster, "m1", 3)
                .run(
                        List.of(leg(L36, L37)),
                        i -> did.add("leg " + i),
                        reached -> Optional.empty(),
                        Optional.of(L36),
                        false);
        assertEquals(List.of("leg 0"), did);
    }

    /**
     * A leader change's 503s (or answers too late under load) on every endpoint are etcds there, not a cluster with
     * no etcd: another member may be out by its runner's choice, so a runner whose member is down does not run its
     * first leg at once though its data allows it. It serves its data's line while the rules wait, and runs the leg
     * under the record once the members answer.
     */
    @Test
    void aFirstLegWaitsWhenAnEtcdIsThereButDoesNotAnswer() throws Exception {
        FakeCluster cluster =
                new FakeCluster().down("m1").member("m0", "3.6.16", 500).member("m2", "3.6.16", 500);
        cluster.clusterVersion = Optional.of(L36);
        cluster.reachedUnanswered = 3;
        cluster.script.add(c -> {});
        cluster.script.add(c -> {});
        cluster.script.add(c -> c.member("m1", "3.6.16", 500)); // its data's line serving
        List<String> did = new ArrayList<>();
        coordinator(cluster, "m1", 3)
                .run(
                        List.of(leg(L36, L37)),
                        i -> did.add("leg " + i + " with " + cluster.writes),
                        reached -> {
                            did.add("serve " + reached);
                            return Optional.of(new RolloutCoordinator.Serving() {
                                @Override
                                public void requireAlive() {}

                                @Override
                                public void stop() {
                                    did.add("stop");
                                }

                                @Override
                                public void close() {}
                            });
                        },
                        Optional.of(L36),
                        false);
        assertEquals(List.of("serve -1", "stop", "leg 0 with [create m1]"), did);
        assertEquals(List.of("create m1", "delete m1"), cluster.writes);
        // the same cluster with no etcd there at all: the leg runs at once, as with every manifest edited at once
        cluster.writes.clear();
        cluster.unanswered = 1;
        assertEquals(List.of("leg 0 with []"), legWithoutServing(coordinator(cluster, "m1", 3), cluster));
        // the clause decides it: rules that read an etcd reached as none there run the leg at once on the 503s
        cluster.reachedUnanswered = 1;
        RuleSet reachedAsNone = new RuleSet() {
            @Override
            public boolean reachedIsFailedRead() {
                return false;
            }
        };
        assertTrue(RuleSet.REAL.reachedIsFailedRead());
        assertEquals(
                List.of("leg 0 with []"), legWithoutServing(coordinator(cluster, "m1", 3, reachedAsNone), cluster));
        assertEquals(0, cluster.reachedUnanswered, "the leg ran on the 503s");
    }

    /** The leg 3.6 -> 3.7 run by a member that cannot serve: what it did, each leg with the writes before it. */
    private static List<String> legWithoutServing(RolloutCoordinator coordinator, FakeCluster cluster)
            throws Exception {
        List<String> did = new ArrayList<>();
        coordinator.run(
                List.of(leg(L36, L37)),
                i -> did.add("leg " + i + " with " + cluster.writes),
                reached -> Optional.empty(),
                Optional.of(L36),
                false);
        return did;
    }

    @Test
    void theRecordValueReadsBack() throws Exception {
        RecordValue value = new RecordValue("m1", L35, L36, Instant.parse("2026-11-26T03:00:00Z"));
        assertEquals(value, RecordValue.parse(value.toJson()));
        // someone else's value under the key is not read as a record (ClusterClient refuses it, never overwrites)
        assertThrows(IOException.class, () -> RecordValue.parse("{\"holder\":\"x\"}"));
        assertThrows(IOException.class, () -> RecordValue.parse("not json"));
    }
}
