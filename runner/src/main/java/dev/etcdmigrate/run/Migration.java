package dev.etcdmigrate.run;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.CatalogSource;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.cluster.RolloutCoordinator;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.datadir.Backups;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.DataDirLock;
import dev.etcdmigrate.datadir.MemberSwap;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.decide.DamageExplanation;
import dev.etcdmigrate.decide.DataDirState;
import dev.etcdmigrate.decide.StartDecision;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.etcd.EtcdWiring;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.binary.BinaryCheck;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.event.EventListener;
import dev.etcdmigrate.event.RestoreEvent;
import dev.etcdmigrate.event.RunEvent;
import dev.etcdmigrate.event.StepEvent;
import dev.etcdmigrate.log.ChildOutputFile;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.plan.Plan;
import dev.etcdmigrate.plan.RolloutChain;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.restore.SnapshotRestore;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Carries one data dir to the target, in this order:
 * <ol>
 *   <li>read the data dir's state and plan (the Planner; a restart at the target is a plan without steps);
 *   <li>preflight: every refusal that leaves the data dir as it was ({@link Preflight});
 *   <li>take the lock, finish what a crashed run left, read and plan again (another runner may have moved
 *       the data while this one waited), and make the checks that need the lock: the data against
 *       version.txt and etcd's flags ({@link DataDirState}), what the binaries report;
 *   <li>run the steps ({@link StepRunner}), each recorded in version.txt, then record the target.
 * </ol>
 */
public final class Migration {

    private final RunConfig options;
    private final CatalogSource catalogSource;
    private Catalog catalog;
    private final Log log;
    private final DataDir dataDir;
    private final Backups backups;
    private final BinDir binDir;
    private final DataDirState state;
    private final Preflight preflight;
    private final EtcdWiring etcd;

    /** @param catalog read only when a plan needs it: a restart at the target needs no catalog fact */
    public Migration(
            RunConfig options, CatalogSource catalog, Log log, Children children, Map<String, String> environment) {
        this.options = options;
        this.catalogSource = catalog;
        this.log = log;
        this.dataDir = new DataDir(options.dataDir());
        this.backups = new Backups(dataDir, options.backupDir(), options.backupRetention(), options.name(), log);
        this.binDir = new BinDir(options.binDir());
        this.state = new DataDirState(dataDir, options, log, this::catalog);
        this.preflight = new Preflight(options, dataDir, binDir, backups, this::catalogRelease);
        this.etcd = new EtcdWiring(options, dataDir, binDir, log, children, environment);
    }

    /**
     * The plan from the data dir as it is now, refused where a start would refuse it (version.txt against
     * the data included, as {@link #migrate} judges it under the lock); reads only.
     */
    public Plan plan() throws IOException, MigrateException {
        return decided().planOrThrow();
    }

    /**
     * The decision from the data dir as it is now ({@link DataDirState#decide}: one read; a release's etcd in the
     * bin dir, and in BUNDLED_VERSIONS if set, stands for "bundled"), version.txt judged against the data before
     * the plan's own refusal is met.
     */
    private StartDecision.Decision decided() throws IOException, MigrateException {
        StartDecision.Decision decision = state.decide(true);
        Optional<DataVersion> current = decision.startOrThrow().current();
        if (current.isPresent() && dataDir.readVersion().isPresent()) state.checkLabelAgainstData(current.get());
        decision.planOrThrow();
        return decision;
    }

    /**
     * The plan as data: steps, versions, what each keeps and about how much disk it needs (`plan`, `plan -o json`).
     * A cluster member's chain across several minors is judged as migrate judges it before anything changes: its
     * own db's auth flag, and the lines of the other members that answer (read from the cluster, read-only).
     */
    public DecisionEvent.PlanMade planEvent() throws IOException, InterruptedException, MigrateException {
        try {
            StartDecision.Decision decision = decided();
            RolloutChain chain = chainOf(decision.planOrThrow());
            if (chain.multiLeg()) {
                new ClusterRollout(options, dataDir, etcd, new StepRunner(dataDir, backups, log), log).check(chain);
            }
            decision.refuseAuth();
            DecisionEvent.PlanMade made = planEvent(decision);
            made.flags().forEach(log::emit);
            return made;
        } catch (MigrateException e) {
            throw explained(e);
        }
    }

