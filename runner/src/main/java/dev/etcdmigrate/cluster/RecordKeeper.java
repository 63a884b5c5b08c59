package dev.etcdmigrate.cluster;

import dev.etcdmigrate.cluster.ClusterView.Record;
import dev.etcdmigrate.cluster.RolloutCoordinator.RecordAt;
import dev.etcdmigrate.cluster.RolloutCoordinator.Records;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.RolloutEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The restart record's bookkeeping for one run (docs/ha.md, "The rules", 2 and 4): the runner's {@link Note}, the
 * release, the delete that compares the revision, the sweep before the exec, and the read of a record this runner
 * may hold. {@link RolloutCoordinator} decides when; this class keeps the note and the cluster's record in step.
 */
final class RecordKeeper {

    private final ClusterView cluster;
    private final NoteStore notes;
    private final String self;
    private final RolloutPolicy policy;
    private final RolloutCoordinator.Ticker ticker;
    private final Log log;
    private final RuleSet rules;
    /** The note as last written by this run (null: not read yet). */
    private Note noted;
    /** The record this run holds as noted (null: none). */
    private Record heldRecord;
    /** A release gave up with no member answering: the record may be left (rule 4's settling, before the exec). */
    private boolean unsettled;
    /** The port call this keeper makes next, set before each (the simulation's state key reads it). */
    private RecordAt at = RecordAt.IDLE;
    /** The reads of {@link #ownRecord(int)} made so far in its current loop. */
    private int reads;
    /** The current release's deadline (null: none running). */
    private Instant end;

    Records memory() {
        return new Records(
                at,
                Optional.ofNullable(noted),
                Optional.ofNullable(heldRecord),
                unsettled,
                reads,
                Optional.ofNullable(end));
    }

    /** The coordinator's own call is next: the keeper is between its methods. */
    void idle() {
        at = RecordAt.IDLE;
    }

    RecordKeeper(
            ClusterView cluster,
            NoteStore notes,
            String self,
            RolloutPolicy policy,
            RolloutCoordinator.Ticker ticker,
            Log log,
            RuleSet rules) {
        this.rules = rules;
        this.cluster = cluster;
        this.notes = notes;
        this.self = self;
        this.policy = policy;
        this.ticker = ticker;
        this.log = log;
    }

    /** The record this run noted as held, if any (taken before the cluster stopped answering). */
    Optional<Record> held() {
        return Optional.ofNullable(heldRecord);
    }

    /** Reads of the record at a run's start: patient when its note says it holds one (a 503 passes meanwhile). */
    int startReads(Note start) {
        return rules.startReads(start, policy);
    }

    /** Notes the record held, once per revision (a wait passes here every poll while it holds it). */
    void noteHolds(Record held) throws IOException {
        heldRecord = held;
        if (note() instanceof Note.Holds h && h.revision() == held.modRevision()) return;
        writeNote(new Note.Holds(held.modRevision()));
    }

    Note note() throws IOException {
        if (noted == null) noted = notes.read();
        return noted;
    }

    void writeNote(Note note) throws IOException {
        if (!(note instanceof Note.Holds)) heldRecord = null;
        if (note.equals(noted)) return;
        at = RecordAt.NOTE;
        notes.write(note);
        noted = note;
    }

    /**
     * Rule 4: after this member runs the new line and took a quorum write, the record is deleted (comparing its
     * revision) through any member that answers, tried for {@link RolloutPolicy#releasePatience}; then the note goes.
     * When none answers, a peer's runner takes it over once this member answers at or past the line it names.
     */
    void release(Record record) throws IOException, InterruptedException, MigrateException {
        release(record, policy.releasePatience());
    }

    /**
     * {@link #release(Record)} tried for {@code patience}; zero: one try through every member (this member is down
     * and may be the vote a quorum lacks: the caller serves it and tries again rather than keep it down).
     */
    void release(Record record, java.time.Duration patience)
            throws IOException, InterruptedException, MigrateException {
        boolean patient = !patience.isZero();
        unsettled = false; // the latest release says whether a record may be left
        end = ticker.now().plus(patience);
        while (true) {
            try {
                at = RecordAt.RELEASE_DELETE;
                // the one try while this member is down: bounded in all, not per endpoint walked
                boolean deleted = patient ? delete(record) : rules.delete(cluster.within(policy.releaseTry()), record);
                log.emit(new RolloutEvent.RestartRecordReleased(
                        self, record.value().to().toString(), record.modRevision(), deleted));
                break;
            } catch (IOException unreachable) {
                if (!patient || ticker.now().isAfter(end)) {
                    unsettled = true;
                    log.emit(new Event.Note(
                            Event.Level.WARN,
                            "could not release the restart record (" + unreachable.getMessage()
                                    + "); another member's runner deletes it once this member serves "
                                    + record.value().to()));
                    break;
                }
                at = RecordAt.RELEASE_RETRY_PAUSE;
                ticker.pause(); // poll interval of a deadline-bound retry
            }
        }
        end = null;
        // one try that reached no member: the note still says it holds the record, so a run killed before the retry
        // (its member serving) looks for it again
        if (patient || !unsettled) writeNote(Note.NONE);
    }

