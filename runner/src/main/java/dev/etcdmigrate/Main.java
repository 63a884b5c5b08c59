package dev.etcdmigrate;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.cli.Help;
import dev.etcdmigrate.cli.MigrateOptions;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.cli.UsageException;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.demo.Demo;
import dev.etcdmigrate.etcd.BinDir;
import dev.etcdmigrate.etcd.BinaryCheck;
import dev.etcdmigrate.exec.DataDirOwner;
import dev.etcdmigrate.exec.Execve;
import dev.etcdmigrate.exec.TerminationLog;
import dev.etcdmigrate.plan.RefusedTransitionException;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.provision.ProvisionCommand;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Entry point: dispatches to migrate (default), plan, provision or demo; maps failures to exit codes. */
public final class Main {

    static final int OK = 0;
    static final int FAILED = 1;
    static final int USAGE = 2;
    static final int REFUSED = 3;

    private Main() {}

    public static void main(String[] args) {
        Log log = new Log(System.err);
        int code = run(List.of(args), System.getenv(), log);
        log.flush();
        System.exit(code);
    }

    static final List<String> COMMANDS = List.of("migrate", "plan", "provision", "demo", "help");

    static int run(List<String> args, Map<String, String> environment, Log log) {
        List<String> before = args.contains("--") ? args.subList(0, args.indexOf("--")) : args;
        if (before.contains("--help") || !args.isEmpty() && args.getFirst().equals("help")) {
            System.out.print(Help.text(MigrateOptions.FLAGS, ProvisionCommand.FLAGS, Demo.FLAGS));
            return OK;
        }
        if (before.contains("--version")) {
            System.out.print(versionText(before, environment));
            return OK;
        }
        List<String> rest = args;
        String command = "migrate";
        if (!args.isEmpty() && !args.getFirst().startsWith("-")) {
            if (!COMMANDS.contains(args.getFirst())) {
                return fail(log, before, USAGE, "unknown command '" + args.getFirst() + "' (commands: "
                        + String.join(", ", COMMANDS) + "; see --help); nothing was changed");
            }
            command = args.getFirst();
            rest = args.subList(1, args.size());
        }
        Children children = new Children(Duration.ofSeconds(10)).installShutdownHook();
        try {
            return switch (command) {
                case "provision" -> new ProvisionCommand(log, children).run(ParsedArgs.parse(ProvisionCommand.FLAGS, rest, environment));
                case "demo" -> new Demo(log, children).run(ParsedArgs.parse(Demo.FLAGS, rest, environment).withoutPositional("demo"));
                case "plan" -> plan(ParsedArgs.parse(MigrateOptions.FLAGS, rest, environment).withoutPositional("plan"), log, children);
                default -> migrate(ParsedArgs.parse(MigrateOptions.FLAGS, rest, environment).withoutPositional("migrate"), log, children);
            };
        } catch (UsageException | DataDir.MalformedVersionFileException | BinDir.MissingBinaryException | BadCatalogException
                | Migration.PortInUseException | DataDir.UnusableDataDirException | BinaryCheck.WrongBinaryException
                | BinaryCheck.RejectedFlagException e) {
            return fail(log, before, USAGE, e.getMessage());
        } catch (RefusedTransitionException | DataDir.ContradictionException e) {
            return fail(log, before, REFUSED, "refused: " + e.getMessage() + " (nothing was changed)");
        } catch (Exception e) {
            return fail(log, before, FAILED, e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    /** Logs the reason and leaves it where Kubernetes shows it (the container's termination message). */
    private static int fail(Log log, List<String> args, int code, String message) {
        log.error(message);
        TerminationLog.write(Path.of(flagValue(args, "termination-log").orElse(MigrateOptions.DEFAULT_TERMINATION_LOG)), message);
        return code;
    }

    /** The value of --name VALUE / --name=VALUE among the runner's own arguments, for what runs before parsing. */
    private static Optional<String> flagValue(List<String> args, String name) {
        for (int i = 0; i < args.size(); i++) {
            if (args.get(i).equals("--" + name) && i + 1 < args.size()) return Optional.of(args.get(i + 1));
            if (args.get(i).startsWith("--" + name + "=")) return Optional.of(args.get(i).substring(name.length() + 3));
        }
        return Optional.empty();
    }

    /** `--version`: this runner's version and the etcd versions it bundles, each marked when its binary is missing. */
    static String versionText(List<String> args, Map<String, String> environment) {
        String version = Optional.ofNullable(Main.class.getPackage().getImplementationVersion()).orElse("development build");
        StringBuilder b = new StringBuilder("etcd-migrate " + version + "\n");
        Path binDir = Path.of(flagValue(args, "bin-dir").orElse(MigrateOptions.DEFAULT_BIN_DIR)).toAbsolutePath();
        Catalog catalog = flagValue(args, "catalog").map(Path::of).map(Catalog::load).orElseGet(Catalog::bundled);
        b.append("bundled etcd versions (bin dir ").append(binDir).append("):");
        for (var release : catalog.releases()) {
            b.append(' ').append(release.version());
            if (!java.nio.file.Files.isExecutable(binDir.resolve("etcd-" + release.version()))) b.append(" (missing)");
        }
        return b.append('\n').toString();
    }

    private static int plan(ParsedArgs args, Log log, Children children) throws Exception {
        MigrateOptions options = MigrateOptions.from(args);
        migration(options, args, log, children).describePlan().forEach(System.out::println);
        return OK;
    }

    private static int migrate(ParsedArgs args, Log log, Children children) throws Exception {
        MigrateOptions options = MigrateOptions.from(args);
        log.info("etcd-migrate: data dir " + options.dataDir() + ", target " + options.target() + ", bin dir " + options.binDir());
        if (!options.noExec()) {
            List<String> conflicts = dev.etcdmigrate.cli.EnvironmentCheck.conflicts(args.environment(), options.etcdArgs());
            if (!conflicts.isEmpty()) {
                throw new UsageException("the environment sets " + String.join(", ", conflicts) + ", which etcd's flags after -- also"
                        + " give: etcd 3.4+ refuses to start with both. Drop one of each pair (nothing was changed)");
            }
        }
        DataDirOwner.become(options.dataDir(), log);
        // the lock stays held until exec, which closes it; etcd's own WAL lock takes over
        try (Migration.Done done = migration(options, args, log, children).migrate()) {
            if (options.noExec()) {
                log.info("--no-exec: exiting after the migration");
                return OK;
            }
            var etcd = new BinDir(options.binDir()).etcd(options.target().version());
            List<String> argv = new ArrayList<>();
            argv.add(etcd.toString());
            argv.addAll(options.finalEtcdArgs(args.environment()));
            log.info("exec " + String.join(" ", argv));
            log.flush();
            Execve.link().exec(etcd, argv, args.environment());
            return FAILED; // not reached: exec either replaced this process or threw
        }
    }

    private static Migration migration(MigrateOptions options, ParsedArgs args, Log log, Children children) {
        return new Migration(options, () -> catalog(options), log, children, args.environment());
    }

    /** The catalog a run plans with; a bad one is a usage error (exit 2). */
    private static Catalog catalog(MigrateOptions options) {
        try {
            Catalog catalog = options.catalogFile().map(Catalog::load).orElseGet(Catalog::bundled);
            return options.bundledVersions().map(catalog::restrictTo).orElse(catalog);
        } catch (IllegalArgumentException | java.io.UncheckedIOException e) {
            throw new BadCatalogException(e.getMessage());
        }
    }

    /** Unchecked, because the catalog is loaded lazily inside the migration. */
    static final class BadCatalogException extends RuntimeException {
        BadCatalogException(String message) {
            super(message);
        }
    }
}
