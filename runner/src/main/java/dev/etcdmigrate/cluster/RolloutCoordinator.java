package dev.etcdmigrate.cluster;

import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.cluster.ClusterView.Record;
import dev.etcdmigrate.cluster.ClusterView.Status;
import dev.etcdmigrate.cluster.RolloutRules.Decision;
import dev.etcdmigrate.cluster.RolloutRules.Leg;
import dev.etcdmigrate.cluster.RolloutRules.Self;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.event.RolloutEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The driver of one run of a cluster member's rollout (docs/ha.md, "The rules"): it reads the cluster, asks
 * {@link RolloutRules} what to do, and does it through its ports only (the cluster, the note store, the legs, the
 * serving member, the clock). One per run, so what it learned (the members' client URLs its cluster port keeps,
 * the revision it noted, the reason it last reported) is not forgotten between legs. Nothing here sleeps or
 * starts a process: the simulation (test scope) runs it over a simulated cluster, step by step.
 */
public final class RolloutCoordinator {

    /** The record's key: outside Kubernetes' /registry, and the only key a rollout writes. */
    public static final String RECORD_KEY = "/etcd-migrate/rollout/restart";

    /** The member as the runner serves it between legs. */
    public interface Serving extends AutoCloseable {
        /** Fails when etcd exited on its own while the runner waited. */
        void requireAlive() throws MigrateException;

        /** The restart the runner chose: a clean stop, else a failure. */
        void stop() throws MigrateException, InterruptedException;

        @Override
        void close();
    }

    /** Starts the member serving. */
    public interface MemberPort {
        /**
         * Serves the line leg {@code reached} arrived at; {@code -1}: the data's own line before the first leg, which
         * may be impossible (no binary of it): then empty.
         */
        Optional<Serving> serve(int reached) throws IOException, MigrateException;
    }

    /** Runs one leg's steps (each writes version.txt after its quorum write). */
    public interface Legs {
        void run(int index) throws Exception;
    }

    /** The clock: what time it is and one poll interval's wait (the simulation advances its own). */
    public interface Ticker {
        Instant now();

        void pause() throws InterruptedException;
    }

    private final ClusterView cluster;
    private final RecordKeeper records;
    private final String self;
    /** This member's own client URLs (its --advertise-client-urls): the record names them for the take-over. */
    private final List<String> serves;

    private final int expectedMembers;
    private final RolloutPolicy policy;
    /** The rules it follows: {@link RuleSet#REAL} in every run. */
    private final RuleSet rules;

    private final Ticker ticker;
    private final Log log;
    private String lastWaiting = "";
    /** Where {@link #run} stands (the caller of the next port call) and where a pass of the rules stands. */
    private Phase phase = Phase.START;

    private Step step = Step.NONE;
    /** The index of the leg {@link #run} is at. */
    private int legIndex;
    /** The record {@link #run} holds for its leg (null: none). */
    private Record legRecord;
    /** "taking" or "holds" and no member answered: the record may exist (looked for after the leg's quorum write). */
    private boolean unknown;
    /** A record whose release after the leg gave up (null: none): released again once the member serves. */
    private Record unreleased;
    /** The record the settling restart holds (null: none). */
    private Record settleRecord;
    /** What the current pass of the rules read so far (empty outside a pass). */
    private List<Member> passMembers = List.of();

    private Record passRecord;
    private List<Member> passNow = List.of();
    private final Map<String, Optional<String>> passReads = new HashMap<>();
    /** The member while it serves (between legs, or before the first while the rules wait). */
    private Serving serving;
    /** The cluster version this member's data recorded when its etcd last ran (empty: not recorded). */
    private Optional<MinorLine> recordedClusterVersion = Optional.empty();
    /** Whether a pass of the rules read the cluster (so rule 2 saw any record of this runner's). */
    private boolean answered;
    /** Whether this member's data recorded a downgrade job in progress. */
    private boolean recordedJob;
    /** Leadership moves asked for in this run (which candidate the next one asks). */
    private int handOvers;
    /** Rule 2's last decision was to wait for another holder, and why (null: it was not). */
    private Decision.Wait blockedWhy;

