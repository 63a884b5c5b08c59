package dev.etcdmigrate;

import dev.etcdmigrate.cli.Help;
import dev.etcdmigrate.cli.OutputFlags;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.cli.StatusFlags;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.status.StatusCommand;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/** {@code etcd-migrate status}: its flags read for {@link StatusCommand}, which reads a cluster's rollout. */
final class StatusEntry implements Command {

    private final PrintStream out;

    StatusEntry(PrintStream out) {
        this.out = out;
    }

    @Override
    public String help() {
        return Help.status(StatusFlags.FLAGS);
    }

    @Override
    public int run(List<String> args, Map<String, String> environment, Log log, Children children) throws Exception {
        return StatusCommand.run(
                StatusFlags.read(ParsedArgs.parse(StatusFlags.FLAGS, OutputFlags.shortOutputFlag(args), environment)
                        .withoutPositional("status")),
                out);
    }
}
