package dev.etcdmigrate.inspect;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.datadir.Backups;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.decide.DamageExplanation;
import dev.etcdmigrate.decide.DataDirState;
import dev.etcdmigrate.decide.DataRead;
import dev.etcdmigrate.decide.LabelJudgement;
import dev.etcdmigrate.decide.StartDecision;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.inspect.InspectReport.Backup;
import dev.etcdmigrate.inspect.InspectReport.DamageSection;
import dev.etcdmigrate.inspect.InspectReport.Db;
import dev.etcdmigrate.inspect.InspectReport.EvidenceItem;
import dev.etcdmigrate.inspect.InspectReport.Label;
import dev.etcdmigrate.inspect.InspectReport.MemberItem;
import dev.etcdmigrate.inspect.InspectReport.Target;
import dev.etcdmigrate.inspect.InspectReport.V2Store;
import dev.etcdmigrate.inspect.InspectReport.Wal;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.BackendStorageVersion;
import dev.etcdmigrate.ondisk.ClusterVersion;
import dev.etcdmigrate.ondisk.Damage;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.restore.RestoreMarker;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * {@code etcd-migrate inspect --data-dir D [-o json]}: what the data says, offline. Reads only, and once
 * ({@link #read}): no lock, no etcd, no file written, so it also runs while an etcd holds the data (the report
 * says so). The report ({@link InspectReport}) is built from what was read ({@link #build}, pure: per target the
 * decision migrate and plan make, {@link StartDecision#decide}) and rendered by {@link InspectText} or
 * {@link InspectJson}.
 */
public final class InspectCommand {

    private final Log log;

    public InspectCommand(Log log) {
        this.log = log;
    }

    /**
     * @param format -o/--output as given, else text
     * @param nameFlag whether --name (or ETCD_NAME) was given
     */
    public int run(String format, boolean nameFlag, RunConfig options, Catalog catalog, PrintStream out)
            throws Exception {
        if (!format.equals("text") && !format.equals("json")) {
            throw new UsageException("-o/--output must be text or json, not '" + format + "'");
        }
        // the placeholder name inspect runs with unless one is given is not checked against the data's
        boolean nameGiven = nameFlag || options.etcd().get("name").isPresent();
        InspectReport report = build(read(options, catalog, log), options, catalog, nameGiven);
        out.println(format.equals("json") ? InspectJson.render(report) : InspectText.render(report));
        return ExitStatus.OK.code();
    }

    /**
     * Everything the report says, as read. {@code start}: what a start reads, for every target ({@link
     * DataDirState#readForEveryTarget}), empty where version.txt cannot be parsed ({@code malformed}: why);
     * {@code installed}: the catalog's releases whose etcd is here to run; {@code backups}: this data dir's
     * complete backups, oldest first, each with its version.txt (null where it has none).
     */
    record Reading(
            Path dataDir,
            boolean exists,
            DataDetection.Detection detected,
            OptionalLong holder,
            boolean dbExists,
            Optional<DataRead> start,
            Optional<String> malformed,
            Set<EtcdVersion> installed,
            List<Backup> backups) {}

    /** The one read: a dir that does not exist is read as a start meets it (a new, empty cluster), not refused. */
    static Reading read(RunConfig options, Catalog catalog, Log log) throws IOException, MigrateException {
        DataDir dataDir = new DataDir(options.dataDir());
        DataDirState state = new DataDirState(dataDir, options, log, StartDecision.once(catalog));
        DataDetection.Detection d = state.detectFully();
        Path db = dataDir.member().resolve("snap").resolve("db");
        boolean dbExists = Files.isRegularFile(db);
        OptionalLong holder = dbExists ? BackendStorageVersion.lockHolder(db) : OptionalLong.empty();
        Optional<DataRead> start = Optional.empty();
        Optional<String> malformed = Optional.empty();
        try {
            start = Optional.of(state.readForEveryTarget(d));
        } catch (DataDir.MalformedVersionFileException e) {
            malformed = Optional.of(e.getMessage());
        }
        var installed = DataDirState.installed(options);
        Set<EtcdVersion> here = new HashSet<>();
        for (Release release : catalog.releases()) {
            if (installed.test(release.etcdVersion())) here.add(release.etcdVersion());
        }
        return new Reading(
                dataDir.path(),
                dataDir.exists(),
                d,
                holder,
                dbExists,
                start,
                malformed,
                Set.copyOf(here),
                backups(options, dataDir));
    }

    /**
     * The member dirs restores from snapshots kept (never deleted, no version.txt: docs/restore.md), then the backups a
     * migration counts as this data dir's ({@link Backups#complete}), oldest first.
     */
    private static List<Backup> backups(RunConfig options, DataDir dataDir) throws IOException {
        List<Backup> out = new ArrayList<>();
        if (Files.isDirectory(dataDir.own().restoreBackups())) {
            try (java.util.stream.Stream<Path> kept = Files.list(dataDir.own().restoreBackups())) {
                for (Path p : kept.sorted().toList()) {
                    if (Files.isDirectory(p.resolve("member")))
                        out.add(new Backup(p.resolve("member").toString(), null));
                }
            }
        }
        Backups backups = new Backups(
                dataDir, options.backupDir(), options.backupRetention(), options.name(), Log.text(System.err));
        for (Path p : backups.complete()) {
            Path v = p.resolve(DataDir.VERSION_FILE);
            out.add(new Backup(
                    p.toString(), Files.isRegularFile(v) ? Files.readString(v).strip() : null));
        }
        return out;
    }

    /** The report from what was read: reads nothing. */
    static InspectReport build(Reading r, RunConfig options, Catalog catalog, boolean nameGiven) {
        DataDetection.Detection d = r.detected();
        String access = (r.exists()
                        ? "read offline: no lock taken, no etcd started, nothing written"
                        : "does not exist: nothing to read (a start creates it)")
                + (r.holder().isPresent()
                        ? "; process " + r.holder().getAsLong() + " holds the db open (an etcd is running on this"
                                + " data): what it wrote since its last commit may be missing from this report"
                        : "");
        Label label = label(r, options, catalog);
        List<String> refusing = catalog.releases().stream()
                .filter(x -> x.line().v2ResidueRefused())
                .map(x -> x.minorLine().toString())
                .distinct()
                .toList();
        Path db = new DataDir(r.dataDir()).member().resolve("snap").resolve("db");
        return new InspectReport(
                InspectReport.SCHEMA,
                r.dataDir().toString(),
                access,
                r.holder().isPresent() ? r.holder().getAsLong() : null,
                d.holdsEtcdData(),
                str(d.storage()),
                str(d.line()),
                str(d.floor()),
                d.pinned(),
                d.evidence().stream()
                        .map(e -> new EvidenceItem(e.where(), e.found(), str(e.line())))
                        .toList(),
                label,
                d.clusterVersion().map(ClusterVersion::version).orElse(null),
                d.clusterVersion().map(ClusterVersion::where).orElse(null),
                d.storageVersion().orElse(null),
                d.clusterId().orElse(null),
                d.memberId().orElse(null),
                d.members().stream()
                        .map(m -> new MemberItem(m.id(), m.name(), m.peerUrls(), m.learner()))
                        .toList(),
                r.dbExists()
                        ? new Db(
                                db.toString(),
                                d.dbBytes().isPresent() ? d.dbBytes().getAsLong() : null,
                                d.dbBytesInUse().isPresent() ? d.dbBytesInUse().getAsLong() : null)
                        : null,
                d.alarms().stream()
                        .map(a -> new InspectReport.AlarmItem(a.type(), a.memberId()))
                        .toList(),
                d.walDir().map(w -> new Wal(w.toString(), d.walSegments())).orElse(null),
                new V2Store(
                        d.snapshot().map(Path::toString).orElse(null),
                        d.v2KeysOutsideMembership(),
                        d.v2WritesInWal(),
                        d.v2KeysOutsideMembership() + d.v2WritesInWal() > 0 ? refusing : List.of()),
                d.downgradeTarget().orElse(null),
                r.backups(),
                targets(r, options, catalog, nameGiven),
                damage(r, options));
    }

    /** Whether the data dir's restore marker says its restore left {@code label} in version.txt. */
    private static boolean restoredAs(Path dataDir, DataVersion label) {
        try {
            return RestoreMarker.read(new DataDir(dataDir).own().restoreMarker())
                    .filter(m -> m.restoredAs(label.version().toString()))
                    .isPresent();
        } catch (IOException unreadable) {
            return false; // judged from the data alone; a start reports the marker itself
        }
    }

    /** version.txt (or --initial-version) against the data, as a start would judge it. */
    private static Label label(Reading r, RunConfig options, Catalog catalog) {
        if (r.malformed().isPresent()) {
            return new Label("version.txt", null, "malformed", r.malformed().get());
        }
        DataRead read = r.start().orElseThrow();
        DataDetection.Detection d = r.detected();
        if (!read.holdsData()) {
            return new Label(
                    "none",
                    null,
                    "no-data",
                    "the data dir " + (r.exists() ? "holds no etcd data" : "does not exist")
                            + ": a start (plan, migrate) warns (event new-cluster) and the target etcd starts a new,"
                            + " empty cluster there");
        }
        StartDecision.Label decided = StartDecision.label(read, StartDecision.Flags.of(options));
        String source = decided.source();
        Optional<DataVersion> claimed = decided.claimed();
        if (claimed.isEmpty()) {
            return new Label(
                    source,
                    null,
                    d.pinned() ? "absent" : "absent-and-data-silent",
                    d.pinned()
                            ? "no version.txt: a migration plans from the data ("
                                    + d.line().orElseThrow() + ", lowest patch)"
                            : "no version.txt and the data does not pin its line: a migration is refused without --initial-version");
        }
        if (source.equals("version.txt") && restoredAs(r.dataDir(), claimed.get())) {
            // as a start takes it (DataDirState.checkLabelAgainstData): the label this runner's restore wrote
            return new Label(
                    source,
                    claimed.get().toString(),
                    "agrees",
                    "the runner's restore from a snapshot wrote it with "
                            + claimed.get().version() + "'s tool; the"
                            + " data keeps the snapshot's records of its line until the restored cluster's etcd"
                            + " first runs");
        }
        LabelJudgement.Verdict verdict = StartDecision.verdict(claimed.get(), read.stepsRanHere(), d, catalog);
        String reason = switch (verdict) {
            case AGREES ->
                d.floor()
                        .map(f -> "the data's line " + f + " is not newer than " + claimed.get())
                        .orElse("the data records no line");
            case INTERRUPTED_STEP ->
                "the data is one line ahead (" + d.floor().orElseThrow() + "): a step of this runner was interrupted"
                        + " after its etcd ran; a start resumes it";
            case CONTRADICTED ->
                source + " says " + claimed.get() + " but the data says etcd "
                        + d.floor().orElseThrow() + " or newer ran on it: a start refuses (exit 3)";
            case AHEAD_OF_DATA ->
                source + " says " + claimed.get() + " but the data records its cluster at etcd "
                        + d.floor().orElseThrow() + ", and etcd "
                        + claimed.get().version().line()
                        + " runs only on data of a cluster at "
                        + LabelJudgement.opensDataFrom(claimed.get().version().line(), catalog)
                                .orElseThrow()
                        + " or newer: a start refuses (exit 3)";
        };
        return new Label(
                source,
                claimed.get().toString(),
                verdict == LabelJudgement.Verdict.AHEAD_OF_DATA
                        ? "contradicted" // the same verdict in the schema: a start refuses it
                        : verdict.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'),
                reason);
    }

    /**
     * Per bundled release, what a start with the same flags would do ({@link StartDecision#decide}, the decision
     * migrate and plan make): its steps and a cluster member's legs, or its refusal. A version.txt that cannot be
     * parsed refuses every target.
     */
    private static List<Target> targets(Reading r, RunConfig options, Catalog catalog, boolean nameGiven) {
        StartDecision.Flags flags = nameGiven
                ? StartDecision.Flags.of(options)
                : StartDecision.Flags.of(options).withoutName();
        List<Target> targets = new ArrayList<>();
        for (Release release : catalog.releases()) {
            StorageApi storage = release.line().v3Api() ? StorageApi.ETCD3 : StorageApi.ETCD2;
            DataVersion target = new DataVersion(release.etcdVersion(), storage);
            if (r.malformed().isPresent()) {
                targets.add(new Target(
                        release.version(),
                        storage.toString(),
                        null,
                        r.malformed().get()));
                continue;
            }
            StartDecision.Decision decision = StartDecision.decide(
                    r.start().orElseThrow(),
                    flags.withTarget(target),
                    StartDecision.once(catalog),
                    r.installed()::contains);
            Optional<String> refused = decision.refusal();
            if (refused.isPresent()) {
                targets.add(new Target(release.version(), storage.toString(), null, refused.get()));
                continue;
            }
            targets.add(new Target(
                    release.version(),
                    storage.toString(),
                    decision.plan().orElseThrow().steps().stream()
                            .map(s -> s.describe())
                            .toList(),
                    null,
                    decision.legs()));
        }
        return targets;
    }

    private static DamageSection damage(Reading r, RunConfig options) {
        Optional<Path> newest = r.backups().isEmpty()
                ? Optional.empty()
                : Optional.of(Path.of(r.backups().getLast().path()));
        // the whole read's findings and those of the check of every db page a start makes, each once
        List<Damage> found = new ArrayList<>(r.detected().damage());
        r.start().flatMap(s -> s.damage().everyDbPage()).ifPresent(found::addAll);
        return DamageExplanation.facts(
                        new DataDir(r.dataDir()),
                        options,
                        found.stream().distinct().toList(),
                        Optional.empty(),
                        Optional.of(r.detected()),
                        newest)
                .map(f -> new DamageSection(
                        f.files(),
                        "nothing (inspect only reads)",
                        f.backup().map(Path::toString).orElse(null),
                        f.wayBack()))
                .orElse(null);
    }

    private static String str(Optional<?> o) {
        return o.map(Object::toString).orElse(null);
    }
}