    /** Where a run stands: the part of {@link #run} (or of the settling, the leftover's release) making the next call. */
    public enum Phase {
        START,
        START_NOTE,
        RELEASE_STALE,
        BEFORE_LEG,
        STOP,
        RELEASE_EARLY,
        LEG,
        AFTER_LEG_READ,
        AFTER_LEG_NOTE,
        RELEASE,
        SWEEP,
        SERVE,
        RESETTLE_READ,
        RESETTLE_RELEASE,
        RESETTLE_NOTE,
        SETTLE_SERVE,
        SETTLE_BEFORE_LEG,
        SETTLE_STOP,
        SETTLE_RELEASE,
        LEFTOVER,
        BEFORE_RESTART,
        /** The run returned: nothing of it is left to do. */
        DONE
    }

    /** Where a pass of the rules stands (NONE outside one): the port call it makes next, or the keeper's it calls. */
    public enum Step {
        NONE,
        MEMBERS,
        SERVE_DATA_LINE,
        WAIT,
        CLUSTER_VERSION,
        RECORD,
        HOLDER,
        NOTE_OWN,
        RELEASE_STALE,
        TAKE_OVER,
        NOTE_TAKING,
        CREATE,
        READ_AFTER_REFUSED,
        NOTE_FOUND,
        NOTE_REFUSED,
        NOTE_CREATED,
        MARGIN_MEMBERS,
        MOVE_LEADER,
        READ_THROUGH,
        RELEASE_UNQUALIFIED,
        HOLDS,
        NOTE_TAKEN_AWAY
    }

    /** Where the record keeper stands: the port call it makes next, or idle between its methods. */
    public enum RecordAt {
        IDLE,
        NOTE,
        RELEASE_DELETE,
        RELEASE_RETRY_PAUSE,
        TAKE_OVER_DELETE,
        SWEEP_RECORD,
        SWEEP_MEMBERS,
        SWEEP_HOLDER,
        OWN_RECORD_READ,
        OWN_RECORD_RETRY_PAUSE
    }

    /**
     * What the record keeper remembers: its sync point, the note as this run last wrote or read it, the record it
     * holds as noted, whether the latest release gave up, the reads its patient read of the record made so far, and
     * the running release's deadline.
     */
    public record Records(
            RecordAt at,
            Optional<Note> noted,
            Optional<Record> held,
            boolean unsettled,
            int reads,
            Optional<Instant> end) {}

    /** What the current pass of the rules read so far: the member list, the record it holds, the margin's list and reads. */
    public record Pass(
            List<Member> members, Optional<Record> held, List<Member> now, Map<String, Optional<String>> reads) {}

    /**
     * What this run remembers and where it stands, as a value (read-only; the simulation keys its states on it): the
     * sync points (phase, step, the keeper's), the leg, the records it holds in each part, whether its record may
     * exist unknown, whether its member serves, the reason it last gave, what rule 2 last decided, what its data
     * recorded, the current pass's reads and the keeper's memory.
     */
    public record Memory(
            Phase phase,
            Step step,
            int leg,
            Optional<Record> held,
            boolean unknown,
            Optional<Record> unreleased,
            Optional<Record> settling,
            boolean serving,
            String lastWaiting,
            boolean answered,
            int handOvers,
            Optional<Decision.Wait> blocked,
            Optional<MinorLine> recordedClusterVersion,
            boolean recordedJob,
            Pass pass,
            Records records) {}

    public Memory memory() {
        return new Memory(
                phase,
                step,
                legIndex,
                Optional.ofNullable(legRecord),
                unknown,
                Optional.ofNullable(unreleased),
                Optional.ofNullable(settleRecord),
                serving != null,
                lastWaiting,
                answered,
                handOvers,
                Optional.ofNullable(blockedWhy),
                recordedClusterVersion,
                recordedJob,
                new Pass(passMembers, Optional.ofNullable(passRecord), passNow, Map.copyOf(passReads)),
                records.memory());
    }

    private void phase(Phase next) {
        phase = next;
        step(Step.NONE);
    }

    private void step(Step next) {
        step = next;
        records.idle();
    }

    public RolloutCoordinator(
            ClusterView cluster,
            NoteStore notes,
            String self,
            List<String> serves,
            int expectedMembers,
            RolloutPolicy policy,
            Ticker ticker,
            Log log) {
        this(cluster, notes, self, serves, expectedMembers, policy, ticker, log, RuleSet.REAL);
    }

