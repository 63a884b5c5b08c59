package dev.etcdmigrate;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.cli.Flag;
import dev.etcdmigrate.cli.Help;
import dev.etcdmigrate.cli.MigrateFlags;
import dev.etcdmigrate.cli.Nearest;
import dev.etcdmigrate.cli.OutputFlags;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.cli.StatusFlags;
import dev.etcdmigrate.cli.ToolCommand;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.decide.MembersFromData;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.event.RunEvent;
import dev.etcdmigrate.exec.DataDirOwner;
import dev.etcdmigrate.exec.Execve;
import dev.etcdmigrate.exec.TerminationLog;
import dev.etcdmigrate.inspect.InspectCommand;
import dev.etcdmigrate.log.Json;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.log.RunTally;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.run.Migration;
import dev.etcdmigrate.status.StatusCommand;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * Entry point: dispatches to migrate (default), plan, or a tool command (provision, demo: beside the runner, not in
 * the image; see {@link ToolCommand}); maps the one exception root to exit codes.
 */
public final class Main {

    private Main() {}

    static final List<String> COMMANDS = List.of("migrate", "plan", "inspect", "status", "help");

    /** plan's own flag: -o/--output text|json. */
    static final List<Flag> PLAN_FLAGS = OutputFlags.with(OutputFlags.withOutput(MigrateFlags.FLAGS));

    public static void main(String[] args) {
        System.exit(run(List.of(args), System.getenv(), System.err));
    }

    static int run(List<String> args, Map<String, String> environment, PrintStream err) {
        return run(args, environment, System.out, err);
    }

    /** {@code out} gets what a command prints as its answer (help, --version); {@code err} the diary. */
    static int run(List<String> args, Map<String, String> environment, PrintStream out, PrintStream err) {
        List<String> before = args.contains("--") ? args.subList(0, args.indexOf("--")) : args;
        if (before.contains("--help")
                || before.contains("-h")
                || !args.isEmpty() && args.getFirst().equals("help")) {
            Optional<String> help = helpText(before);
            if (help.isPresent()) {
                out.print(help.get());
                return ExitStatus.OK.code();
            }
        } else if (before.contains("--version")) {
            out.print(VersionText.of(before));
            return ExitStatus.OK.code();
        }
        Log log;
        try {
            OutputFlags output = OutputFlags.read(before, environment);
            log = Log.of(output.format(), output.etcdOutput(), err);
        } catch (UsageException e) {
            return fail(Log.text(err), before, e);
        }
        try {
            return run(args, before, environment, log);
        } finally {
            log.flush();
        }
    }

    private static int run(List<String> args, List<String> before, Map<String, String> environment, Log log) {
        List<String> rest = args;
        String command = "migrate";
        if (!args.isEmpty() && !args.getFirst().startsWith("-")) {
            command = args.getFirst();
            rest = args.subList(1, args.size());
        }
        Children children = null;
        try {
            Optional<ToolCommand> tool = Optional.empty();
            if (!COMMANDS.contains(command)) {
                String name = command;
                List<ToolCommand> tools = ToolCommand.installed();
                tool = tools.stream().filter(c -> c.name().equals(name)).findFirst();
                if (tool.isEmpty()) {
                    List<String> known = new ArrayList<>(COMMANDS);
                    tools.forEach(c -> known.add(c.name()));
                    throw new UsageException("unknown command '" + command + "'"
                            + Nearest.to(command, known)
                                    .map(n -> ": did you mean " + n + "?")
                                    .orElse("")
                            + " (commands: " + String.join(", ", known) + "; see --help"
                            + (tools.isEmpty()
                                    ? "; provision and demo are not part of the image: run them from a source tree's"
                                            + " runner/target/etcd-migrate"
                                    : "")
                            + "); nothing was changed");
                }
            }
            children = new Children(Duration.ofSeconds(10)).installShutdownHook();
            if (tool.isPresent()) {
                return tool.get()
                        .run(ParsedArgs.parse(OutputFlags.with(tool.get().flags()), rest, environment), log, children);
            }
            return switch (command) {
                case "status" ->
                    StatusCommand.run(
                            StatusFlags.read(
                                    ParsedArgs.parse(StatusFlags.FLAGS, OutputFlags.shortOutputFlag(rest), environment)
                                            .withoutPositional("status")),
                            System.out);
                case "inspect" ->
                    configured(
                            command,
                            ParsedArgs.parse(
                                            PLAN_FLAGS,
                                            OutputFlags.shortOutputFlag(rest),
                                            inspectEnvironment(environment))
                                    .withoutPositional("inspect"),
                            log,
                            children);
                case "plan" ->
                    configured(
                            command,
                            ParsedArgs.parse(PLAN_FLAGS, OutputFlags.shortOutputFlag(rest), environment)
                                    .withoutPositional("plan"),
                            log,
                            children);
                default ->
                    configured(
                            "migrate",
                            ParsedArgs.parse(OutputFlags.with(MigrateFlags.FLAGS), rest, environment)
                                    .withoutPositional("migrate"),
                            log,
                            children);
            };
        } catch (MigrateException e) {
            return fail(log, before, e);
        } catch (Exception e) {
            // not one of ours (a bug, or a library's unchecked failure): still a failed run with its reason
            return fail(log, before, new FailedException(dev.etcdmigrate.error.Reason.of(e), e));
        }
    }

