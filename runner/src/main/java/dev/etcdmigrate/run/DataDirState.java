package dev.etcdmigrate.run;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.CatalogSource;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.BackendStorageVersion;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.ondisk.DataRecords;
import dev.etcdmigrate.ondisk.OwnMember;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the data dir holds, as far as the runner can prove it: the version that wrote it (version.txt,
 * --initial-version, or what the data itself says: {@link DataDetection}), every label checked against
 * the data and the member dir. Reads only.
 */
final class DataDirState {

    private final DataDir dataDir;
    private final RunConfig options;
    private final Log log;
    private final CatalogSource catalog; // read when detection needs it

    /** Whether the data dir existed when the run began (a migration creates a missing one before its lock). */
    private final boolean existed;

    DataDirState(DataDir dataDir, RunConfig options, Log log, CatalogSource catalog) {
        this.existed = dataDir.exists();
        this.dataDir = dataDir;
        this.options = options;
        this.log = log;
        this.catalog = catalog;
    }

    /** What the data says wrote it (reads only; the WAL only when the db and the snapshot are silent). */
    DataDetection.Detection detect() throws IOException, UsageException {
        return DataDetection.detect(dataDir.path(), options.walDir(), catalog.get(), false);
    }

    /** What a start reads of the data dir; the data itself only where version.txt does not answer. */
    StartDecision.DataRead read() throws IOException, MigrateException {
        boolean holds = dataDir.exists() && dataDir.holdsData();
        Optional<DataVersion> recorded = holds ? dataDir.readVersion() : Optional.empty();
        boolean detect = holds && recorded.isEmpty();
        return new StartDecision.DataRead(
                dataDir.path(),
                holds,
                recorded,
                dataDir.inferStorage(),
                detect ? Optional.of(detect()) : Optional.empty(),
                Files.isRegularFile(dataDir.own().etcdOutput()),
                detect ? safeContent() : "",
                holds ? OwnMember.read(dataDir.path(), options.walDir()) : Optional.empty(),
                holds
                        ? DataRecords.damageFound(
                                dataDir.path(),
                                options.walDir(),
                                StartDecision.DataRead.readsEveryDbPage(recorded, options.target()))
                        : List.of());
    }

    /**
     * What wrote the data dir ({@link StartDecision#start}): empty for a missing or empty dir. Reported
     * (events) when {@code report}, and only then: a start reads twice (before and under the lock).
     */
    Optional<DataVersion> current(boolean report) throws IOException, MigrateException {
        StartDecision.DataRead read = read();
        StartDecision.Start start = StartDecision.start(read, StartDecision.Flags.of(options), catalog);
        if (report && !read.holdsData()) {
            log.emit(new DecisionEvent.NewCluster(
                    dataDir.path().toString(), existed, options.target().toString()));
        }
        if (report && read.detection().isPresent() && start.current().isPresent()) {
            DataDetection.Detection detected = read.detection().get();
            DataVersion taken = start.current().get();
            if (start.source().equals("--initial-version")) {
                if (start.verdict() == Verdict.INTERRUPTED_STEP)
                    interrupted(taken, "--initial-version/INITIAL_VERSION", detected);
                StorageApi storage = taken.storage();
                log.emit(detectedEvent(
                        detected, "checked --initial-version " + taken.version() + " against it: agrees"));
                log.emit(new DecisionEvent.DataDirRead(
                        dataDir.path().toString(),
                        taken.toString(),
                        "no version.txt: taking " + taken
                                + " (version from --initial-version/INITIAL_VERSION, storage "
                                + (detected.storage().isPresent()
                                        ? "from the data"
                                        : "inferred from "
                                                + (storage == StorageApi.ETCD3
                                                        ? "member/snap/db"
                                                        : "the absence of member/snap/db"))
                                + ")"));
            } else {
                log.emit(detectedEvent(
                        detected,
                        "no version.txt: planning from " + taken
                                + " (the line's lowest patch, so patch floors apply)"));
                log.emit(new DecisionEvent.DataDirRead(
                        dataDir.path().toString(),
                        taken.toString(),
                        "no version.txt: read from the data, lowest patch" + " of etcd "
                                + taken.version().line()));
            }
        }
        return start.current();
    }

    private void interrupted(DataVersion label, String source, DataDetection.Detection detected) {
        log.emit(new DecisionEvent.InterruptedStepFound(
                dataDir.path().toString(),
                source + " " + label,
                detected.floor().orElseThrow().toString(),
                detected.evidence().stream().map(Object::toString).toList()));
    }

    private DecisionEvent.DataDetected detectedEvent(DataDetection.Detection d, String use) {
        return new DecisionEvent.DataDetected(
                dataDir.path().toString(),
                d.storage().map(Object::toString).orElse(""),
                d.line().map(Object::toString).orElse(""),
                d.floor().map(Object::toString).orElse(""),
                d.evidence().stream().map(Object::toString).toList(),
                use);
    }

    /** How a label stands against the data. */
    enum Verdict {
        AGREES,
        INTERRUPTED_STEP,
        CONTRADICTED,
        /** The label's line never ran on the data: it records its cluster below the line the label's upgrades from. */
        AHEAD_OF_DATA
    }

