package dev.etcdmigrate.run;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.cluster.RolloutCoordinator;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.datadir.Backups;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.log.Json;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.BackendAuth;
import dev.etcdmigrate.ondisk.BackendStorageVersion;
import dev.etcdmigrate.ondisk.Damage;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.ondisk.DataRecords;
import dev.etcdmigrate.ondisk.OwnMember;
import dev.etcdmigrate.plan.Plan;
import dev.etcdmigrate.plan.RolloutChain;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * {@code etcd-migrate inspect --data-dir D [-o json]}: what the data says, offline. Reads only: no lock, no
 * etcd, no file written, so it also runs while an etcd holds the data (the report says so). The JSON
 * form is {@link Report} (docs/inspect.md documents it; fields are only ever added).
 */
public final class InspectCommand {

    /** The report's schema version: bumped only if a field changes meaning or goes away. */
    static final int SCHEMA = 1;

    public record EvidenceItem(String where, String found, String line) {}

    public record MemberItem(String id, String name, List<String> peerUrls, boolean learner) {}

    public record AlarmItem(String type, String memberId) {}

    public record Label(String source, String value, String verdict, String reason) {}

    public record Db(String path, Long bytes, Long bytesInUse) {}

    public record Wal(String dir, int segments) {}

    public record V2Store(
            String snapshot, long keysOutsideMembership, long v2WritesInWal, List<String> linesRefusingIt) {}

    public record Backup(String path, String version) {}

    /**
     * {@code legs}: for a member of a cluster (--initial-cluster names several) whose plan crosses several minors,
     * the restarts it walks them in (the same legs `plan` shows); empty otherwise.
     */
    public record Target(
            String version, String storage, List<String> steps, String refused, List<DecisionEvent.PlannedLeg> legs) {
        public Target {
            legs = legs == null ? List.of() : List.copyOf(legs);
        }

        Target(String version, String storage, List<String> steps, String refused) {
            this(version, storage, steps, refused, List.of());
        }
    }

    /**
     * Damage the readers met (null when none): each finding as "file (where): expected", that inspect changed
     * nothing, and the way back a start would name (the runner's newest backup of this member, else an etcd
     * snapshot restore for its name and peers).
     */
    public record DamageSection(List<String> files, String changed, String backup, String wayBack) {}