    /**
     * The help a command asks for: {@code COMMAND --help}, {@code COMMAND -h} or {@code help COMMAND} print that
     * command's own; {@code --help} or {@code help} alone the overview. Empty for an unknown command, which is then
     * refused as any unknown command is.
     */
    static Optional<String> helpText(List<String> before) {
        // the command is the first word, as in dispatch; flags first (--help alone) mean the overview
        String command = before.isEmpty() || before.getFirst().startsWith("-") ? "" : before.getFirst();
        if (command.equals("help"))
            command = before.size() > 1 && !before.get(1).startsWith("-") ? before.get(1) : "";
        List<Flag> migrateFlags = OutputFlags.with(MigrateFlags.FLAGS);
        Flag output = PLAN_FLAGS.stream()
                .filter(f -> f.name().equals("output"))
                .findFirst()
                .orElseThrow();
        switch (command) {
            case "" -> {
                return Optional.of(Help.text(ToolCommand.installed()));
            }
            case "migrate" -> {
                return Optional.of(Help.migrate(migrateFlags));
            }
            case "plan" -> {
                return Optional.of(Help.plan(output));
            }
            case "inspect" -> {
                return Optional.of(Help.inspect(output, migrateFlags));
            }
            case "status" -> {
                return Optional.of(Help.status(StatusFlags.FLAGS));
            }
            default -> {
                String name = command;
                return ToolCommand.installed().stream()
                        .filter(c -> c.name().equals(name))
                        .findFirst()
                        .map(Help::tool);
            }
        }
    }

    /** Reports why the run ends and leaves it where Kubernetes shows it (the container's termination message). */
    private static int fail(Log log, List<String> args, MigrateException e) {
        String reason = e.status() != ExitStatus.REFUSED
                ? e.getMessage()
                : "refused: " + e.getMessage()
                        + (e.getMessage().contains("nothing was changed") ? "" : " (nothing was changed)");
        log.emit(
                e.status() == ExitStatus.FAILED
                        ? new RunEvent.Failed(e.exitCode(), reason)
                        : new RunEvent.Refused(e.exitCode(), reason));
        TerminationLog.write(
                Path.of(OutputFlags.flagValue(args, "termination-log").orElse(MigrateFlags.DEFAULT_TERMINATION_LOG)),
                reason);
        return e.exitCode();
    }

    /**
     * migrate, plan and inspect: the flags read into one {@link RunConfig}, then, for migrate once its run is
     * reported and the data dir is its owner's, the members the data records (kubeadm's first node: its flag names
     * only itself), applied here once.
     */
    private static int configured(String command, ParsedArgs args, Log log, Children children) throws Exception {
        RunConfig given = MigrateFlags.read(args);
        if (!command.equals("migrate")) return configured(command, given, args, log, children, null);
        RunTally tally = RunTally.sinceProcessStart();
        log.emit(new RunEvent.RunStarted(
                "migrate",
                given.dataDir().toString(),
                given.target().toString(),
                given.binDir().toString()));
        log.subscribe(tally);
        try {
            return configured(command, given, args, log, children, tally);
        } catch (MigrateException e) {
            log.emit(tally.summary(e.status() == ExitStatus.FAILED ? "failed" : "refused", e.exitCode()));
            throw e;
        } catch (Exception e) {
            log.emit(tally.summary("failed", ExitStatus.FAILED.code()));
            throw e;
        } finally {
            log.unsubscribe(tally);
        }
    }