    /**
     * With a restore asked for and not done yet: what it would do and the plan from the snapshot's line to the target
     * (the restored data's start), for {@code plan}; empty otherwise, and the data dir's own plan stands. Reads only:
     * the restore's checks run as a start runs them, and a failed one is the same refusal.
     */
    public Optional<RestorePlan> restorePlan() throws IOException, MigrateException {
        if (options.restore().isEmpty()) return Optional.empty();
        try {
            Optional<SnapshotRestore.Preview> preview =
                    new SnapshotRestore(options, dataDir, catalog(), restoreTools(), log).preview();
            if (preview.isEmpty()) return Optional.empty();
            Plan walk = StartDecision.plan(
                    Optional.of(preview.get().restored()),
                    StartDecision.Flags.of(options),
                    this::catalog,
                    DataDirState.installed(options));
            List<DecisionEvent.PlannedLeg> legs = switch (options.topology()) {
                case Topology.Member member -> RolloutChain.of(walk).planned(RolloutCoordinator.RECORD_KEY);
                case Topology.Single single -> List.of();
            };
            return Optional.of(new RestorePlan(
                    preview.get().event(),
                    walk.event(preview.get().bytes(), dataDir.path().toString(), legs)));
        } catch (MigrateException e) {
            throw explained(e);
        }
    }

    /** A restore's plan: the restore, then the walk from the restored data to the target. */
    public record RestorePlan(RestoreEvent.RestorePlanned restore, DecisionEvent.PlanMade walk) {}

    /** The run's reason with what a damaged file means and the way back, when damage caused it. */
    private MigrateException explained(MigrateException e) {
        Catalog known;
        try {
            known = catalog();
        } catch (UsageException noCatalog) {
            known = null; // the reason stands without the catalog's release names
        }
        return DamageExplanation.explain(e, dataDir, options, known);
    }

    /**
     * Every step's private etcd writes a probe key and reads keys through etcd's API, which etcd's auth refuses
     * without credentials, and the runner takes none: data whose db records auth as enabled is refused
     * ({@link StartDecision.Decision#refuseAuth}) before anything changes, not after a step's etcd ran on it and
     * waited out its start timeout. A db that cannot say is left to the damage checks (a cluster member's
     * multi-minor chain refuses it, ClusterRollout).
     */
    private DecisionEvent.PlanMade planEvent(StartDecision.Decision decision) throws IOException, MigrateException {
        Plan plan = decision.planOrThrow();
        long member = plan.steps().isEmpty() || !Files.isDirectory(dataDir.member()) ? 0 : Trees.size(dataDir.member());
        RolloutChain chain = chainOf(plan);
        // the flags after -- each etcd that runs as the member gets in its own line's spelling (EtcdWiring.argsFor)
        List<DecisionEvent.FlagTranslated> flags = new ArrayList<>();
        if (chain.multiLeg()) {
            for (Release serving : ClusterRollout.servingReleases(chain))
                flags.addAll(etcd.translations(serving, true));
        }
        catalogRelease(options.target().version()).ifPresent(t -> flags.addAll(etcd.translations(t, false)));
        return plan.event(
                        member,
                        dataDir.path() + (dataDir.exists() ? " holds no etcd data" : " does not exist"),
                        decision.legs())
                .withFlags(flags)
                .joining(ClusterLineJoin.joinsExisting(options, plan));
    }

    /** A cluster member across several minors walks one leg per minor, serving between them (ClusterRollout). */
    private RolloutChain chainOf(Plan plan) {
        return switch (options.topology()) {
            case Topology.Member member -> RolloutChain.of(plan);
            case Topology.Single single -> new RolloutChain(List.of());
        };
    }

