package dev.etcdmigrate.run;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.cli.MigrateOptions;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.BackendStorageVersion;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.plan.RefusedTransitionException;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What the data dir holds, as far as the runner can prove it: the version that wrote it (version.txt,
 * --initial-version, or what the data itself says: {@link DataDetection}), every label checked against
 * the data and the member dir. Reads only.
 */
final class DataDirState {

    private final DataDir dataDir;
    private final MigrateOptions options;
    private final Log log;
    private final CatalogSupplier catalog;

    /** The catalog, read when detection needs it. */
    interface CatalogSupplier {
        Catalog get() throws UsageException;
    }

    DataDirState(DataDir dataDir, MigrateOptions options, Log log, CatalogSupplier catalog) {
        this.dataDir = dataDir;
        this.options = options;
        this.log = log;
        this.catalog = catalog;
    }

    /** What the data says wrote it (reads only; the WAL only when the db and the snapshot are silent). */
    DataDetection.Detection detect() throws IOException, UsageException {
        return DataDetection.detect(dataDir.path(), options.walDir(), catalog.get(), false);
    }

    /**
     * What wrote the data dir: empty for a missing or empty dir. version.txt when there is one (checked
     * against the data under the lock, {@link #checkLabelAgainstData}); else --initial-version, a claim
     * checked against the data here; else what the data says, at the lowest patch of its line so that
     * patch floors apply. Where neither a label nor the data answers, refused naming what was found.
     * Reported (events) when {@code report}.
     */
    Optional<DataVersion> current(boolean report) throws IOException, MigrateException {
        if (!dataDir.exists() || !dataDir.holdsData()) {
            return Optional.empty();
        }
        Optional<DataVersion> recorded = dataDir.readVersion();
        if (recorded.isPresent()) {
            return recorded;
        }
        DataDetection.Detection detected = detect();
        if (options.initialVersion().isPresent()) {
            EtcdVersion initial = options.initialVersion().get();
            StorageApi storage = detected.storage().orElse(dataDir.inferStorage());
            DataVersion claimed = new DataVersion(initial, storage);
            if (initial.major() < 3 && dataDir.inferStorage() == StorageApi.ETCD3) {
                throw new RefusedTransitionException("--initial-version " + initial
                        + " cannot have written etcd3 data, but " + dataDir.path() + " has member/snap/db");
            }
            judge(claimed, "--initial-version/INITIAL_VERSION", detected);
            if (report) {
                log.emit(detectedEvent(detected, "checked --initial-version " + initial + " against it: agrees"));
                log.emit(new DecisionEvent.DataDirRead(
                        dataDir.path().toString(),
                        claimed.toString(),
                        "no version.txt: taking " + claimed
                                + " (version from --initial-version/INITIAL_VERSION, storage "
                                + (detected.storage().isPresent()
                                        ? "from the data"
                                        : "inferred from "
                                                + (storage == StorageApi.ETCD3
                                                        ? "member/snap/db"
                                                        : "the absence of member/snap/db"))
                                + ")"));
            }
            return Optional.of(claimed);
        }
        if (!detected.pinned() || detected.line().isEmpty()) {
            throw new RefusedTransitionException(
                    "data dir " + dataDir.path() + " holds data (" + safeContent() + ") but no version.txt,"
                            + " and the data does not say which etcd wrote it (found: "
                            + (detected.evidence().isEmpty() ? "nothing etcd writes" : detected.evidenceText())
                            + "). Set --initial-version / INITIAL_VERSION to the etcd version that last ran on it"
                            + " (its storage is inferred: member/snap/db means etcd3); `etcd-migrate inspect --data-dir "
                            + dataDir.path()
                            + "` shows what the data holds. The Kubernetes etcd image assumed 2.2.1/etcd2 for such dirs; pass"
                            + " --initial-version=2.2.1 only if that is what wrote it");
        }
        // the line is known, its patch is not: the lowest patch, so that every patch floor above it applies
        MinorLine line = detected.line().get();
        DataVersion taken = new DataVersion(
                new EtcdVersion(line.major(), line.minor(), 0),
                detected.storage().get());
        if (report) {
            log.emit(detectedEvent(
                    detected,
                    "no version.txt: planning from " + taken + " (the line's lowest patch, so patch floors apply)"));
            log.emit(new DecisionEvent.DataDirRead(
                    dataDir.path().toString(),
                    taken.toString(),
                    "no version.txt: read from the data, lowest patch" + " of etcd " + line));
        }
        return Optional.of(taken);
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
        CONTRADICTED
    }