    /** {@code tally} is migrate's, null for plan and inspect. */
    private static int configured(
            String command, RunConfig given, ParsedArgs args, Log log, Children children, RunTally tally)
            throws Exception {
        // Linking execve through java.lang.foreign spins its stubs at run time (the AOT cache cannot keep them): on
        // its own thread while the data is read and judged, not after, where it was 100-400 ms of every restart
        FutureTask<Execve> linking = new FutureTask<>(Execve::link);
        if (tally != null) {
            if (!given.noExec())
                Thread.ofPlatform().name("link-execve").daemon(true).start(linking);
            DataDirOwner.become(given.dataDir(), log);
        }
        RunConfig config = MembersFromData.resolve(given, log);
        return switch (command) {
            case "plan" -> plan(config, args, log, children);
            case "inspect" ->
                new InspectCommand(log)
                        .run(
                                args.get("output").orElse("text"),
                                args.get("name").isPresent(),
                                config,
                                catalog(config),
                                System.out);
            default -> migrate(config, args, log, children, tally, linking);
        };
    }

    private static int plan(RunConfig config, ParsedArgs args, Log log, Children children) throws Exception {
        String format = args.get("output").orElse("text");
        if (!format.equals("text") && !format.equals("json")) {
            throw new UsageException("-o/--output must be text or json, not '" + format + "'");
        }
        DecisionEvent.PlanMade plan = migration(config, args, log, children).planEvent();
        System.out.println(format.equals("json") ? Json.object(plan) : plan.message());
        return ExitStatus.OK.code();
    }

    /** inspect reads the data dir only: a target and a member name, which migrate needs, default to placeholders. */
    private static Map<String, String> inspectEnvironment(Map<String, String> environment) {
        Map<String, String> env = new java.util.HashMap<>(environment);
        env.putIfAbsent("TARGET_VERSION", Catalog.bundled().releases().getLast().version());
        env.putIfAbsent("HOSTNAME", "inspect");
        return env;
    }

    private static int migrate(
            RunConfig options, ParsedArgs args, Log log, Children children, RunTally tally, FutureTask<Execve> linking)
            throws Exception {
        tally.clusterMember(options.topology() instanceof Topology.Member);
        // the lock stays held until exec, which closes it; etcd's own WAL lock takes over
        try (Migration.Done done = migration(options, args, log, children).migrate()) {
            log.emit(tally.summary(tally.successOutcome(), ExitStatus.OK.code()));
            if (options.noExec()) {
                log.emit(new RunEvent.NoExec(
                        options.dataDir().toString(), options.target().toString()));
                return ExitStatus.OK.code();
            }
            Path etcd = new BinDir(options.binDir()).etcd(options.target().version());
            List<String> argv = new ArrayList<>();
            argv.add(etcd.toString());
            argv.addAll(done.etcdArgs()); // in the target line's spelling (EtcdWiring.argsFor)
            Execve execve = linked(linking);
            execve.defaultSignals(); // a SIGTERM from now on ends the process, as it would end etcd
            log.emit(new RunEvent.Exec(etcd.toString(), argv));
            log.flush();
            execve.exec(etcd, argv, args.environment());
            return ExitStatus.FAILED.code(); // not reached: exec either replaced this process or threw
        }
    }

    private static Execve linked(FutureTask<Execve> linking) throws Exception {
        try {
            return linking.get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    private static Migration migration(RunConfig options, ParsedArgs args, Log log, Children children) {
        return new Migration(options, () -> catalog(options), log, children, args.environment());
    }

    /** The catalog a run plans with; a bad one is a usage error (exit 2). */
    private static Catalog catalog(RunConfig options) throws UsageException {
        try {
            Catalog catalog = options.catalogFile().map(Catalog::load).orElseGet(Catalog::bundled);
            return options.bundledVersions().map(catalog::restrictTo).orElse(catalog);
        } catch (IllegalArgumentException | java.io.UncheckedIOException e) {
            throw new UsageException(e.getMessage());
        }
    }
}
