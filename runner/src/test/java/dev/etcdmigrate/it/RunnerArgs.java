package dev.etcdmigrate.it;

import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
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

    /** `migrate` of dataDir to target, then exec etcd serving on the given loopback ports. */
    static List<String> migrateAndServe(Path dataDir, String target, ServerPorts real) {
        String client = "http://127.0.0.1:" + real.client();
        List<String> args = new ArrayList<>(common("migrate", dataDir, target));
        args.addAll(List.of(
                "--",
                "--name",
                "it",
                "--listen-client-urls",
                client,
                "--advertise-client-urls",
                client,
                "--listen-peer-urls",
                "http://127.0.0.1:" + real.peer()));
        return args;
    }

    static List<String> common(String command, Path dataDir, String target) {
        ServerPorts ports = FreePorts.pick();
        return List.of(
                command,
                "--data-dir",
                dataDir.toString(),
                "--bin-dir",
                EtcdFixture.binDir().toString(),
                "--target-version",
                target,
                "--target-storage",
                "etcd3",
                "--name",
                "it",
                "--port",
                String.valueOf(ports.client()),
                "--peer-port",
                String.valueOf(ports.peer()));
    }
}