    /** A coordinator following {@code rules} (the simulation's tests supply alternatives to check they are caught). */
    public RolloutCoordinator(
            ClusterView cluster,
            NoteStore notes,
            String self,
            List<String> serves,
            int expectedMembers,
            RolloutPolicy policy,
            Ticker ticker,
            Log log,
            RuleSet rules) {
        this.rules = rules;
        this.cluster = cluster;
        this.records = new RecordKeeper(cluster, notes, self, policy, ticker, log, rules);
        this.self = self;
        this.serves = List.copyOf(serves);
        this.expectedMembers = expectedMembers;
        this.policy = policy;
        this.ticker = ticker;
        this.log = log;
    }

    /**
     * The member's legs, one restart each (docs/ha.md, "Several minors in one rollout"). The member is down when
     * this starts (its pod restarted). Before each leg the rules decide; the first leg runs at once only when no
     * member answers (every manifest edited at once, no etcd there at all) and the cluster version the data recorded allows it
     * ({@link RolloutRules#atOnce}), or when this run finishes a restart its runner began; otherwise it
     * obeys the gate and the record as every later leg does, serving the data's line while it waits where it can.
     * After the last leg the caller records the target and execs it.
     */
    public void run(
            List<Leg> legs,
            Legs legRunner,
            MemberPort member,
            Optional<MinorLine> recordedClusterVersion,
            boolean recordedJob)
            throws Exception {
        this.recordedClusterVersion = recordedClusterVersion;
        this.recordedJob = recordedJob;
        Note start = records.note();
        unknown = false; // "taking" or "holds" and no member answered: the record may exist
        Optional<Record> held = hold(Optional.empty());
        try {
            phase(Phase.START);
            held = hold(records.ownRecord(records.startReads(start)));
        } catch (IOException unreachable) {
            if (!rules.waitsOutNoAnswer()) throw unreachable;
            // "taking" or "holds" and no member answers: the record may exist; the rules decide as with no member
            // answering (the member is down, so running at once takes nothing else out), and it is looked for again
            // after the leg's quorum write. No note: on at once, as with no member answering.
            unknown = !(start instanceof Note.None);
        }
        phase(Phase.START_NOTE);
        if (held.isEmpty() && !unknown) records.writeNote(Note.NONE); // taken over meanwhile, or never created
        Optional<Decision> resumed = RolloutRules.resume(legs.getFirst(), held);
        if (resumed.orElse(null) instanceof Decision.Release stale) {
            phase(Phase.RELEASE_STALE);
            records.release(stale.record()); // a restart of an earlier run that is over: this run's data is past it
            held = hold(Optional.empty());
        }
        try {
            for (int i = 0; i < legs.size(); i++) {
                legIndex = i;
                Leg leg = legs.get(i);
                if (held.isEmpty()) {
                    // "taking" and no member answered: the rules still decide (the data may be past the leg the
                    // record would be for); a pass that reads the record settles it (rule 2 finds its own)
                    answered = false;
                    phase(Phase.BEFORE_LEG);
                    held = hold(beforeLeg(leg, member));
                    if (answered) unknown = false;
                    // a creation whose answer was lost before the cluster stopped answering: it may have committed
                    if (held.isEmpty() && records.note() instanceof Note.Taking) unknown = true;
                }
                if (serving != null) {
                    serving.requireAlive();
                    Serving going = serving;
                    serving = null;
                    phase(Phase.STOP);
                    going.stop();
                }
                if (held.isPresent() && !rules.releasesAfterQuorumWrite()) {
                    phase(Phase.RELEASE_EARLY);
                    records.release(held.get());
                    held = hold(Optional.empty());
                }
                phase(Phase.LEG);
                legRunner.run(i);
                boolean last = i == legs.size() - 1;
                // the release needs a quorum, and this member's vote may be what the others lack: one try through
                // every member while it is down; when none answers, it serves first and tries again with its vote
                // counted (after the last leg: rule 4's settling)
                java.time.Duration whileDown = rules.releaseWhileDown(policy);
                boolean patient = !whileDown.isZero();
                if (unknown) {
                    // the leg took a quorum write: a record its creation committed is there
                    phase(Phase.AFTER_LEG_READ);
                    held = hold(
                            patient
                                    ? records.ownRecordOrWarn(leg.to(), policy.patientReads())
                                    : records.ownRecordOrUnsettled(leg.to()));
                    phase(Phase.AFTER_LEG_NOTE);
                    if (held.isEmpty() && !records.unsettled()) records.writeNote(Note.NONE);
                    unknown = false;
                }
                unreleased = null;
                if (held.isPresent()) {
                    phase(Phase.RELEASE);
                    records.release(held.get(), whileDown);
                    if (records.unsettled()) unreleased = held.get();
                    held = hold(Optional.empty());
                }
                if (last) {
                    phase(Phase.SWEEP);
                    records.sweep();
                    settle(leg.to(), i, member);
                    return;
                }
                phase(Phase.SERVE);
                serving = member.serve(i).orElseThrow(() -> new IOException("the member cannot serve between legs"));
                if (records.unsettled()) {
                    phase(Phase.RESETTLE_READ);
                    Optional<Record> again = unreleased != null
                            ? Optional.of(unreleased)
                            : records.ownRecordOrWarn(leg.to(), policy.patientReads());
                    if (again.isPresent()) {
                        phase(Phase.RESETTLE_RELEASE);
                        records.release(again.get());
                    } else {
                        phase(Phase.RESETTLE_NOTE);
                        records.writeNote(Note.NONE);
                    }
                }
                unreleased = null;
            }
        } finally {
            if (serving != null) serving.close();
            serving = null;
            phase(Phase.DONE);
        }
    }