    public record Report(
            int schema,
            String dataDir,
            String access,
            Long heldByPid,
            boolean holdsEtcdData,
            String storage,
            String writtenBy,
            String floor,
            boolean pinned,
            List<EvidenceItem> evidence,
            Label label,
            String clusterVersion,
            String clusterVersionFrom,
            String storageVersion,
            String clusterId,
            String memberId,
            List<MemberItem> members,
            Db db,
            List<AlarmItem> alarms,
            Wal wal,
            V2Store v2,
            String downgradeTarget,
            List<Backup> backups,
            List<Target> targets,
            DamageSection damage) {}

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
        Report report = report(options, catalog, nameGiven);
        out.println(format.equals("json") ? Json.object(report) : text(report));
        return ExitStatus.OK.code();
    }

    static Report report(RunConfig options, Catalog catalog, boolean nameGiven) throws IOException, MigrateException {
        DataDir dataDir = new DataDir(options.dataDir());
        // a dir that does not exist is reported as a start meets it (a new, empty cluster), not refused
        DataDetection.Detection d = DataDetection.detect(dataDir.path(), options.walDir(), catalog, true);
        Path db = dataDir.member().resolve("snap").resolve("db");
        OptionalLong holder = Files.isRegularFile(db) ? BackendStorageVersion.lockHolder(db) : OptionalLong.empty();
        String access = (dataDir.exists()
                        ? "read offline: no lock taken, no etcd started, nothing written"
                        : "does not exist: nothing to read (a start creates it)")
                + (holder.isPresent()
                        ? "; process " + holder.getAsLong() + " holds the db open (an etcd is running on this data):"
                                + " what it wrote since its last commit may be missing from this report"
                        : "");

        Label label = label(dataDir, options, d, catalog);
        Optional<OwnMember> member = OwnMember.read(dataDir.path(), options.walDir());
        List<Target> targets = targets(dataDir, options, d, catalog, label, member, nameGiven);
        List<String> refusing = catalog.releases().stream()
                .filter(r -> r.line().v2ResidueRefused())
                .map(r -> r.minorLine().toString())
                .distinct()
                .toList();
        return new Report(
                SCHEMA,
                dataDir.path().toString(),
                access,
                holder.isPresent() ? holder.getAsLong() : null,
                d.holdsEtcdData(),
                str(d.storage()),
                str(d.line()),
                str(d.floor()),
                d.pinned(),
                d.evidence().stream()
                        .map(e -> new EvidenceItem(e.where(), e.found(), str(e.line())))
                        .toList(),
                label,
                d.clusterVersion().map(DataDetection.ClusterVersion::version).orElse(null),
                d.clusterVersion().map(DataDetection.ClusterVersion::where).orElse(null),
                d.storageVersion().orElse(null),
                d.clusterId().orElse(null),
                d.memberId().orElse(null),
                d.members().stream()
                        .map(m -> new MemberItem(m.id(), m.name(), m.peerUrls(), m.learner()))
                        .toList(),
                Files.isRegularFile(db)
                        ? new Db(
                                db.toString(),
                                d.dbBytes().isPresent() ? d.dbBytes().getAsLong() : null,
                                d.dbBytesInUse().isPresent() ? d.dbBytesInUse().getAsLong() : null)
                        : null,
                d.alarms().stream()
                        .map(a -> new AlarmItem(a.type(), a.memberId()))
                        .toList(),
                d.walDir().map(w -> new Wal(w.toString(), d.walSegments())).orElse(null),
                new V2Store(
                        d.snapshot().map(Path::toString).orElse(null),
                        d.v2KeysOutsideMembership(),
                        d.v2WritesInWal(),
                        d.v2KeysOutsideMembership() + d.v2WritesInWal() > 0 ? refusing : List.of()),
                d.downgradeTarget().orElse(null),
                backups(options, dataDir),
                targets,
                damage(dataDir, options, d));
    }

    /** version.txt (or --initial-version) against the data, as a start would judge it. */
    private static Label label(DataDir dataDir, RunConfig options, DataDetection.Detection d, Catalog catalog)
            throws IOException {
        Optional<DataVersion> recorded;
        try {
            recorded = dataDir.readVersion();
        } catch (DataDir.MalformedVersionFileException e) {
            return new Label("version.txt", null, "malformed", e.getMessage());
        }
        if (!dataDir.exists() || !dataDir.holdsData()) {
            return new Label(
                    "none",
                    null,
                    "no-data",
                    "the data dir " + (dataDir.exists() ? "holds no etcd data" : "does not exist")
                            + ": a start (plan, migrate) warns (event new-cluster) and the target etcd starts a new,"
                            + " empty cluster there");
        }
        String source = recorded.isPresent()
                ? "version.txt"
                : options.initialVersion().isPresent() ? "--initial-version" : "none";
        Optional<DataVersion> claimed = recorded.or(() ->
                options.initialVersion().map(v -> new DataVersion(v, d.storage().orElse(dataDir.inferStorage()))));
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
        DataDirState.Verdict verdict = DataDirState.judge(
                claimed.get().version().line(),
                d.floor(),
                DataDirState.recordedFloor(d),
                Files.isRegularFile(dataDir.own().etcdOutput()),
                catalog);
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
                        + DataDirState.opensDataFrom(claimed.get().version().line(), catalog)
                                .orElseThrow()
                        + " or newer: a start refuses (exit 3)";
        };
        return new Label(
                source,
                claimed.get().toString(),
                verdict == DataDirState.Verdict.AHEAD_OF_DATA
                        ? "contradicted" // the same verdict in the schema: a start refuses it
                        : verdict.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'),
                reason);
    }

    /**
     * Per bundled release, what a start with the same flags would do ({@link StartDecision}, the decision
     * migrate and plan make): its steps, or its refusal. A version.txt that cannot be parsed refuses every target.
     */
    private static List<Target> targets(
            DataDir dataDir,
            RunConfig options,
            DataDetection.Detection d,
            Catalog catalog,
            Label label,
            Optional<OwnMember> member,
            boolean nameGiven)
            throws IOException, MigrateException {
        StartDecision.Flags flags = nameGiven
                ? StartDecision.Flags.of(options)
                : StartDecision.Flags.of(options).withoutName();
        List<Target> targets = new ArrayList<>();
        Optional<DataVersion> recorded = Optional.empty();
        String refused = null;
        StartDecision.DataRead read = null;
        // what a start's own reading finds damaged (the same call as a start's): every db page unless version.txt
        // names the target, so per target one of the two
        List<Damage> restartDamage = List.of();
        List<Damage> stepDamage = List.of();
        if (label.verdict().equals("malformed")) {
            refused = label.reason();
        } else {
            boolean holds = dataDir.exists() && dataDir.holdsData();
            recorded = holds ? dataDir.readVersion() : Optional.empty();
            if (holds) {
                stepDamage = DataRecords.damageFound(dataDir.path(), options.walDir(), true);
                if (recorded.isPresent())
                    restartDamage = DataRecords.damageFound(dataDir.path(), options.walDir(), false);
            }
            read = new StartDecision.DataRead(
                    dataDir.path(),
                    holds,
                    recorded,
                    dataDir.inferStorage(),
                    Optional.of(d),
                    Files.isRegularFile(dataDir.own().etcdOutput()),
                    holds && recorded.isEmpty() ? dataDir.describeContent() : "",
                    holds ? member : Optional.empty(),
                    List.of());
        }
        var installed = StartDecision.installed(options);
        boolean auth = authEnabled(dataDir);
        for (Release release : catalog.releases()) {
            StorageApi storage = release.line().v3Api() ? StorageApi.ETCD3 : StorageApi.ETCD2;
            DataVersion target = new DataVersion(release.etcdVersion(), storage);
            if (refused != null) {
                targets.add(new Target(release.version(), storage.toString(), null, refused));
                continue;
            }
            try {
                StartDecision.DataRead asRead = read.withDamage(
                        StartDecision.DataRead.readsEveryDbPage(recorded, target) ? stepDamage : restartDamage);
                StartDecision.Start start =
                        StartDecision.start(asRead, flags.withTarget(target), StartDecision.once(catalog));
                if (recorded.isPresent()) {
                    // before planning (and again under the lock), a start judges version.txt against the data
                    StartDecision.judge(recorded.get(), "version.txt", asRead, d, StartDecision.once(catalog));
                }
                Plan plan = StartDecision.plan(
                        start.current(), flags.withTarget(target), StartDecision.once(catalog), installed);
                if (auth && !plan.steps().isEmpty()) {
                    targets.add(new Target(release.version(), storage.toString(), null, Migration.AUTH_REFUSAL));
                    continue;
                }
                targets.add(new Target(
                        release.version(),
                        storage.toString(),
                        plan.steps().stream().map(s -> s.describe()).toList(),
                        null,
                        switch (options.topology()) {
                            case Topology.Member cluster ->
                                RolloutChain.of(plan).planned(RolloutCoordinator.RECORD_KEY);
                            case Topology.Single single -> List.of();
                        }));
            } catch (MigrateException e) {
                targets.add(new Target(release.version(), storage.toString(), null, e.getMessage()));
            }
        }
        return targets;
    }

    /** Whether the db records etcd's auth as enabled (a start refuses steps on it); a db that cannot say: no. */
    private static boolean authEnabled(DataDir dataDir) {
        try {
            return BackendAuth.enabled(dataDir.member().resolve("snap").resolve("db"));
        } catch (IOException unreadable) {
            return false; // the report's damage section says what the readers met
        }
    }

    /** The backups a migration counts as this data dir's ({@link Backups#complete}), oldest first. */
    private static List<Backup> backups(RunConfig options, DataDir dataDir) throws IOException {
        List<Backup> out = new ArrayList<>();
        Backups backups = new Backups(
                dataDir, options.backupDir(), options.backupRetention(), options.name(), Log.text(System.err));
        for (Path p : backups.complete()) {
            Path v = p.resolve(DataDir.VERSION_FILE);
            out.add(new Backup(
                    p.toString(), Files.isRegularFile(v) ? Files.readString(v).strip() : null));
        }
        return out;
    }

    private static DamageSection damage(DataDir dataDir, RunConfig options, DataDetection.Detection d) {
        return DamageExplanation.facts(dataDir, options, d.damage(), Optional.empty(), Optional.of(d))
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

    static String text(Report r) {
        StringBuilder b = new StringBuilder();
        b.append("data dir ")
                .append(r.dataDir())
                .append(" (")
                .append(r.access())
                .append(")\n");
        if (!r.holdsEtcdData()) {
            b.append("  holds no etcd data\n");
        }
        b.append("  written by: ")
                .append(r.writtenBy() == null ? "unknown" : "etcd " + r.writtenBy())
                .append(" (")
                .append(r.storage() == null ? "no etcd storage" : r.storage())
                .append(")")
                .append(r.floor() != null && !r.floor().equals(r.writtenBy()) ? "; cluster at " + r.floor() : "")
                .append(r.pinned() ? "" : "; the data does not pin its line")
                .append('\n');
        b.append("  evidence:\n");
        for (EvidenceItem e : r.evidence()) {
            b.append("    - ")
                    .append(e.where())
                    .append(": ")
                    .append(e.found())
                    .append(e.line() == null ? "" : " (etcd " + e.line() + "+)")
                    .append('\n');
        }
        b.append("  label: ")
                .append(r.label().source())
                .append(r.label().value() == null ? "" : " " + r.label().value())
                .append(" -> ")
                .append(r.label().verdict())
                .append(": ")
                .append(r.label().reason())
                .append('\n');
        b.append("  cluster version: ")
                .append(
                        r.clusterVersion() == null
                                ? "not recorded"
                                : r.clusterVersion() + " (" + r.clusterVersionFrom() + ")")
                .append("; storage version: ")
                .append(r.storageVersion() == null ? "not recorded" : r.storageVersion())
                .append('\n');
        b.append("  cluster ID: ")
                .append(r.clusterId() == null ? "unknown" : r.clusterId())
                .append("; member ID: ")
                .append(r.memberId() == null ? "unknown" : r.memberId())
                .append('\n');
        b.append("  members (").append(r.members().size()).append("):\n");
        for (MemberItem m : r.members()) {
            b.append("    - ")
                    .append(m.id())
                    .append(' ')
                    .append(m.name().isEmpty() ? "(unnamed)" : m.name())
                    .append(' ')
                    .append(String.join(",", m.peerUrls()))
                    .append(m.learner() ? " (learner)" : "")
                    .append('\n');
        }
        if (r.db() != null) {
            b.append("  db: ")
                    .append(r.db().path())
                    .append(", ")
                    .append(r.db().bytes())
                    .append(" bytes")
                    .append(r.db().bytesInUse() == null ? "" : ", " + r.db().bytesInUse() + " in use")
                    .append('\n');
        }
        b.append("  alarms: ")
                .append(
                        r.alarms().isEmpty()
                                ? "none"
                                : String.join(
                                        ", ",
                                        r.alarms().stream()
                                                .map(a -> a.type() + " of member " + a.memberId())
                                                .toList()))
                .append('\n');
        b.append("  WAL: ")
                .append(
                        r.wal() == null
                                ? "none found"
                                : r.wal().dir() + ", " + r.wal().segments() + " segment(s)")
                .append('\n');
        b.append("  v2 store: ")
                .append(r.v2().keysOutsideMembership())
                .append(" key(s) outside membership in the snapshot, ")
                .append(r.v2().v2WritesInWal())
                .append(" v2 write(s) in the WAL")
                .append(
                        r.v2().linesRefusingIt().isEmpty()
                                ? ""
                                : " (etcd " + String.join(", ", r.v2().linesRefusingIt())
                                        + " refuses to start on such content)")
                .append('\n');
        if (r.downgradeTarget() != null)
            b.append("  downgrade in progress, target ")
                    .append(r.downgradeTarget())
                    .append('\n');
        b.append("  backups: ").append(r.backups().isEmpty() ? "none" : "").append('\n');
        for (Backup k : r.backups()) {
            b.append("    - ")
                    .append(k.path())
                    .append(k.version() == null ? "" : " (" + k.version() + ")")
                    .append('\n');
        }
        if (r.damage() == null) {
            b.append("  damage: none found\n");
        } else {
            b.append("  damage (").append(r.damage().changed()).append("):\n");
            for (String f : r.damage().files()) b.append("    - ").append(f).append('\n');
            b.append("    way back: ").append(r.damage().wayBack()).append('\n');
        }
        b.append("  targets:\n");
        for (Target t : r.targets()) {
            b.append("    - ")
                    .append(t.version())
                    .append('/')
                    .append(t.storage())
                    .append(": ");
            if (t.refused() != null) {
                b.append("refused: ").append(t.refused()).append('\n');
            } else if (t.steps().isEmpty()) {
                b.append(r.holdsEtcdData() ? "no step (a restart)\n" : "no step (a NEW, EMPTY cluster)\n");
            } else {
                b.append(t.steps().size())
                        .append(" step(s): ")
                        .append(String.join("; ", t.steps()))
                        .append('\n');
                if (!t.legs().isEmpty()) {
                    b.append("      a cluster member walks it in ")
                            .append(t.legs().size())
                            .append(" restarts:\n");
                    for (DecisionEvent.PlannedLeg leg : t.legs())
                        b.append("      ").append(leg.message()).append('\n');
                }
            }
        }
        return b.toString().stripTrailing();
    }
}
