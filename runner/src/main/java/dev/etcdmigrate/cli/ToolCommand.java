package dev.etcdmigrate.cli;

import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import java.util.List;
import java.util.ServiceLoader;

/**
 * A command that ships beside the runner, not in the image: `provision` and `demo` live in the tools
 * source set (runner/src/tools, runner/target/etcd-migrate-tools.jar) and are found here only when
 * that jar is on the class path. The image runs migrations and nothing else.
 */
public interface ToolCommand {

    /** The command word, e.g. {@code provision}. */
    String name();

    /** Its line under --help's "Usage:", without the leading {@code etcd-migrate }. */
    String usage();

    /** The heading of its flags in --help, e.g. {@code Flags of provision:}. */
    String flagsHeading();

    List<Flag> flags();

    int run(ParsedArgs args, Log log, Children children) throws Exception;

    /** The tool commands on the class path, in the services file's order. */
    static List<ToolCommand> installed() {
        return ServiceLoader.load(ToolCommand.class).stream()
                .map(ServiceLoader.Provider::get)
                .toList();
    }
}
