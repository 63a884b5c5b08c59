package dev.etcdmigrate;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.cli.Help;
import dev.etcdmigrate.cli.MigrateFlags;
import dev.etcdmigrate.cli.OutputFlags;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.decide.MembersFromData;
import dev.etcdmigrate.inspect.InspectCommand;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import java.io.PrintStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** {@code etcd-migrate inspect}: plan's flags read for {@link InspectCommand}, which reads the data dir only. */
final class InspectEntry implements Command {

    private final PrintStream out;

    InspectEntry(PrintStream out) {
        this.out = out;
    }

    @Override
    public String help() {
        return Help.inspect(PlanEntry.outputFlag(), MigrateEntry.FLAGS);
    }

    @Override
    public int run(List<String> args, Map<String, String> environment, Log log, Children children) throws Exception {
        ParsedArgs parsed = ParsedArgs.parse(
                        PlanEntry.FLAGS, OutputFlags.shortOutputFlag(args), withPlaceholders(environment))
                .withoutPositional("inspect");
        RunConfig config = MembersFromData.resolve(MigrateFlags.read(parsed), log);
        return new InspectCommand(log)
                .run(
                        parsed.get("output").orElse("text"),
                        parsed.get("name").isPresent(),
                        config,
                        RunCatalog.of(config),
                        out);
    }

    /** inspect reads the data dir only: a target and a member name, which migrate needs, default to placeholders. */
    private static Map<String, String> withPlaceholders(Map<String, String> environment) {
        Map<String, String> env = new HashMap<>(environment);
        env.putIfAbsent("TARGET_VERSION", Catalog.bundled().releases().getLast().version());
        env.putIfAbsent("HOSTNAME", "inspect");
        return env;
    }
}
