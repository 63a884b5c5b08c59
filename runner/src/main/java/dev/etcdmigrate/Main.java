package dev.etcdmigrate;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.cli.Help;
import dev.etcdmigrate.cli.MigrateOptions;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.cli.UsageException;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.demo.Demo;
import dev.etcdmigrate.etcd.BinDir;
import dev.etcdmigrate.exec.DataDirOwner;
import dev.etcdmigrate.exec.Execve;
import dev.etcdmigrate.plan.RefusedTransitionException;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.provision.ProvisionCommand;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

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

    static int run(List<String> args, Map<String, String> environment, Log log) {
        List<String> rest = args;
        String command = "migrate";
        if (!args.isEmpty() && List.of("migrate", "plan", "provision", "demo", "help").contains(args.getFirst())) {
            command = args.getFirst();
            rest = args.subList(1, args.size());
        }
        if (command.equals("help") || rest.contains("--help") && !afterDoubleDash(rest)) {
            System.out.print(Help.text(MigrateOptions.FLAGS, ProvisionCommand.FLAGS));
            return OK;
        }
        Children children = new Children(Duration.ofSeconds(10)).installShutdownHook();
        try {
            return switch (command) {
                case "provision" -> new ProvisionCommand(log, children).run(ParsedArgs.parse(ProvisionCommand.FLAGS, rest, environment));
                case "demo" -> new Demo(log, children).run(ParsedArgs.parse(Demo.FLAGS, rest, environment));
                case "plan" -> plan(ParsedArgs.parse(MigrateOptions.FLAGS, rest, environment), log, children);
                default -> migrate(ParsedArgs.parse(MigrateOptions.FLAGS, rest, environment), log, children);
            };
        } catch (UsageException | DataDir.MalformedVersionFileException | BinDir.MissingBinaryException | BadCatalogException
                | Migration.PortInUseException | DataDir.UnusableDataDirException e) {
            log.error(e.getMessage());
            return USAGE;
        } catch (RefusedTransitionException e) {
            log.error("refused: " + e.getMessage() + " (nothing was changed)");
            return REFUSED;
        } catch (Exception e) {
            log.error(e.getMessage() == null ? e.toString() : e.getMessage());
            return FAILED;
        }
    }

    private static boolean afterDoubleDash(List<String> args) {
        int dash = args.indexOf("--");
        return dash >= 0 && args.indexOf("--help") > dash;
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
        migration(options, args, log, children).migrate();
        if (options.noExec()) {
            log.info("--no-exec: exiting after the migration");
            return OK;
        }
        var etcd = new BinDir(options.binDir()).etcd(options.target().version());
        List<String> argv = new ArrayList<>();
        argv.add(etcd.toString());
        argv.addAll(options.etcdArgs());
        if (options.etcdArgs().stream().noneMatch(a -> a.equals("--data-dir") || a.startsWith("--data-dir="))
                && !args.environment().containsKey("ETCD_DATA_DIR")) {
            argv.add("--data-dir=" + options.dataDir());
        }
        log.info("exec " + String.join(" ", argv));
        log.flush();
        Execve.link().exec(etcd, argv, args.environment());
        return FAILED; // not reached: exec either replaced this process or threw
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
