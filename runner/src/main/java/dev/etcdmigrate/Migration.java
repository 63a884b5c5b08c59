package dev.etcdmigrate;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.cli.MigrateOptions;
import dev.etcdmigrate.cli.ServerArgsCheck;
import dev.etcdmigrate.cli.UsageException;
import dev.etcdmigrate.datadir.Backups;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.DataDirLock;
import dev.etcdmigrate.datadir.MemberSwap;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.AtomicFile;
import dev.etcdmigrate.etcd.BinDir;
import dev.etcdmigrate.etcd.BinaryCheck;
import dev.etcdmigrate.etcd.ClusterPeers;
import dev.etcdmigrate.etcd.BackendQuota;
import dev.etcdmigrate.etcd.GatewayClient;
import dev.etcdmigrate.etcd.PrivateEtcd;
import dev.etcdmigrate.etcd.ServerPorts;
import dev.etcdmigrate.plan.Plan;
import dev.etcdmigrate.plan.Planner;
import dev.etcdmigrate.plan.RefusedTransitionException;
import dev.etcdmigrate.plan.RollingUpgradePolicy;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.process.ToolRunner;
import dev.etcdmigrate.step.MemberIdentity;
import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.step.StepContext;
import dev.etcdmigrate.step.StepFailedException;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Carries one data dir to the target: reads what wrote it, plans (refusing before anything is
 * touched), takes the lock, finishes what a crashed run left, then runs the steps in order and
 * records each one's result in version.txt.
 */
public final class Migration {

    private static final Duration TOOL_TIMEOUT = Duration.ofMinutes(10);
    private static final Duration STATUS_TIMEOUT = Duration.ofSeconds(15);
    /** The lease a key under TTL_KEYS_DIRECTORY gets when it had no TTL in v2 (the Kubernetes image's hour). */
    private static final Duration DEFAULT_TTL_KEY_LEASE = Duration.ofHours(1);

    private final MigrateOptions options;
    private final Supplier<Catalog> catalogSource;
    private Catalog catalog;
    private final Log log;
    private final Children children;
    private final Map<String, String> environment;
    private final DataDir dataDir;
    private final Backups backups;
    private final BinDir binDir;

    /** @param catalog read only when a plan needs it: parsing it is most of a no-op start */
    public Migration(MigrateOptions options, Supplier<Catalog> catalog, Log log, Children children, Map<String, String> environment) {
        this.options = options;
        this.catalogSource = catalog;
        this.log = log;
        this.children = children;
        this.environment = environment;
        this.dataDir = new DataDir(options.dataDir());
        this.backups = new Backups(dataDir, options.backupDir(), options.backupRetention(), options.name(), log);
        this.binDir = new BinDir(options.binDir());
    }

    /** The plan from the data dir as it is now; reads only. */
    public Plan plan() throws IOException, DataDir.MalformedVersionFileException, RefusedTransitionException {
        Optional<DataVersion> current = current();
        if (catalog == null) {
            catalog = catalogSource.get();
        }
        Planner planner = new Planner(catalog);
        // A fresh dir still gets its target checked (bundled, storage supported).
        return RollingUpgradePolicy.check(planner.plan(current.orElse(options.target()), options.target()), options.members());
    }

    /** What `plan` prints: the steps, or what happens to a data dir without etcd data. */
    public List<String> describePlan() throws IOException, DataDir.MalformedVersionFileException, RefusedTransitionException {
        Plan plan = plan();
        if (current().isEmpty()) {
            return List.of("data dir " + dataDir.path() + (dataDir.exists() ? " holds no etcd data" : " does not exist")
                    + ": it will be created with mode 0700 if missing and record " + options.target() + "; etcd "
                    + options.target().version() + " initializes it");
        }
        return plan.describe();
    }

