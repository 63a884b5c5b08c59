package dev.etcdmigrate.decide;

import dev.etcdmigrate.catalog.CatalogSource;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.BackendAuth;
import dev.etcdmigrate.ondisk.BackendDowngrade;
import dev.etcdmigrate.ondisk.BackendStorageVersion;
import dev.etcdmigrate.ondisk.Damage;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.ondisk.DataRecords;
import dev.etcdmigrate.ondisk.DbPageCheck;
import dev.etcdmigrate.ondisk.OwnMember;
import dev.etcdmigrate.restore.RestoreMarker;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Predicate;

/**
 * What the data dir holds, as far as the runner can prove it: the version that wrote it (version.txt,
 * --initial-version, or what the data itself says: {@link DataDetection}), every label checked against
 * the data and the member dir. Reads only.
 */
public final class DataDirState {

    private final DataDir dataDir;
    private final RunConfig options;
    private final Log log;
    private final CatalogSource catalog; // read when detection needs it
    // the walk started ahead, the read before the lock and the one under it walk an unchanged db's pages once
    private final DbPageCheck dbPages = DbPageCheck.ofThisRun();

    /** Whether the data dir existed when the run began (a migration creates a missing one before its lock). */
    private final boolean existed;

    public DataDirState(DataDir dataDir, RunConfig options, Log log, CatalogSource catalog) {
        this.existed = dataDir.exists();
        this.dataDir = dataDir;
        this.options = options;
        this.log = log;
        this.catalog = catalog;
    }

    /**
     * Whose etcd is here to run: in the bin dir, and in BUNDLED_VERSIONS if that is set. The bin dir is read per
     * version asked, so a start whose plan needs no etcd reads it for none.
     */
    public static Predicate<EtcdVersion> installed(RunConfig options) {
        BinDir binDir = new BinDir(options.binDir());
        return v -> options.bundledVersions().map(b -> b.contains(v)).orElse(true) && binDir.hasEtcd(v);
    }

    /** What the data says wrote it (reads only; the WAL only when the db and the snapshot are silent). */
    public DataDetection.Detection detect() throws IOException, UsageException {
        return DataDetection.detect(dataDir.path(), options.walDir(), catalog.get(), false);
    }

    /**
     * Starts the walk of every db page now, beside the run's other reads (the members from the WAL), where the start
     * will ask for it ({@link DataRead#readsEveryDbPage}); {@link #read} reuses its finding. Nothing is reported here.
     */
    public static void checkDbAhead(RunConfig options) {
        if (options.restore().isPresent()) return; // the snapshot replaces the db first
        DataDir dir = new DataDir(options.dataDir());
        try {
            if (!dir.exists() || !dir.holdsData()) return;
            if (!DataRead.readsEveryDbPage(dir.readVersion(), options.target())) return;
            Path db = options.dataDir().resolve("member").resolve("snap").resolve("db");
            if (Files.isRegularFile(db) && Files.size(db) > 0)
                DbPageCheck.ofThisRun().startAhead(db);
        } catch (IOException | MigrateException | RuntimeException e) {
            // the decision reads the data dir again and reports what it finds
        }
    }

    /** What a start reads of the data dir; the data itself only where version.txt does not answer. */
    public DataRead read() throws IOException, MigrateException {
        boolean holds = dataDir.exists() && dataDir.holdsData();
        Optional<DataVersion> recorded = holds ? dataDir.readVersion() : Optional.empty();
        boolean detect = holds && recorded.isEmpty();
        // one damage read, the one this target needs: every db page unless version.txt names the target
        boolean everyPage = DataRead.readsEveryDbPage(recorded, options.target());
        Optional<List<Damage>> found = holds
                ? Optional.of(DataRecords.damageFound(dataDir.path(), options.walDir(), everyPage, dbPages))
                : Optional.empty();
        return new DataRead(
                dataDir.path(),
                holds,
                recorded,
                dataDir.inferStorage(),
                detect ? Optional.of(detect()) : Optional.empty(),
                Files.isRegularFile(dataDir.own().etcdOutput()),
                detect ? safeContent() : "",
                holds ? OwnMember.read(dataDir.path(), options.walDir()) : Optional.empty(),
                found.isEmpty()
                        ? DataRead.DamageFound.NONE
                        : everyPage
                                ? new DataRead.DamageFound(found, Optional.empty())
                                : new DataRead.DamageFound(Optional.empty(), found),
                // a restart at the target plans no step: its db is not asked
                holds && everyPage && authEnabled(),
                holds && everyPage ? downgradeJob() : Optional.empty());
    }

    /** Everything, for the whole report (inspect): WAL included, in {@code detected}, the very thing judged. */
    public DataDetection.Detection detectFully() throws IOException, UsageException {
        return DataDetection.detect(dataDir.path(), options.walDir(), catalog.get(), true);
    }

    /**
     * What a start for any target reads (inspect's per-target decisions): {@code detected} (a full read,
     * {@link #detectFully}) whether version.txt answers or not, and both damage reads.
     */
    public DataRead readForEveryTarget(DataDetection.Detection detected) throws IOException, MigrateException {
        // a version.txt that cannot be parsed is refused even beside no data (inspect reports it as such)
        Optional<DataVersion> versionTxt = dataDir.readVersion();
        boolean holds = dataDir.exists() && dataDir.holdsData();
        Optional<DataVersion> recorded = holds ? versionTxt : Optional.empty();
        Optional<OwnMember> member = OwnMember.read(dataDir.path(), options.walDir());
        return new DataRead(
                dataDir.path(),
                holds,
                recorded,
                dataDir.inferStorage(),
                Optional.of(detected),
                Files.isRegularFile(dataDir.own().etcdOutput()),
                holds && recorded.isEmpty() ? dataDir.describeContent() : "",
                holds ? member : Optional.empty(),
                holds
                        ? new DataRead.DamageFound(
                                Optional.of(DataRecords.damageFound(dataDir.path(), options.walDir(), true)),
                                Optional.of(
                                        recorded.isPresent()
                                                ? DataRecords.damageFound(dataDir.path(), options.walDir(), false)
                                                : List.of()))
                        : DataRead.DamageFound.NONE,
                authEnabled(),
                downgradeJob());
    }

