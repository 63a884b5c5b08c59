package dev.etcdmigrate.run;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.ServerArgsCheck;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.datadir.Backups;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.etcd.backend.BackendQuota;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.plan.Plan;
import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.version.EtcdVersion;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * The "nothing was changed" refusals, as ordered lists of named checks, each throwing the exception that
 * carries its exit code: {@link #beforePlan}, {@link #beforeLock} (for the plan) and, under the lock, the
 * list {@link Migration} makes from these and {@link DataDirState}'s checks (the data dir's state and the
 * binaries' answers need what only the lock makes stable).
 */
final class Preflight {

    /** One check: what it guards, and the check itself. */
    record Check(String name, Action action) {}

    interface Action {
        void run() throws IOException, InterruptedException, MigrateException;
    }

    private final RunConfig options;
    private final DataDir dataDir;
    private final BinDir binDir;
    private final Backups backups;
    /** The catalog's entry of a release, asked only when a check needs a line's fact (no-op starts need none). */
    private final Function<EtcdVersion, Optional<Release>> catalogRelease;

    Preflight(
            RunConfig options,
            DataDir dataDir,
            BinDir binDir,
            Backups backups,
            Function<EtcdVersion, Optional<Release>> catalogRelease) {
        this.options = options;
        this.dataDir = dataDir;
        this.binDir = binDir;
        this.backups = backups;
        this.catalogRelease = catalogRelease;
    }

    /** What needs no plan: the inputs themselves. */
    List<Check> beforePlan() {
        return List.of(
                new Check("environment against etcd's flags", this::refuseEnvironmentConflicts),
                new Check("etcd reads its flags, not a config file", this::refuseConfigFile),
                new Check("data dir is not a symbolic link", dataDir::refuseSymbolicLink));
    }

    /** The checks before the lock, for a plan; the ones only steps need are left out of a plan without steps. */
    List<Check> beforeLock(Plan plan) {
        List<Check> checks = new ArrayList<>(List.of(
                new Check("bundled binaries present", () -> requireBinaries(plan)),
                new Check("data dir writable", () -> {
                    if (dataDir.exists()) dataDir.refuseReadOnly();
                })));
        if (!plan.steps().isEmpty()) {
            checks.addAll(forSteps());
        }
        return checks;
    }

    /** What a plan with steps needs besides: free private ports, usable server flags, a usable backup location. */
    List<Check> forSteps() {
        return List.of(
                new Check("private ports free", this::requirePortsFree),
                new Check("server flags usable", this::requireUsableServerArgs),
                new Check("backup location usable", backups::refuseUnusableLocation));
    }

    static void run(List<Check> checks) throws IOException, InterruptedException, MigrateException {
        for (Check check : checks) {
            check.action().run();
        }
    }

    /**
     * etcd of most lines (catalog: line.envDuplicateRefused) dies on a variable that duplicates a flag it is
     * given: found before, not in a restarting pod. A target the catalog does not know is taken to die too.
     * With --no-exec too: the flags after -- and this environment are what the runner took as etcd's.
     */
    private void refuseEnvironmentConflicts() throws UsageException {
        List<String> conflicts = options.etcd().duplicateVariables();
        if (conflicts.isEmpty()) return;
        EtcdVersion target = options.target().version();
        if (catalogRelease
                .apply(target)
                .map(r -> r.line().envDuplicateRefused())
                .orElse(true)) {
            throw new UsageException(
                    "the environment sets " + String.join(", ", conflicts) + ", which etcd's flags after -- also"
                            + " give: the target etcd refuses to start with both. Drop one of each pair (nothing was changed)");
        }
    }

    /**
     * With --config-file (or ETCD_CONFIG_FILE, read from 3.4) etcd ignores every other flag and variable: the
     * name, dirs, URLs and quota the runner read from them would not be the ones etcd runs with.
     */
    private void refuseConfigFile() throws UsageException {
        Optional<String> file = options.etcd().get("config-file");
        if (file.isPresent()) {
            throw new UsageException(
                    options.etcd().source("config-file") + " names " + file.get() + ": etcd then ignores its other"
                            + " flags and variables, so the runner cannot know the data dir, name and URLs etcd will use. Give etcd"
                            + " its settings as flags after -- (nothing was changed)");
        }
    }

    /** Every program the plan runs, and the target etcd unless --no-exec, must be in the bin dir. */
    void requireBinaries(Plan plan) throws BinDir.MissingBinaryException {
        for (Step step : plan.steps()) {
            for (Step.Binary binary : step.binaries()) {
                binDir.tool(binary.tool(), binary.release().etcdVersion());
            }
        }
        if (!options.noExec()) {
            binDir.etcd(options.target().version());
        }
    }

    /**
     * The private etcd's ports must be free before anything is touched: a clear error, not a failed step.
     * A cluster member's peer port is its real one, which its own stopped etcd just released.
     */
    private void requirePortsFree() throws UsageException {
        List<Integer> ports = switch (options.topology()) {
            case Topology.Member member -> List.of(options.clientPort());
            case Topology.Single single -> List.of(options.clientPort(), options.peerPort());
        };
        for (int port : ports) {
            try {
                probeBind(port);
            } catch (IOException e) {
                throw new UsageException("port " + port + " on " + ServerPorts.LOOPBACK + " is taken (" + e.getMessage()
                        + "): the migration's private etcd needs it; free it or choose another with --port / --peer-port"
                        + " (nothing was changed)");
            }
        }
    }

    /**
     * Binds the port on loopback and lets it go, as etcd binds it: with SO_REUSEADDR, set before the bind
     * (after it, it changes nothing), so a port whose last connection is in TIME_WAIT (a member's own
     * stopped etcd) counts as free, as it is for etcd.
     */
    static void probeBind(int port) throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(true);
            socket.bind(new InetSocketAddress(InetAddress.getByName(ServerPorts.LOOPBACK), port), 1);
        }
    }

    /** The files ETCD_CREDS names must be there for the private etcd: a clear error, not a failed step. */
    private void requireUsableServerArgs() throws UsageException {
        List<String> problems = new ArrayList<>(ServerArgsCheck.problems(options.creds()));
        try {
            BackendQuota.requested(options.etcd());
            BackendQuota.requested(options.creds());
        } catch (IllegalArgumentException e) {
            problems.add(e.getMessage());
        }
        if (!problems.isEmpty()) {
            throw new UsageException("--etcd-server-extra-args / ETCD_CREDS: " + String.join("; ", problems)
                    + ". The migration's private etcd gets these flags and would not start (nothing was changed)");
        }
    }
}
