package dev.etcdmigrate.it;

import dev.etcdmigrate.etcd.FreePorts;
import dev.etcdmigrate.etcd.ServerPorts;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Command lines for the runner under test: free private ports, the provisioned bin dir. */
final class RunnerArgs {

    private RunnerArgs() {}

    /** `migrate --no-exec` of dataDir to target/etcd3, plus extra flags. */
    static List<String> migrate(Path dataDir, String target, String... extra) {
        List<String> args = new ArrayList<>(common("migrate", dataDir, target));
        args.add("--no-exec");
        args.addAll(List.of(extra));
        return args;
    }

    static List<String> common(String command, Path dataDir, String target) {
        ServerPorts ports = FreePorts.pick();
        return List.of(command, "--data-dir", dataDir.toString(), "--bin-dir", EtcdFixture.binDir().toString(),
                "--target-version", target, "--target-storage", "etcd3", "--name", "it",
                "--port", String.valueOf(ports.client()), "--peer-port", String.valueOf(ports.peer()));
    }
}