    /** Whether the db records etcd's auth as enabled; a db that cannot say: no (its damage is reported as such). */
    private boolean authEnabled() {
        try {
            return BackendAuth.enabled(dataDir.member().resolve("snap").resolve("db"));
        } catch (IOException unreadable) {
            return false;
        }
    }

    /** The downgrade job the db records as in progress; a db that cannot say: none (its damage is reported). */
    private Optional<MinorLine> downgradeJob() {
        try {
            return BackendDowngrade.job(dataDir.member().resolve("snap").resolve("db"));
        } catch (IOException unreadable) {
            return Optional.empty();
        }
    }

    /**
     * A start's decision ({@link StartDecision#decide}) from one {@link #read}: its start refusal thrown, the
     * plan's and the auth refusal kept for the caller to meet in its order. Reported (events) when {@code
     * report}, and only then: a start reads twice (before and under the lock).
     */
    public StartDecision.Decision decide(boolean report) throws IOException, MigrateException {
        DataRead read = read();
        StartDecision.Decision decision =
                StartDecision.decide(read, StartDecision.Flags.of(options), catalog, installed(options));
        StartDecision.Start start = decision.startOrThrow();
        if (report && !read.holdsData()) {
            log.emit(new DecisionEvent.NewCluster(
                    dataDir.path().toString(), existed, options.target().toString(), options.joinsRunningCluster()));
        }
        if (report && read.detection().isPresent() && start.current().isPresent()) {
            DataDetection.Detection detected = read.detection().get();
            DataVersion taken = start.current().get();
            if (start.source().equals("--initial-version")) {
                if (start.verdict() == LabelJudgement.Verdict.INTERRUPTED_STEP)
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
        return decision;
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

    /** The member dir's layout and WAL location against what version.txt and etcd's flags say. */
    public void crossCheck(DataVersion recorded) throws IOException, MigrateException {
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
     * see {@link LabelJudgement#judge} for the one tolerated case. The WAL is read
     * only when the db and the snapshot are silent, so a no-op start stays cheap.
     */
    public void checkLabelAgainstData(DataVersion recorded) throws IOException, MigrateException {
        checkLabelAgainstData(recorded, true);
    }

    /** {@code report}: emit what was found (a start judges twice: before the plan and under the lock). */
    public void checkLabelAgainstData(DataVersion recorded, boolean report) throws IOException, MigrateException {
        // a restart's fast path: the db's recorded versions at or below the label need no catalog and no full read
        Optional<MinorLine> recordedFloor = DataDetection.recordedFloor(dataDir.path());
        MinorLine label = recorded.version().line();
        if (recordedFloor.isPresent()
                && !label.isOlderThan(recordedFloor.get())
                && (label.equals(recordedFloor.get())
                        || LabelJudgement.opensDataFrom(label, catalog.get())
                                .filter(from -> !recordedFloor.get().isOlderThan(from))
                                .isPresent())) return;
        // a restore into an older line (catalog: the snapshot's line goes down by a snapshot restore) leaves the
        // snapshot's records of its newer line in the db until the restored cluster's etcd first runs; version.txt is
        // what this runner's restore wrote then, the release whose tool restored the data
        if (restoredAs(recorded)) return;
        DataDetection.Detection detected = detect();
        if (LabelJudgement.judge(label, detected.floor(), LabelJudgement.recordedFloor(detected), false, catalog.get())
                == LabelJudgement.Verdict.AHEAD_OF_DATA) {
            // a refusal reads everything first: the WAL may hold what the db has not applied yet
            detected = DataDetection.detect(dataDir.path(), options.walDir(), catalog.get(), true);
        }
        if (report && detected.unreadable().isPresent()) {
            // not a db (or snapshot) this reader understands: the step's etcd judges it when it starts on it
            log.emit(new DecisionEvent.StorageVersionUnread(
                    dataDir.member().resolve("snap").resolve("db").toString(),
                    detected.unreadable().get()));
        }
        if (StartDecision.judge(
                                recorded,
                                "version.txt",
                                dataDir.path(),
                                Files.isRegularFile(dataDir.own().etcdOutput()),
                                detected,
                                catalog)
                        == LabelJudgement.Verdict.INTERRUPTED_STEP
                && report) {
            interrupted(recorded, "version.txt", detected);
        }
    }

    /** Whether the restore marker says this runner's restore left {@code recorded} in version.txt. */
    private boolean restoredAs(DataVersion recorded) {
        try {
            return RestoreMarker.read(dataDir.own().restoreMarker())
                    .filter(m -> m.restoredAs(recorded.version().toString()))
                    .isPresent();
        } catch (IOException unreadable) {
            return false; // judged from the data alone; a restore asked for reports the marker itself
        }
    }

    /** A db an etcd holds open is refused before steps: etcd (and etcdutl) would wait on its lock. */
    public void refuseHeldDb() throws IOException, MigrateException {
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
