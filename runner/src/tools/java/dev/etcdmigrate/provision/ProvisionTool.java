package dev.etcdmigrate.provision;

import dev.etcdmigrate.cli.Flag;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.cli.ToolCommand;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import java.util.List;

/** `provision` as a tool command (see {@link ToolCommand}). */
public final class ProvisionTool implements ToolCommand {

    @Override
    public String name() {
        return "provision";
    }

    @Override
    public String usage() {
        return "provision --bin-dir DIR [VERSION...]  install etcd-<v>, etcdctl-<v>, etcdutl-<v>";
    }

    @Override
    public String flagsHeading() {
        return "Flags of provision:";
    }

    @Override
    public List<Flag> flags() {
        return ProvisionCommand.FLAGS;
    }

    @Override
    public int run(ParsedArgs args, Log log, Children children) throws Exception {
        return new ProvisionCommand(log, children).run(args);
    }
}