    /**
     * The migrated data dir, its lock still held: the caller execs etcd (which closes the lock, and etcd's
     * own WAL lock takes over) or closes it, so no second runner slips in between.
     */
    public record Done(DataVersion version, DataDirLock lock, List<String> etcdArgs) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            lock.close();
        }
    }

    /**
     * Migrates; returns the version now recorded in version.txt (the target), with the lock held. A run that
     * ends on damaged data says which file, what was changed and the way back ({@link DamageExplanation}).
     */
    public Done migrate() throws Exception {
        return migrate(etcd.binaryCheck());
    }

    /**
     * Starts the target etcd's question ({@code etcd <args> --version}) now, before anything reads the data: it needs
     * no plan and no topology (the arguments after -- are the operator's). The answer is judged under the lock by
     * {@link #migrate(BinaryCheck)} of a run with the same options but for their topology. The steps' binaries that
     * the plan from version.txt's claim would ask are started too: the data may say otherwise, and then the plan
     * under the lock asks its own and only waits for these.
     */
    public BinaryCheck askTargetAhead() throws IOException {
        BinaryCheck binaries = etcd.binaryCheck();
        etcd.startAsking(List.of(), List.of(), binaries, this::catalogRelease);
        try {
            Optional<DataVersion> claimed = dataDir.exists() ? dataDir.readVersion() : Optional.empty();
            if (claimed.isPresent()) {
                Plan claimedPlan = StartDecision.plan(
                        claimed, StartDecision.Flags.of(options), this::catalog, DataDirState.installed(options));
                etcd.startAsking(claimedPlan.steps(), List.of(), binaries, this::catalogRelease);
            }
        } catch (IOException | MigrateException | RuntimeException e) {
            // the decision reads version.txt again and reports it; the plan under the lock asks what it needs
        }
        return binaries;
    }

    /** {@link #migrate()} with the binaries' answers of an earlier start and the questions started ahead. */
    public Done migrate(BinaryCheck binaries) throws Exception {
        try {
            return migrateUnexplained(binaries);
        } catch (MigrateException e) {
            throw explained(e);
        } catch (dev.etcdmigrate.ondisk.DamagedFileException e) {
            // a reader's finding no caller turned into a reason: still the run's reason, explained
            throw DamageExplanation.explain(
                    new dev.etcdmigrate.error.FailedException(e.getMessage(), e), dataDir, options, null);
        }
    }

    private Done migrateUnexplained(BinaryCheck binaries) throws Exception {
        if (options.restore().isPresent()) {
            // before anything reads the data: the member's data is replaced by the snapshot's (docs/restore.md)
            new SnapshotRestore(options, dataDir, catalog(), restoreTools(), log).run();
        }
        Preflight.run(preflight.beforePlan());
        // The binaries' processes (tens of ms each) run while the data is read and judged; their answers are judged
        // under the lock, where the questions are asked. The target's first (unless already started): it needs no plan.
        etcd.startAsking(List.of(), List.of(), binaries, this::catalogRelease);
        StartDecision.Decision decided = state.decide(false); // read again under the lock, and reported then
        Optional<DataVersion> before = decided.startOrThrow().current();
        // a label the data contradicts is refused as such before the plan's own checks (binaries, ports) run
        if (before.isPresent() && dataDir.readVersion().isPresent()) state.checkLabelAgainstData(before.get(), false);
        Plan planned = decided.planOrThrow();
        RolloutChain plannedChain = chainOf(planned);
        etcd.startAsking(
                planned.steps(),
                plannedChain.multiLeg() ? ClusterRollout.servingReleases(plannedChain) : List.of(),
                binaries,
                this::catalogRelease);
        Preflight.run(preflight.beforeLock(planned));
        if (!dataDir.exists() || !dataDir.holdsData()) {
            dataDir.createOwnerOnly();
        }
        boolean ownDirExisted = dataDir.own().exists();
        // once an etcd ran on the data dir itself (not on a work copy), .etcd-migrate/etcd-output.log is the proof
        // (DataDirState) that a step of this runner may have moved the data past version.txt: a failed run keeps it
        AtomicBoolean etcdRan = new AtomicBoolean();
        EventListener etcdStarts = event -> {
            if (event instanceof EtcdEvent.EtcdStarted started
                    && Path.of(started.dataDir()).equals(dataDir.path())) etcdRan.set(true);
        };
        log.subscribe(etcdStarts);
        // every path takes the lock, the no-op included: another runner's private etcd may be working here
        DataDirLock lock = DataDirLock.acquire(dataDir, options.lockTimeout(), log);
        try {
            DataVersion reached = migrateLocked(planned, binaries, false);
            // the target's arguments in its line's spelling (the same the target was asked about before any step)
            return new Done(
                    reached,
                    lock,
                    etcd.targetArgs(catalogRelease(options.target().version())));
        } catch (Exception e) {
            lock.close();
            if (!ownDirExisted && !etcdRan.get()) {
                dataDir.removeOwnDirIfOnlyBookkeeping(); // a run that started no etcd leaves nothing of its own
            }
            throw e;
        } finally {
            log.unsubscribe(etcdStarts);
        }
    }

    /** @param joined the member joined its cluster at the cluster's line already in this run ({@link ClusterLineJoin}) */
    private DataVersion migrateLocked(Plan planned, BinaryCheck binaries, boolean joined) throws Exception {
        new MemberSwap(dataDir, backups, log).recover();
        backups.recover();
        // The plan made before the lock is stale when another runner moved the data while this one
        // waited, or when recovery just finished a swap: read and plan again from what is there now.
        StartDecision.Decision decision = state.decide(true);
        Optional<DataVersion> current = decision.startOrThrow().current();
        Plan plan = decision.planOrThrow();
        if (!plan.current().equals(planned.current())) {
            log.emit(new DecisionEvent.Replanned(
                    planned.current().toString(), plan.current().toString()));
        }
        boolean joinsExisting = ClusterLineJoin.joinsExisting(options, plan);
        if (joinsExisting && !joined) {
            // an empty member etcd adds to a running cluster takes the cluster's line from the leader's snapshot
            ClusterLineJoin join = new ClusterLineJoin(options, etcd, log);
            Release target = catalogRelease(options.target().version())
                    .orElseThrow(() -> new IllegalStateException("a planned target without its catalog entry"));
            Optional<Release> first = join.lineToJoinFirst(catalog(), target);
            if (first.isPresent()) {
                try {
                    join.join(first.get());
                } catch (Exception e) {
                    // etcd that refused the join before it wrote a WAL left only what it created in this run on a dir
                    // that was empty: removed, so the next start joins again rather than meet data nothing labels
                    if (options.walDir().isEmpty()
                            && Files.isDirectory(dataDir.member())
                            && !Files.exists(dataDir.member().resolve("wal"))) {
                        Trees.deleteDurably(dataDir.member());
                        log.emit(new dev.etcdmigrate.event.Event.Note(
                                dev.etcdmigrate.event.Event.Level.WARN,
                                "the join at " + first.get().version() + " failed before etcd wrote its WAL: "
                                        + dataDir.member() + " removed, the data dir is empty again"));
                    }
                    throw e;
                }
                // that release's etcd wrote the data and stopped cleanly: the label names it, so the legs start from
                // it (the member serves it while the cluster's rules hold its first leg) rather than from the line's
                // x.y.0 an unlabelled dir is read as
                DataVersion joinedAt =
                        new DataVersion(first.get().etcdVersion(), dev.etcdmigrate.version.StorageApi.ETCD3);
                if (dataDir.writeVersion(joinedAt)) log.emit(new StepEvent.VersionRecorded(joinedAt.toString()));
                return migrateLocked(plan, binaries, true); // planned again from the data it received
            }
        }
        // a cluster member across several minors: one leg per minor, serving between them (ClusterRollout)
        RolloutChain chain = chainOf(plan);
        ClusterRollout rollout = new ClusterRollout(options, dataDir, etcd, new StepRunner(dataDir, backups, log), log);
        List<Release> serving = chain.multiLeg() ? ClusterRollout.servingReleases(chain) : List.of();
        List<Preflight.Check> checks = new ArrayList<>();
        checks.add(new Preflight.Check("bundled binaries present", () -> preflight.requireBinaries(plan)));
        if (current.isPresent()) {
            checks.add(new Preflight.Check(
                    "data dir against version.txt and etcd's flags", () -> state.crossCheck(current.get())));
            if (!plan.steps().isEmpty()) {
                checks.add(new Preflight.Check("no etcd holds the db open", state::refuseHeldDb));
            }
            if (dataDir.readVersion().isPresent()) {
                // --initial-version and the data's own answer were judged when read; version.txt is judged here
                checks.add(new Preflight.Check(
                        "version.txt against the data", () -> state.checkLabelAgainstData(current.get())));
            }
        }
        checks.add(new Preflight.Check(
                "bundled binaries report their versions, the target etcd accepts its arguments",
                () -> BinaryCheck.askAll(etcd.binaryQuestions(plan.steps(), serving, binaries, this::catalogRelease))));
        if (chain.multiLeg()) {
            checks.add(
                    new Preflight.Check("the other members can take " + chain.describe(), () -> rollout.check(chain)));
        }
        checks.add(new Preflight.Check("etcd's auth is not enabled in the data", decision::refuseAuth));
        if (!plan.steps().isEmpty() && planned.steps().isEmpty()) {
            checks.addAll(
                    preflight
                            .forSteps()); // steps the plan before the lock did not have: their checks were not made yet
        }
        Preflight.run(checks);
        binaries.awaitUnasked(); // a question the plan before the lock had and this one has not
        etcd.rememberChecks(binaries);

        log.emit(planEvent(decision));
        if (!plan.steps().isEmpty()) {
            try (ChildOutputFile etcdOutput =
                    ChildOutputFile.create(dataDir.own().etcdOutput())) {
                // durable before the first etcd starts: detection takes this file as proof that a run with
                // steps began, and a power cut must not leave data one line ahead without it (PowerCutIT)
                Trees.syncTree(dataDir.own().etcdOutput());
                log.subscribe(etcdOutput);
                try {
                    // a run stopped while it held the cluster's restart record finishes that restart and releases it
                    // a cluster member's every restart obeys the cluster's rules whenever other members answer
                    // (ClusterRollout): one minor too, e.g. a run started again from version.txt between legs
                    if (options.topology() instanceof Topology.Member
                            && !chain.legs().isEmpty())
                        rollout.run(
                                plan,
                                chain,
                                etcd.stepContext(backups),
                                servingRelease(plan.current().version()));
                    else new StepRunner(dataDir, backups, log).run(plan, etcd.stepContext(backups));
                } finally {
                    log.unsubscribe(etcdOutput);
                }
            }
        } else if (options.topology() instanceof Topology.Member
                && Files.exists(dataDir.own().restartRecord())) {
            // a run killed after its last leg reached the target, before it released the cluster's restart record
            Optional<Release> line = catalogRelease(options.target().version());
            if (line.isPresent()) rollout.releaseLeftover(line.get());
        }
        if (joinsExisting) {
            // etcd decides this member's data from the leader's snapshot: a label now could contradict it for good
            log.emit(new RunEvent.Migrated(
                    dataDir.path().toString(), options.target().toString()));
            return options.target();
        }
        if (dataDir.writeVersion(options.target())) {
            log.emit(new StepEvent.VersionRecorded(options.target().toString()));
        }
        log.emit(new RunEvent.Migrated(
                dataDir.path().toString(), options.target().toString()));
        return options.target();
    }

    /** A restore's etcd: the steps' adapter (the member's name, peer URLs, tools), and the bin dir's tool check. */
    private SnapshotRestore.Tools restoreTools() {
        return new SnapshotRestore.Tools() {
            @Override
            public dev.etcdmigrate.step.EtcdOperations operations() {
                return etcd.stepContext(backups).etcd();
            }

            @Override
            public void requireTool(Release release) throws MigrateException {
                binDir.tool(release.line().tools().snapshotRestore().toolName(), release.etcdVersion());
            }

            @Override
            public void checkWalk(DataVersion restored) throws MigrateException {
                StartDecision.plan(
                        Optional.of(restored),
                        StartDecision.Flags.of(options),
                        Migration.this::catalog,
                        DataDirState.installed(options));
            }
        };
    }

    private Catalog catalog() throws UsageException {
        if (catalog == null) {
            catalog = catalogSource.get();
        }
        return catalog;
    }

    /**
     * The release a member serves its data's line with while it waits before its first leg: the data's own release,
     * else the bundled release of its line when that is not older. Data without version.txt reads as its line's
     * lowest patch, which is seldom bundled; the bundled patch of the same line is what the plan's patch step runs on
     * it anyway, and a member that cannot serve stays out of service while it waits.
     */
    private Optional<Release> servingRelease(EtcdVersion version) {
        return catalogRelease(version).or(() -> {
            try {
                return catalog()
                        .line(version.line())
                        .filter(r -> !r.etcdVersion().isOlderThan(version));
            } catch (UsageException e) {
                return Optional.empty();
            }
        });
    }

    /** The target's catalog entry; parsed here only when a binary must actually be asked. */
    private Optional<Release> catalogRelease(EtcdVersion version) {
        try {
            return catalog().release(version);
        } catch (UsageException e) {
            return Optional.empty(); // a bad catalog fails the plan that needs it, with its own message
        }
    }
}