    /**
     * A label (version.txt or --initial-version) against the oldest line that may run on the data now
     * ({@link DataDetection.Detection#floor}): at or above it agrees (a newer etcd may have run without the
     * cluster version having moved yet: it lags in a cluster, and for seconds after a start). Below it,
     * the one tolerated case is the next line after the label when this runner ran steps here (its
     * .etcd-migrate/etcd-output.log): an upgrade step interrupted after its etcd ran, before version.txt was
     * written, which the plan resumes. Everything else is contradicted.
     */
    static Verdict judge(MinorLine label, Optional<MinorLine> floor, boolean stepsRanHere, Catalog catalog) {
        if (floor.isEmpty() || !label.isOlderThan(floor.get())) return Verdict.AGREES;
        Optional<MinorLine> next = catalog.releases().stream()
                .map(r -> r.minorLine())
                .filter(label::isOlderThan)
                .findFirst();
        if (stepsRanHere && next.equals(floor)) return Verdict.INTERRUPTED_STEP;
        return Verdict.CONTRADICTED;
    }

    private void judge(DataVersion label, String source, DataDetection.Detection detected)
            throws IOException, MigrateException {
        if (detected.floor().isEmpty()
                || !label.version().line().isOlderThan(detected.floor().get())) return; // agrees: no catalog needed
        Verdict verdict = judge(
                label.version().line(),
                detected.floor(),
                Files.isRegularFile(dataDir.own().etcdOutput()),
                catalog.get());
        switch (verdict) {
            case AGREES -> {}
            case INTERRUPTED_STEP ->
                log.emit(new DecisionEvent.InterruptedStepFound(
                        dataDir.path().toString(),
                        source + " " + label,
                        detected.floor().orElseThrow().toString(),
                        detected.evidence().stream().map(Object::toString).toList()));
            case CONTRADICTED ->
                throw new DataDir.ContradictionException(source + " says " + label + " but the data says etcd "
                        + detected.floor().orElseThrow() + " or newer ran on it (" + detected.evidenceText()
                        + "): etcd "
                        + label.version().line() + " cannot run on it. `etcd-migrate inspect --data-dir "
                        + dataDir.path()
                        + "` shows the data's evidence. Write the version that really ran last into version.txt"
                        + " (or INITIAL_VERSION)");
        }
    }

    /** The member dir's layout and WAL location against what version.txt and etcd's flags say. */
    void crossCheck(DataVersion recorded) throws IOException, MigrateException {
        dataDir.checkAgainst(recorded, options.walDir());
    }

    /**
     * version.txt against the data: a label older than the data's cluster or storage version (or, where
     * the data records neither, than the newest line its records prove) is refused, every line alike;
     * see {@link #judge(MinorLine, Optional, boolean, Catalog)} for the one tolerated case. The WAL is read
     * only when the db and the snapshot are silent, so a no-op start stays cheap.
     */
    void checkLabelAgainstData(DataVersion recorded) throws IOException, MigrateException {
        // a restart's fast path: the db's recorded versions at or below the label need no catalog and no full read
        Optional<MinorLine> recordedFloor = DataDetection.recordedFloor(dataDir.path());
        if (recordedFloor.isPresent() && !recorded.version().line().isOlderThan(recordedFloor.get())) return;
        DataDetection.Detection detected = detect();
        if (detected.unreadable().isPresent()) {
            // not a db (or snapshot) this reader understands: the step's etcd judges it when it starts on it
            log.emit(new DecisionEvent.StorageVersionUnread(
                    dataDir.member().resolve("snap").resolve("db").toString(),
                    detected.unreadable().get()));
        }
        judge(recorded, "version.txt", detected);
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