    /** {@code held} as the record {@link #run} holds for its leg (its memory). */
    private Optional<Record> hold(Optional<Record> held) {
        legRecord = held.orElse(null);
        return held;
    }

    /**
     * Rule 4 before the exec: a release that gave up with no member answering would leave the record for good once
     * every runner exec'd (their sweeps ran with their own members down, as the simulation found). The member
     * serves the target instead and restarts once more under a record of its own for {@code line -> line}: rule 2
     * releases the one left (or a peer takes it over: its holder answers past its line), the margin waits for every
     * other member, and the release after the stop meets them serving. Again while that release gives up.
     */
    private void settle(MinorLine line, int reached, MemberPort member) throws Exception {
        Leg again = new Leg(line, line);
        while (records.unsettled()) {
            phase(Phase.SETTLE_SERVE);
            serving = member.serve(reached).orElseThrow(() -> new IOException("the member cannot serve " + line));
            phase(Phase.SETTLE_BEFORE_LEG);
            Optional<Record> held = beforeLeg(again, member);
            settleRecord = held.orElse(null);
            Serving going = serving;
            serving = null;
            going.requireAlive();
            phase(Phase.SETTLE_STOP);
            going.stop();
            // one try, the member down: while it reaches none, the member serves again and the loop tries anew
            phase(Phase.SETTLE_RELEASE);
            if (held.isPresent()) records.release(held.get(), rules.releaseWhileDown(policy));
            settleRecord = null;
        }
    }

    /**
     * With nothing left to run: the record a run killed after its last leg noted, released now (at {@code line}); when
     * no member answers, the member serves {@code line} first ({@code member}) and settles it as after a last leg.
     */
    public void releaseLeftover(MinorLine line, MemberPort member) throws Exception {
        try {
            phase(Phase.LEFTOVER);
            records.releaseLeftover(line);
            if (records.unsettled()) settle(line, 0, member);
        } finally {
            if (serving != null) serving.close();
            serving = null;
            phase(Phase.DONE);
        }
    }

    /**
     * Waits until the rules let this member restart for {@code leg}, holding the record with every other member
     * healthy; returns the record to release after the leg. Empty: the leg runs at once without one (the member is
     * down and no etcd of the cluster is there at all, or it cannot serve while the others' rules wait for it).
     */
    Optional<Record> beforeLeg(Leg leg, MemberPort member) throws IOException, InterruptedException, MigrateException {
        while (true) {
            boolean down = serving == null;
            try {
                Optional<Optional<Record>> decided = pass(leg, member, down);
                if (decided.isPresent()) {
                    endPass();
                    return decided.get();
                }
            } catch (Unanswered unreachable) {
                if (!rules.waitsOutNoAnswer()) throw unreachable.cause;
                if (down
                        && (rules.atOnce(leg, recordedClusterVersion, recordedJob)
                                || rules.atOnceWhileMembersAnswer())) {
                    endPass();
                    return records.held(); // a record taken before the cluster went: released after
                }
                step(Step.SERVE_DATA_LINE);
                if (down && startServing(member)) continue;
                // every member restarting together, this one still starting: nothing was decided
                waiting(leg, "no member of the cluster answers (" + unreachable.cause.getMessage() + ")", List.of());
            } catch (IOException lost) {
                if (!rules.waitsOutNoAnswer()) throw lost;
                // a linearizable read failed while the members' lists answer (no leader, a quorum cut): this member,
                // down, may be the vote a quorum lacks: it serves its data's line while the rules wait
                step(Step.SERVE_DATA_LINE);
                if (down && rules.servesOnFailedRead() && startServing(member)) continue;
                // an answer lost mid-pass (a leader change, a member going): every rule reads the cluster again
                waiting(leg, "no member of the cluster answers (" + lost.getMessage() + ")", List.of());
            }
        }
    }