    /** Whether the latest release gave up with no member answering (a record of this runner's may be left). */
    boolean unsettled() {
        return unsettled;
    }

    /** Deletes the record another holder left once its restart is over (rule 2's take-over); logs it. */
    void takeOver(Record record) throws IOException, InterruptedException, MigrateException {
        takeOver(cluster, record);
    }

    private void takeOver(ClusterView view, Record record) throws IOException, InterruptedException, MigrateException {
        at = RecordAt.TAKE_OVER_DELETE;
        if (rules.delete(view, record)) {
            log.emit(new RolloutEvent.RestartRecordTakenOver(
                    record.value().holder(), record.value().to().toString(), record.modRevision()));
        }
    }

    private boolean delete(Record record) throws IOException, InterruptedException, MigrateException {
        return rules.delete(cluster, record);
    }

    /**
     * Before the exec at the target: a record another holder left behind (its release reached no member) is taken
     * over now if its holder answers at or past its line; otherwise the last runner to finish would leave it for
     * good (no runner is left to pass rule 2). One read, best effort: no member answering changes nothing.
     */
    void sweep() throws InterruptedException, MigrateException {
        // this member is down here: one bounded try, as the release's, not a timeout per endpoint walked
        ClusterView view = cluster.within(policy.releaseTry());
        try {
            at = RecordAt.SWEEP_RECORD;
            Optional<Record> left = view.record();
            if (left.isEmpty() || left.get().value().holder().equals(self)) return;
            Record over = left.get();
            // the member list only for a record of the release before (it names no URL of its holder)
            at = RecordAt.SWEEP_MEMBERS;
            List<ClusterView.Member> members =
                    rules.readsHolderWhereItServes(over.value()) ? List.of() : view.members();
            at = RecordAt.SWEEP_HOLDER;
            if (rules.holderDone(over, rules.holderAnswer(view, over, members))) takeOver(view, over);
        } catch (IOException unreachable) {
            // the holder's peers take it over when they pass rule 2
        }
    }

    /**
     * This runner's own record from an earlier run that was stopped while it held it, read again after a pause while
     * no member answers (a leader change, a quorum just back after a pod died), at most {@code attempts} reads.
     */
    Optional<Record> ownRecord(int attempts) throws IOException, InterruptedException, MigrateException {
        for (reads = 1; ; reads++) {
            try {
                at = RecordAt.OWN_RECORD_READ;
                return cluster.record().filter(r -> r.value().holder().equals(self));
            } catch (IOException unreachable) {
                if (reads >= attempts) throw unreachable;
                at = RecordAt.OWN_RECORD_RETRY_PAUSE;
                ticker.pause();
            }
        }
    }

    /** {@link #ownRecord(int)}, or empty with a warning when no member answers. */
    Optional<Record> ownRecordOrWarn(MinorLine line, int reads)
            throws IOException, InterruptedException, MigrateException {
        try {
            return ownRecord(reads);
        } catch (IOException unreachable) {
            log.emit(new Event.Note(
                    Event.Level.WARN,
                    "could not read the restart record (" + unreachable.getMessage() + "); if an earlier run of this"
                            + " member's runner took it, another member's runner deletes it once this member serves "
                            + line));
            return Optional.empty();
        }
    }

    /**
     * This runner's own record, read once while this member is down (after its last leg); when no member answers it
     * may be there: the release is unsettled (rule 4's settling serves the member and reads it again).
     */
    Optional<Record> ownRecordOrUnsettled(MinorLine line) throws IOException, InterruptedException, MigrateException {
        try {
            return ownRecord(1);
        } catch (IOException unreachable) {
            unsettled = true;
            return Optional.empty();
        }
    }

    /**
     * The record left by a run killed after its last leg, before it released: one read and one try while this member
     * is down (the caller serves it and settles when none answers: {@link #unsettled()}), else the note cleared.
     */
    void releaseLeftover(MinorLine line) throws IOException, InterruptedException, MigrateException {
        // "taking" is looked for as "holds" is: a creation whose answer was lost may have committed
        Optional<Record> held = ownRecordOrUnsettled(line);
        if (held.isPresent()) release(held.get(), rules.releaseWhileDown(policy));
        else if (!unsettled) writeNote(Note.NONE);
        sweep();
    }
}