    /**
     * The migrated data dir, its lock still held: the caller execs etcd (which closes the lock, and etcd's
     * own WAL lock takes over) or closes it, so no second runner slips in between.
     */
    public record Done(DataVersion version, DataDirLock lock) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            lock.close();
        }
    }

    /** Migrates; returns the version now recorded in version.txt (the target), with the lock held. */
    public Done migrate() throws Exception {
        dataDir.refuseSymbolicLink();
        Optional<DataVersion> atTarget = alreadyAtTargetLine();
        Plan plan = atTarget.isPresent() ? null : plan();
        if (plan != null) {
            checkBinaries(plan);
        } else if (!options.noExec()) {
            binDir.etcd(options.target().version());
        }
        if (dataDir.exists()) {
            dataDir.refuseReadOnly();
        }
        if (plan != null && !plan.steps().isEmpty()) {
            checkPortsFree();
            checkServerArgs();
            backups.refuseUnusableLocation();
        }
        if (!dataDir.exists() || !dataDir.holdsData()) {
            dataDir.createOwnerOnly();
        }
        boolean ownDirExisted = dataDir.hasOwnDir();
        // every path takes the lock, the no-op included: another runner's private etcd may be working here
        DataDirLock lock = DataDirLock.acquire(dataDir, options.lockTimeout(), log);
        try {
            return new Done(migrateLocked(plan), lock);
        } catch (Exception e) {
            lock.close();
            if (!ownDirExisted) {
                dataDir.removeOwnDirIfOnlyLock();
            }
            throw e;
        }
    }

    private DataVersion migrateLocked(Plan planned) throws Exception {
        new MemberSwap(dataDir, backups, log).recover();
        backups.recover();
        BinaryCheck binaries = binaryCheck();
        Optional<DataVersion> atTarget = alreadyAtTargetLine();
        if (atTarget.isPresent()) {
            // read again under the lock: a runner that waited must not trust what it saw before
            dataDir.checkAgainst(atTarget.get(), options.walDir());
            preflightTarget(binaries);
            rememberChecks(binaries);
            return recordTargetPatch(atTarget.get());
        }
        // The plan made before the lock is stale when another runner moved the data while this one
        // waited, or when recovery just finished a swap: plan again from what is there now.
        Plan plan = plan();
        if (planned != null && !plan.current().equals(planned.current())) {
            log.info("the data dir is at " + plan.current() + " now, not " + planned.current() + " as planned: planning again");
        }
        checkBinaries(plan);
        Optional<DataVersion> current = current();
        if (current.isPresent()) {
            dataDir.checkAgainst(current.get(), options.walDir());
            refuseMemberSwapsWithExternalWal(plan);
            if (!plan.steps().isEmpty()) {
                checkRecordedStorageVersion(current.get());
            }
        }
        for (Step step : plan.steps()) {
            for (Step.Binary binary : step.binaries()) {
                binaries.expect(binDir.tool(binary.tool(), binary.release().etcdVersion()), binary.tool(), binary.release());
            }
        }
        preflightTarget(binaries);
        if (!plan.steps().isEmpty() && (planned == null || planned.steps().isEmpty())) {
            // steps the plan before the lock did not have: their checks were not made yet
            checkPortsFree();
            checkServerArgs();
            backups.refuseUnusableLocation();
        }
        rememberChecks(binaries);
        if (current.isEmpty()) {
            log.info("data dir " + dataDir.path() + " holds no etcd data: recording " + options.target()
                    + "; etcd " + options.target().version() + " will initialize it");
            dataDir.writeVersion(options.target());
            return options.target();
        }
        plan.describe().forEach(log::info);
        runSteps(plan);
        if (dataDir.writeVersion(options.target())) {
            log.info("version.txt = " + options.target());
        }
        log.info("data dir " + dataDir.path() + " is at " + options.target());
        return options.target();
    }

    /**
     * From 3.6 on, the backend records the storage version etcd last set: data that a newer line wrote
     * than version.txt says is refused rather than "upgraded" by older binaries. Read offline with the
     * newest bundled etcdutl that reports it (read-only; it waits on the db's lock, so a live etcd shows).
     */
    private void checkRecordedStorageVersion(DataVersion recorded) throws Exception {
        Path db = dataDir.member().resolve("snap").resolve("db");
        if (recorded.storage() != StorageApi.ETCD3 || !Files.isRegularFile(db)) return;
        Optional<Release> reader = catalog.releases().reversed().stream()
                .filter(r -> r.line().tools().statusReportsStorageVersion())
                .filter(r -> Files.isExecutable(binDir.dir().resolve("etcdutl-" + r.version()))).findFirst();
        if (reader.isEmpty()) return;
        Path etcdutl = binDir.tool("etcdutl", reader.get().etcdVersion());
        ToolRunner.Result status;
        try {
            status = new ToolRunner(log, children).runAllowingFailure("etcdutl-" + reader.get().version(),
                    List.of(etcdutl.toString(), "snapshot", "status", db.toString(), "-w", "json"),
                    dev.etcdmigrate.process.ChildEnvironment.scrubbed(environment, Map.of()), dataDir.path(), STATUS_TIMEOUT);
        } catch (ToolRunner.ToolFailedException e) {
            throw new DataDir.UnusableDataDirException("could not read the storage version recorded in " + db + " ("
                    + e.getMessage() + "): is an etcd still running on this data dir? Stop it first (nothing was changed)");
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"version\":\"(\\d+\\.\\d+\\.\\d+)\"").matcher(status.output());
        if (status.exitCode() != 0 || !m.find()) return; // 3.5 and older record none
        EtcdVersion storage = EtcdVersion.parse(m.group(1));
        // one minor above is what an upgrade step interrupted after its etcd ran leaves behind (version.txt is
        // written after the step): resumable. Further above, no run of this tool can have written it.
        MinorLine resumable = new MinorLine(recorded.version().major(), recorded.version().minor() + 1);
        if (resumable.isOlderThan(storage.line())) {
            throw new DataDir.ContradictionException("version.txt says " + recorded + " but " + db + " records storage version "
                    + storage + ", which only etcd " + storage.line() + " or newer writes: the data is newer than version.txt"
                    + " claims. Write the version that really ran last into version.txt");
        }
        if (recorded.version().line().isOlderThan(storage.line())) {
            log.info(db + " records storage version " + storage + ": an interrupted step to " + storage.line()
                    + " had started etcd there before version.txt was written; the plan resumes it");
        }
    }

    /** Remembered answers of earlier starts (a restart of an unchanged pod asks no binary again). */
    private BinaryCheck binaryCheck() throws IOException {
        Path file = dataDir.binaryChecks();
        List<String> lines = Files.isRegularFile(file) ? Files.readAllLines(file) : List.of();
        return new BinaryCheck(children).remembering(lines);
    }

    /**
     * The etcd this run ends in must accept the arguments it will be exec'd with (and be the version its
     * name says), before any step: found after a migration, a rejected flag is a crash-looping pod.
     */
    private void preflightTarget(BinaryCheck binaries) throws Exception {
        if (!options.noExec() || !options.etcdArgs().isEmpty()) {
            EtcdVersion target = options.target().version();
            binaries.targetAccepts(binDir.etcd(target), target, () -> catalogRelease(target), options.finalEtcdArgs(environment),
                    environment);
        }
    }

    /** Kept once every check passed, so a refusal leaves nothing of this run behind. */
    private void rememberChecks(BinaryCheck binaries) throws IOException {
        if (binaries.changed()) {
            AtomicFile.write(dataDir.binaryChecks(), String.join("\n", binaries.remembered()) + "\n");
        }
    }

    /** The target's catalog entry; parsed here only when a binary must actually be asked. */
    private Optional<Release> catalogRelease(EtcdVersion version) {
        if (catalog == null) {
            catalog = catalogSource.get();
        }
        return catalog.release(version);
    }

    /**
     * A step that builds a new member dir and swaps it in would leave an external WAL dir (etcd's --wal-dir)
     * holding the old member's WAL: refused before anything is touched.
     */
    private void refuseMemberSwapsWithExternalWal(Plan plan) throws RefusedTransitionException {
        if (options.walDir().isEmpty()) return;
        for (Step step : plan.steps()) {
            if (step.replacesMemberDir()) {
                Path wal = options.walDir().get();
                throw new RefusedTransitionException("'" + step.describe() + "' builds a new member dir and swaps it in,"
                        + " but etcd's --wal-dir " + wal + " keeps the WAL outside it, where the swap cannot replace it"
                        + " with the one the new member dir needs. With etcd stopped, move the WAL into the data dir (mv "
                        + wal + "/* " + dataDir.member().resolve("wal") + "/) and drop --wal-dir for the migration");
            }
        }
    }

    /**
     * The common restart case: the data is at the target's minor line and storage, so no step runs and
     * no catalog fact is needed; the target's binary in the bin dir (and BUNDLED_VERSIONS, if set) stands
     * for "bundled". Anything else, or a staging dir a crash left, takes the planned path.
     */
    private Optional<DataVersion> alreadyAtTargetLine() throws IOException, DataDir.MalformedVersionFileException,
            RefusedTransitionException {
        DataVersion target = options.target();
        if (!dataDir.exists() || !dataDir.holdsData() || Files.exists(dataDir.staging())
                || options.bundledVersions().map(v -> !v.contains(target.version())).orElse(false)
                || !Files.isExecutable(binDir.dir().resolve("etcd-" + target.version()))) {
            return Optional.empty();
        }
        return dataDir.readVersion().filter(v -> v.storage() == target.storage() && v.version().sameLine(target.version()));
    }

    private DataVersion recordTargetPatch(DataVersion current) throws Exception {
        DataVersion target = options.target();
        log.info("plan " + current + " -> " + target + ": no etcd needs to run (same minor line and storage)");
        if (dataDir.writeVersion(target)) {
            log.info("version.txt = " + target);
        }
        return target;
    }

    private void runSteps(Plan plan) throws Exception {
        List<Step> steps = plan.steps();
        if (steps.isEmpty()) {
            return;
        }
        StepContext context = stepContext();
        for (int i = 0; i < steps.size(); i++) {
            Step step = steps.get(i);
            String label = "step " + (i + 1) + "/" + steps.size();
            log.info(label + ": " + step.describe());
            long start = System.nanoTime();
            try {
                step.run(context);
            } catch (Exception e) {
                discardUnfinishedWork(label);
                if (e instanceof StepFailedException || e instanceof IOException || e instanceof PrivateEtcd.EtcdFailedException) {
                    throw new StepFailedException(label + " failed: " + e.getMessage() + "; version.txt still says "
                            + dataDir.readVersion().map(DataVersion::toString).orElse("nothing"), e);
                }
                throw e;
            }
            dataDir.writeVersion(step.result());
            log.info(label + " done in " + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms; version.txt = " + step.result());
        }
    }

    /**
     * A failed step's half-made copies (staging without its completion marker, work dirs) only fill the
     * disk: they go now. A complete staging stays for the next start to finish the swap.
     */
    private void discardUnfinishedWork(String label) {
        try {
            List<Path> removed = new ArrayList<>(dataDir.workDirs());
            for (Path work : removed) {
                Trees.deleteRecursively(work);
            }
            if (new MemberSwap(dataDir, backups, log).discardIncomplete()) {
                removed.add(dataDir.staging());
            }
            if (!removed.isEmpty()) {
                log.info(label + " did not finish: removed what it left in " + dataDir.path() + ": "
                        + String.join(", ", removed.stream().map(p -> dataDir.path().relativize(p).toString()).toList()));
            }
        } catch (IOException e) {
            log.warn("could not remove what " + label + " left unfinished (" + e.getMessage() + "); the next start discards it");
        }
    }

    private StepContext stepContext() {
        // a member rejoining its peers needs the real etcd's peer TLS flags too
        List<String> serverArgs = new ArrayList<>(options.serverExtraArgs());
        if (options.members() > 1) {
            serverArgs.addAll(options.peerTlsArgs());
        }
        PrivateEtcd.Settings settings = new PrivateEtcd.Settings(binDir, options.name(),
                new ServerPorts(options.clientPort(), options.peerPort()),
                BackendQuota.withRequested(serverArgs, options.etcdArgs(), environment),
                options.startTimeout(), options.stopGrace(), environment, GatewayClient.newHttpClient());
        if (options.walDir().isPresent()) {
            log.info("the WAL lives in " + options.walDir().get() + " (etcd's --wal-dir): every private etcd on the data dir gets it");
            settings = settings.withWalDir(new PrivateEtcd.WalDir(dataDir.path(), options.walDir().get()));
        }
        if (options.members() > 1) {
            log.info("this data dir is one of " + options.members() + " members (" + options.initialCluster() + "): the private etcd"
                    + " rejoins its peers on " + options.listenPeerUrls() + " while it migrates");
            settings = settings.inCluster(new ClusterPeers(options.initialCluster(), options.initialAdvertisePeerUrls(),
                    options.listenPeerUrls()));
        }
        MemberIdentity member = new MemberIdentity(options.name(), options.initialCluster(), options.initialAdvertisePeerUrls());
        return new StepContext(dataDir, settings, member, new ToolRunner(log, children), children, log, TOOL_TIMEOUT,
                new StepContext.Conversion(options.ttlKeysDirectory(), DEFAULT_TTL_KEY_LEASE), backups);
    }

    /**
     * The private etcd's ports must be free before anything is touched: a clear error, not a failed step.
     * A cluster member's peer port is its real one, which its own stopped etcd just released.
     */
    private void checkPortsFree() throws PortInUseException {
        for (int port : options.members() > 1 ? List.of(options.clientPort()) : List.of(options.clientPort(), options.peerPort())) {
            try (java.net.ServerSocket socket = new java.net.ServerSocket(port, 1, java.net.InetAddress.getByName(ServerPorts.LOOPBACK))) {
                socket.setReuseAddress(true);
            } catch (IOException e) {
                throw new PortInUseException("port " + port + " on " + ServerPorts.LOOPBACK + " is taken (" + e.getMessage()
                        + "): the migration's private etcd needs it; free it or choose another with --port / --peer-port"
                        + " (nothing was changed)");
            }
        }
    }

    /** The files ETCD_CREDS names must be there for the private etcd: a clear error, not a failed step. */
    private void checkServerArgs() throws UsageException {
        List<String> problems = new ArrayList<>(ServerArgsCheck.problems(options.serverExtraArgs()));
        try {
            BackendQuota.withRequested(options.serverExtraArgs(), options.etcdArgs(), environment);
            BackendQuota.requested(options.serverExtraArgs(), Map.of());
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new UsageException("--etcd-server-extra-args / ETCD_CREDS: " + String.join("; ", problems)
                    + ". The migration's private etcd gets these flags and would not start (nothing was changed)");
        }
    }

    /** A private port is taken; reported like a usage error (exit 2). */
    public static final class PortInUseException extends Exception {
        PortInUseException(String message) {
            super(message);
        }
    }

    /** Every program the plan runs, and the target etcd unless --no-exec, must be in the bin dir. */
    private void checkBinaries(Plan plan) throws BinDir.MissingBinaryException {
        for (Step step : plan.steps()) {
            for (Step.Binary binary : step.binaries()) {
                binDir.tool(binary.tool(), binary.release().etcdVersion());
            }
        }
        if (!options.noExec()) {
            binDir.etcd(options.target().version());
        }
    }

    /** What wrote the data dir: empty for a missing or empty dir. */
    private Optional<DataVersion> current() throws IOException, DataDir.MalformedVersionFileException, RefusedTransitionException {
        if (!dataDir.exists() || !dataDir.holdsData()) {
            return Optional.empty();
        }
        Optional<DataVersion> recorded = dataDir.readVersion();
        if (recorded.isPresent()) {
            return recorded;
        }
        EtcdVersion initial = options.initialVersion().orElseThrow(() -> new RefusedTransitionException("data dir "
                + dataDir.path() + " holds data (" + safeContent() + ") but no version.txt, so the runner cannot tell which"
                + " etcd wrote it. Set --initial-version / INITIAL_VERSION to the etcd version that last ran on it (its"
                + " storage is inferred: member/snap/db means etcd3). The Kubernetes etcd image assumed 2.2.1/etcd2 for"
                + " such dirs; pass --initial-version=2.2.1 only if that is what wrote it."));
        DataVersion inferred = new DataVersion(initial, dataDir.inferStorage());
        if (initial.major() < 3 && inferred.storage() == StorageApi.ETCD3) {
            throw new RefusedTransitionException("--initial-version " + initial + " cannot have written etcd3 data, but "
                    + dataDir.path() + " has member/snap/db");
        }
        log.info("no version.txt in " + dataDir.path() + ": taking " + inferred + " (version from "
                + "--initial-version/INITIAL_VERSION, storage inferred from " + (inferred.storage()
                        == StorageApi.ETCD3 ? "member/snap/db" : "the absence of member/snap/db") + ")");
        return Optional.of(inferred);
    }

    private String safeContent() {
        try {
            return dataDir.describeContent();
        } catch (IOException e) {
            return "unreadable: " + e.getMessage();
        }
    }
}
