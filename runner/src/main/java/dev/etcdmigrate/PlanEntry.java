package dev.etcdmigrate;

import dev.etcdmigrate.cli.Flag;
import dev.etcdmigrate.cli.Help;
import dev.etcdmigrate.cli.MigrateFlags;
import dev.etcdmigrate.cli.OutputFlags;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.decide.MembersFromData;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.log.Json;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.run.Migration;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** {@code etcd-migrate plan}: the plan a migrate with the same flags would run, printed; nothing changes. */
final class PlanEntry implements Command {

    /** migrate's flags and -o/--output text|json (also inspect's). */
    static final List<Flag> FLAGS = OutputFlags.with(OutputFlags.withOutput(MigrateFlags.FLAGS));

    private final PrintStream out;

    PlanEntry(PrintStream out) {
        this.out = out;
    }

    /** -o/--output, which plan and inspect print their answer in. */
    static Flag outputFlag() {
        return FLAGS.stream().filter(f -> f.name().equals("output")).findFirst().orElseThrow();
    }

    @Override
    public String help() {
        return Help.plan(outputFlag());
    }

    @Override
    public int run(List<String> args, Map<String, String> environment, Log log, Children children) throws Exception {
        ParsedArgs parsed = ParsedArgs.parse(FLAGS, OutputFlags.shortOutputFlag(args), environment)
                .withoutPositional("plan");
        RunConfig config = MembersFromData.resolve(MigrateFlags.read(parsed), log);
        String format = parsed.get("output").orElse("text");
        if (!format.equals("text") && !format.equals("json")) {
            throw new UsageException("-o/--output must be text or json, not '" + format + "'");
        }
        Migration migration = new Migration(config, () -> RunCatalog.of(config), log, children, parsed.environment());
        // a restore not done yet replaces the data dir's data: the plan is the restore's, then its walk
        Optional<Migration.RestorePlan> restore = migration.restorePlan();
        if (restore.isPresent()) {
            Migration.RestorePlan r = restore.get();
            out.println(
                    format.equals("json")
                            ? "{\"restore\":" + Json.object(r.restore()) + ","
                                    + Json.object(r.walk()).substring(1)
                            : r.restore().message() + "\n" + r.walk().message());
            return ExitStatus.OK.code();
        }
        DecisionEvent.PlanMade plan = migration.planEvent();
        out.println(format.equals("json") ? Json.object(plan) : plan.message());
        return ExitStatus.OK.code();
    }
}
