package dev.etcdmigrate;

import dev.etcdmigrate.cli.Help;
import dev.etcdmigrate.cli.OutputFlags;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.cli.ToolCommand;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import java.util.List;
import java.util.Map;

/** A tool beside the runner ({@link ToolCommand}: provision, demo), with its own flags and the output flags. */
record ToolEntry(ToolCommand tool) implements Command {

    @Override
    public String help() {
        return Help.tool(tool);
    }

    @Override
    public int run(List<String> args, Map<String, String> environment, Log log, Children children) throws Exception {
        return tool.run(ParsedArgs.parse(OutputFlags.with(tool.flags()), args, environment), log, children);
    }
}