    /** One pass of the rules: the record held, empty to run at once without one, or nothing decided (read again). */
    private Optional<Optional<Record>> pass(Leg leg, MemberPort member, boolean down)
            throws IOException, InterruptedException, MigrateException, Unanswered {
        Self me = new Self(self, expectedMembers, down);
        endPass();
        List<Member> members;
        try {
            step(Step.MEMBERS);
            members = cluster.members();
        } catch (ClusterView.EtcdReached there) {
            // an etcd is there (it answered late or with an error): rule 1 reads it as a failed read while members
            // answer, never as the leg at once of "no member runs" (another member may be out by its runner's choice)
            if (rules.reachedIsFailedRead()) throw there;
            throw new Unanswered(there);
        } catch (IOException unreachable) {
            throw new Unanswered(unreachable);
        }
        answered = true;
        passMembers = members;
        if (down && rules.atOnceWhileMembersAnswer()) return Optional.of(Optional.empty());
        step(Step.CLUSTER_VERSION);
        Optional<MinorLine> version = cluster.clusterVersion();
        Optional<Decision.Wait> closed = rules.gate(leg, me, members, version);
        if (closed.isPresent()) {
            step(Step.SERVE_DATA_LINE);
            if (down && startServing(member)) return Optional.empty();
            waiting(leg, closed.get().why(), closed.get().members());
            return Optional.empty();
        }
        Optional<Record> held = takeRecord(leg, me, members);
        passRecord = held.orElse(null);
        if (held.isEmpty()) {
            if (blockedWhy != null && down) {
                // it cannot answer while it waits: the others' rules would wait for it in turn
                step(Step.SERVE_DATA_LINE);
                if (!startServing(member)) return Optional.of(Optional.empty());
                waiting(leg, blockedWhy.why(), blockedWhy.members());
            }
            return Optional.empty();
        }
        step(Step.MARGIN_MEMBERS);
        List<Member> now = cluster.members();
        passNow = now;
        List<String> successors = rules.handOver(me, now);
        if (!successors.isEmpty()) {
            // a read through the others would pass through this member: the leader moves first, then rule 3 again;
            // a move that failed tries the next candidate the next time
            String to = successors.get(handOvers++ % successors.size());
            try {
                step(Step.MOVE_LEADER);
                cluster.moveLeader(to);
            } catch (IOException refused) {
                waiting(leg, "moving the leadership to " + to + ": " + refused.getMessage(), List.of());
            }
            return Optional.empty();
        }
        Map<String, Optional<String>> reads = new HashMap<>();
        for (Member m : now) {
            if (!m.name().equals(self) && m.status().isPresent()) {
                step(Step.READ_THROUGH);
                reads.put(m.name(), cluster.linearizableThrough(m.name()));
                passReads.put(m.name(), reads.get(m.name()));
            }
        }
        List<String> problems = rules.margin(me, now, reads, policy.raftIndexBound());
        if (!problems.isEmpty()) {
            step(Step.SERVE_DATA_LINE);
            if (down && !startServing(member)) {
                step(Step.RELEASE_UNQUALIFIED);
                records.release(held.get()); // it cannot answer while it waits: nobody could restart meanwhile
                return Optional.of(Optional.empty());
            }
            // keep the record: while another member is out, nobody may restart theirs
            waiting(
                    leg,
                    "holding the restart record until every other member serves: " + String.join("; ", problems),
                    RolloutRules.named(problems));
            return Optional.empty();
        }
        step(Step.HOLDS);
        if (!cluster.holds(held.get())) {
            step(Step.NOTE_TAKEN_AWAY);
            records.writeNote(Note.NONE);
            return Optional.empty(); // taken over (this member looked done to a peer): start again
        }
        log.emit(new RolloutEvent.RestartRecordTaken(
                self, leg.from().toString(), leg.to().toString(), held.get().modRevision()));
        lastWaiting = "";
        return Optional.of(held);
    }