    /**
     * A label (version.txt or --initial-version) against the data. Against the oldest line that may run on it
     * now ({@link DataDetection.Detection#floor}): at or above it agrees (a newer etcd may have run without the
     * cluster version having moved yet: it lags in a cluster, and for seconds after a start). Below it, the one
     * tolerated case is the next line after the label when this runner ran steps here (its
     * .etcd-migrate/etcd-output.log): an upgrade step interrupted after its etcd ran, before version.txt was
     * written, which the plan resumes. Everything else is contradicted. Against what the data records as its
     * cluster (or storage) version ({@code recorded}: the floor where the data pins it, else empty): a line's etcd
     * runs only where the cluster is at the line it upgrades from (catalog: upgrade.from) or newer (a lone member
     * moves it to its own line at its first commit; etcd 3.7 panics on a 3.5 cluster's data), so a label above that
     * is ahead of the data: no etcd of the label's line ran on it, and the target may not open it.
     */
    static Verdict judge(
            MinorLine label,
            Optional<MinorLine> floor,
            Optional<MinorLine> recorded,
            boolean stepsRanHere,
            Catalog catalog) {
        Optional<MinorLine> needs = recorded.isPresent() ? opensDataFrom(label, catalog) : Optional.empty();
        if (needs.isPresent() && recorded.get().isOlderThan(needs.get())) return Verdict.AHEAD_OF_DATA;
        if (floor.isEmpty() || !label.isOlderThan(floor.get())) return Verdict.AGREES;
        Optional<MinorLine> next = catalog.releases().stream()
                .map(r -> r.minorLine())
                .filter(label::isOlderThan)
                .findFirst();
        if (stepsRanHere && next.equals(floor)) return Verdict.INTERRUPTED_STEP;
        return Verdict.CONTRADICTED;
    }

    /** The floor where the data pins it (a cluster or storage version recorded), else empty. */
    static Optional<MinorLine> recordedFloor(DataDetection.Detection detected) {
        return detected.pinned() ? detected.floor() : Optional.empty();
    }

    /** The oldest line whose data the line's etcd opens in place (catalog: upgrade.from); empty if not bundled. */
    static Optional<MinorLine> opensDataFrom(MinorLine line, Catalog catalog) {
        return catalog.line(line).map(r -> r.line().upgrade().fromLine());
    }

    /** The member dir's layout and WAL location against what version.txt and etcd's flags say. */
    void crossCheck(DataVersion recorded) throws IOException, MigrateException {
        // the catalog only where it matters: etcd2 data next to a db (a restart reads no catalog)
        dataDir.checkAgainst(recorded, options.walDir(), v -> {
            try {
                return catalog.get().line(v.line()).map(r -> r.line().v3Api()).orElse(true);
            } catch (UsageException e) {
                return true; // a bad catalog fails the plan that needs it, with its own message
            }
        });
    }

    /**
     * version.txt against the data: a label older than the data's cluster or storage version (or, where
     * the data records neither, than the newest line its records prove) is refused, every line alike;
     * see {@link #judge(MinorLine, Optional, boolean, Catalog)} for the one tolerated case. The WAL is read
     * only when the db and the snapshot are silent, so a no-op start stays cheap.
     */
    void checkLabelAgainstData(DataVersion recorded) throws IOException, MigrateException {
        checkLabelAgainstData(recorded, true);
    }

    /** {@code report}: emit what was found (a start judges twice: before the plan and under the lock). */
    void checkLabelAgainstData(DataVersion recorded, boolean report) throws IOException, MigrateException {
        // a restart's fast path: the db's recorded versions at or below the label need no catalog and no full read
        Optional<MinorLine> recordedFloor = DataDetection.recordedFloor(dataDir.path());
        MinorLine label = recorded.version().line();
        if (recordedFloor.isPresent()
                && !label.isOlderThan(recordedFloor.get())
                && (label.equals(recordedFloor.get())
                        || opensDataFrom(label, catalog.get())
                                .filter(from -> !recordedFloor.get().isOlderThan(from))
                                .isPresent())) return;
        DataDetection.Detection detected = detect();
        if (DataDirState.judge(label, detected.floor(), recordedFloor(detected), false, catalog.get())
                == Verdict.AHEAD_OF_DATA) {
            // a refusal reads everything first: the WAL may hold what the db has not applied yet
            detected = DataDetection.detect(dataDir.path(), options.walDir(), catalog.get(), true);
        }
        if (report && detected.unreadable().isPresent()) {
            // not a db (or snapshot) this reader understands: the step's etcd judges it when it starts on it
            log.emit(new DecisionEvent.StorageVersionUnread(
                    dataDir.member().resolve("snap").resolve("db").toString(),
                    detected.unreadable().get()));
        }
        if (StartDecision.judge(recorded, "version.txt", read(), detected, catalog) == Verdict.INTERRUPTED_STEP
                && report) {
            interrupted(recorded, "version.txt", detected);
        }
    }

    /** A db an etcd holds open is refused before steps: etcd (and etcdutl) would wait on its lock. */
    void refuseHeldDb() throws IOException, MigrateException {
        Path db = dataDir.member().resolve("snap").resolve("db");
        if (!Files.isRegularFile(db)) return;
        OptionalLong holder = BackendStorageVersion.lockHolder(db);
        if (holder.isPresent()) {
            throw new DataDir.UnusableDataDirException(db + " is held open by process " + holder.getAsLong()
                    + ": is an etcd still running on this data dir? Stop it first (nothing was changed)");
        }
    }

    private String safeContent() {
        try {
            return dataDir.describeContent();
        } catch (IOException e) {
            return "unreadable: " + e.getMessage();
        }
    }
}
