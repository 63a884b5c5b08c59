package dev.etcdmigrate.demo;

import dev.etcdmigrate.cli.Flag;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.cli.ToolCommand;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import java.util.List;

/** `demo` as a tool command (see {@link ToolCommand}). */
public final class DemoTool implements ToolCommand {

    @Override
    public String name() {
        return "demo";
    }

    @Override
    public String usage() {
        return "demo --bin-dir DIR --work-dir DIR     migrate a sample data dir end to end";
    }

    @Override
    public String flagsHeading() {
        return "Flags of demo (writes sample keys with the oldest bundled etcd3 release into a fresh data dir under"
                + " --work-dir, migrates it to the newest, then checks every key, value, revision and lease):";
    }

    @Override
    public List<Flag> flags() {
        return Demo.FLAGS;
    }

    @Override
    public int run(ParsedArgs args, Log log, Children children) throws Exception {
        return new Demo(log, children).run(args.withoutPositional("demo"));
    }
}