    /** Rule 2 carried out: the record held (created or its own), or empty after waiting / releasing / taking over. */
    private Optional<Record> takeRecord(Leg leg, Self me, List<Member> members)
            throws IOException, InterruptedException, MigrateException {
        step(Step.RECORD);
        Optional<Record> existing = cluster.record();
        // another holder's record: read it where its member serves (the take-over's answer), only then
        step(Step.HOLDER);
        Optional<Status> holder =
                existing.isPresent() && !existing.get().value().holder().equals(self)
                        ? rules.holderAnswer(cluster, existing.get(), members)
                        : Optional.empty();
        Decision decision = rules.take(leg, me, existing, holder);
        blockedWhy = decision instanceof Decision.Wait w ? w : null;
        switch (decision) {
            case Decision.UseOwn own -> {
                step(Step.NOTE_OWN);
                records.noteHolds(own.record()); // an earlier run of this runner took it, or this one's answer was lost
                return Optional.of(own.record());
            }
            case Decision.Release stale -> {
                step(Step.RELEASE_STALE);
                records.release(stale.record());
                return Optional.empty();
            }
            case Decision.TakeOver over -> {
                step(Step.TAKE_OVER);
                records.takeOver(over.record());
                return Optional.empty();
            }
            case Decision.Wait w -> {
                if (!me.memberDown()) waiting(leg, w.why(), w.members());
                return Optional.empty();
            }
            case Decision.Take t -> {
                step(Step.NOTE_TAKING);
                if (rules.notesBeforeCreate()) records.writeNote(Note.TAKING);
                step(Step.CREATE);
                Optional<Record> created =
                        cluster.create(new RecordValue(self, leg.from(), leg.to(), ticker.now(), serves));
                if (created.isEmpty()) {
                    // a creation retried on another endpoint after its answer was lost finds its own record: the value
                    // names its runner, so a record naming this one is this run's
                    step(Step.READ_AFTER_REFUSED);
                    Optional<Record> there = rules.ownAfterRefusedCreate(cluster, self);
                    if (there.isPresent()) {
                        step(Step.NOTE_FOUND);
                        records.noteHolds(there.get());
                        return leg.names(there.get()) ? there : Optional.empty();
                    }
                    step(Step.NOTE_REFUSED);
                    records.writeNote(Note.NONE);
                    return Optional.empty(); // another runner was quicker: read again
                }
                step(Step.NOTE_CREATED);
                records.noteHolds(created.get());
                return created;
            }
            case Decision.Restart r -> throw new IllegalStateException("not a decision of rule 2");
        }
    }

    /**
     * The member is down while the rules wait before the first leg: it serves the data's line meanwhile, so the
     * others see it (their gate and margin wait for every member to answer). False when it cannot.
     */
    private boolean startServing(MemberPort member) throws IOException, MigrateException {
        Optional<Serving> started = member.serve(-1);
        if (started.isEmpty()) return false;
        serving = started.get();
        return true;
    }

    /** Rule 4, the release (see {@link RecordKeeper#release}). */
    public void release(Record record) throws IOException, InterruptedException, MigrateException {
        records.release(record);
    }

    /** This runner's own record from an earlier run, read at most {@code attempts} times while none answers. */
    public Optional<Record> ownRecord(int attempts) throws IOException, InterruptedException, MigrateException {
        return records.ownRecord(attempts);
    }

    /** Public for the rules' unit tests: waits as {@link #run} does before a leg while the member serves. */
    public Record beforeRestart(Leg leg) throws IOException, InterruptedException, MigrateException {
        phase(Phase.BEFORE_RESTART);
        Serving previous = serving;
        if (serving == null) serving = NOT_A_PROCESS;
        try {
            return beforeLeg(leg, reached -> Optional.empty()).orElseThrow();
        } finally {
            serving = previous;
        }
    }

    private static final Serving NOT_A_PROCESS = new Serving() {
        @Override
        public void requireAlive() {}

        @Override
        public void stop() {}

        @Override
        public void close() {}
    };

    private void waiting(Leg leg, String why, List<String> members) throws InterruptedException, MigrateException {
        if (!why.equals(lastWaiting)) {
            log.emit(new RolloutEvent.RolloutWaiting(self, leg.toString(), why, members));
            lastWaiting = why;
        }
        if (serving != null) serving.requireAlive();
        endPass(); // what the pass read is spent: the next pass reads afresh
        step(Step.WAIT);
        ticker.pause();
    }

    /** The current pass read nothing yet (or its reads are spent). */
    private void endPass() {
        passMembers = List.of();
        passRecord = null;
        passNow = List.of();
        passReads.clear();
    }
}
