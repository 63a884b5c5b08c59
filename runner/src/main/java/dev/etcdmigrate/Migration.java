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
import dev.etcdmigrate.etcd.BinDir;
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

    /** Migrates; returns the version now recorded in version.txt (the target). */
    public DataVersion migrate() throws Exception {
        dataDir.refuseSymbolicLink();
        Optional<DataVersion> atTarget = alreadyAtTargetLine();
        if (atTarget.isPresent()) {
            return recordTargetPatch(atTarget.get());
        }
        Plan plan = plan();
        checkBinaries(plan);
        if (dataDir.exists()) {
            dataDir.refuseReadOnly();
        }
        if (!plan.steps().isEmpty()) {
            checkPortsFree();
            checkServerArgs();
            backups.refuseUnusableLocation();
        }
        if (!dataDir.exists() || !dataDir.holdsData()) {
            dataDir.createOwnerOnly();
        }
        boolean ownDirExisted = dataDir.hasOwnDir();
        try {
            return migrateLocked(plan);
        } catch (Exception e) {
            if (!ownDirExisted) {
                dataDir.removeOwnDirIfOnlyLock();
            }
            throw e;
        }
    }

    private DataVersion migrateLocked(Plan plan) throws Exception {
        try (DataDirLock lock = DataDirLock.acquire(dataDir, options.lockTimeout(), log)) {
            new MemberSwap(dataDir, backups, log).recover();
            backups.recover();
            // The plan made before the lock is stale when another runner moved the data while this one
            // waited, or when recovery just finished a swap: plan again from what is there now.
            Plan fresh = plan();
            if (!fresh.current().equals(plan.current())) {
                log.info("the data dir is at " + fresh.current() + " now, not " + plan.current() + " as planned: planning again");
            }
            plan = fresh;
            checkBinaries(plan);
            Optional<DataVersion> current = current();
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
        if (!current.equals(target)) {
            dataDir.refuseReadOnly();
            try (DataDirLock lock = DataDirLock.acquire(dataDir, options.lockTimeout(), log)) {
                dataDir.writeVersion(target);
            }
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
        PrivateEtcd.Settings settings = new PrivateEtcd.Settings(binDir, options.name(),
                new ServerPorts(options.clientPort(), options.peerPort()),
                BackendQuota.withRequested(options.serverExtraArgs(), options.etcdArgs(), environment),
                options.startTimeout(), options.stopGrace(), environment, GatewayClient.newHttpClient());
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
