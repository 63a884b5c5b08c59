package dev.etcdmigrate;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.cli.Flag;
import dev.etcdmigrate.cli.Help;
import dev.etcdmigrate.cli.MigrateOptions;
import dev.etcdmigrate.cli.Nearest;
import dev.etcdmigrate.cli.OutputFlags;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.cli.StatusOptions;
import dev.etcdmigrate.cli.ToolCommand;
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
    static final List<Flag> PLAN_FLAGS = OutputFlags.with(withOutput(MigrateOptions.FLAGS));

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
            out.print(versionText(before));
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
                case "inspect" ->
                    inspect(
                            ParsedArgs.parse(PLAN_FLAGS, shortOutputFlag(rest), inspectEnvironment(environment))
                                    .withoutPositional("inspect"),
                            log);
                case "status" ->
                    StatusCommand.run(
                            StatusOptions.from(ParsedArgs.parse(StatusOptions.FLAGS, shortOutputFlag(rest), environment)
                                    .withoutPositional("status")),
                            System.out);
                case "plan" ->
                    plan(
                            ParsedArgs.parse(PLAN_FLAGS, shortOutputFlag(rest), environment)
                                    .withoutPositional("plan"),
                            log,
                            children);
                default ->
                    migrate(
                            ParsedArgs.parse(OutputFlags.with(MigrateOptions.FLAGS), rest, environment)
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
        List<Flag> migrateFlags = OutputFlags.with(MigrateOptions.FLAGS);
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
                return Optional.of(Help.status(StatusOptions.FLAGS));
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
                Path.of(OutputFlags.flagValue(args, "termination-log").orElse(MigrateOptions.DEFAULT_TERMINATION_LOG)),
                reason);
        return e.exitCode();
    }

    /**
     * `--version`: this runner's version and the etcd versions it bundles, each marked when its binary is
     * missing, then where each present binary came from (the pins in the jar) and whether it is that build.
     */
    static String versionText(List<String> args) {
        String version = Optional.ofNullable(Main.class.getPackage().getImplementationVersion())
                .orElse("development build");
        StringBuilder b = new StringBuilder("etcd-migrate " + version + "\n");
        Path binDir = Path.of(OutputFlags.flagValue(args, "bin-dir").orElse(MigrateOptions.DEFAULT_BIN_DIR))
                .toAbsolutePath();
        Catalog catalog = OutputFlags.flagValue(args, "catalog")
                .map(Path::of)
                .map(Catalog::load)
                .orElseGet(Catalog::bundled);
        boolean given = OutputFlags.flagValue(args, "bin-dir").isPresent();
        b.append("bundled etcd versions (bin dir ").append(binDir).append("):");
        BinDir bins = new BinDir(binDir);
        int missing = 0;
        for (var release : catalog.releases()) {
            b.append(' ').append(release.version());
            if (!bins.hasEtcd(release.etcdVersion())) {
                b.append(" (missing)");
                missing++;
            }
        }
        b.append('\n');
        if (missing > 0) {
            // say where it looked, and that another place can be named: the default is the image's
            b.append(missing == catalog.releases().size() ? "no etcd-<version> found" : missing + " missing")
                    .append(": looked for etcd-<version> in ")
                    .append(binDir)
                    .append(given ? " (--bin-dir)" : " (the default; --bin-dir DIR names another)")
                    .append('\n');
        }
        for (var release : catalog.releases()) {
            b.append(dev.etcdmigrate.catalog.Provenance.describe(release, binDir));
        }
        return b.toString();
    }

    private static List<Flag> withOutput(List<Flag> flags) {
        List<Flag> all = new ArrayList<>(flags);
        all.add(Flag.value(
                "output",
                null,
                "text|json",
                "text",
                "plan and inspect (also -o): the answer as lines, or as one JSON object on stdout."));
        return all;
    }

    /** kubectl's habit: -o json, -o=json, -ojson mean --output json (the runner's other flags take two dashes). */
    static List<String> shortOutputFlag(List<String> args) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--")) {
                out.addAll(args.subList(i, args.size()));
                break;
            }
            if (a.equals("-o") && i + 1 < args.size()) {
                out.add("--output");
                out.add(args.get(++i));
            } else if (a.startsWith("-o=")) {
                out.add("--output=" + a.substring(3));
            } else if (a.startsWith("-o") && !a.startsWith("--") && a.length() > 2) {
                out.add("--output=" + a.substring(2));
            } else {
                out.add(a);
            }
        }
        return out;
    }

    private static int plan(ParsedArgs args, Log log, Children children) throws Exception {
        String format = args.get("output").orElse("text");
        if (!format.equals("text") && !format.equals("json")) {
            throw new UsageException("-o/--output must be text or json, not '" + format + "'");
        }
        MigrateOptions options = MembersFromData.resolve(MigrateOptions.from(args), log);
        DecisionEvent.PlanMade plan = migration(options, args, log, children).planEvent();
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

    private static int inspect(ParsedArgs args, Log log) throws Exception {
        MigrateOptions options = MembersFromData.resolve(MigrateOptions.from(args), log);
        return new InspectCommand(log).run(args, options, catalog(options), System.out);
    }

    private static int migrate(ParsedArgs args, Log log, Children children) throws Exception {
        MigrateOptions options = MigrateOptions.from(args);
        RunTally tally = RunTally.sinceProcessStart();
        log.emit(new RunEvent.RunStarted(
                "migrate",
                options.dataDir().toString(),
                options.target().toString(),
                options.binDir().toString()));
        log.subscribe(tally);
        try {
            return migrate(options, args, log, children, tally);
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

    private static int migrate(MigrateOptions given, ParsedArgs args, Log log, Children children, RunTally tally)
            throws Exception {
        // Linking execve through java.lang.foreign spins its stubs at run time (the AOT cache cannot keep them): on
        // its own thread while the data is read and judged, not after, where it was 100-400 ms of every restart
        FutureTask<Execve> linking = new FutureTask<>(Execve::link);
        if (!given.noExec())
            Thread.ofPlatform().name("link-execve").daemon(true).start(linking);
        DataDirOwner.become(given.dataDir(), log);
        MigrateOptions options =
                MembersFromData.resolve(given, log); // kubeadm's first node: its flag names only itself
        tally.clusterMember(options.members() > 1);
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

    private static Migration migration(MigrateOptions options, ParsedArgs args, Log log, Children children) {
        return new Migration(options, () -> catalog(options), log, children, args.environment());
    }

    /** The catalog a run plans with; a bad one is a usage error (exit 2). */
    private static Catalog catalog(MigrateOptions options) throws UsageException {
        try {
            Catalog catalog = options.catalogFile().map(Catalog::load).orElseGet(Catalog::bundled);
            return options.bundledVersions().map(catalog::restrictTo).orElse(catalog);
        } catch (IllegalArgumentException | java.io.UncheckedIOException e) {
            throw new UsageException(e.getMessage());
        }
    }
}
