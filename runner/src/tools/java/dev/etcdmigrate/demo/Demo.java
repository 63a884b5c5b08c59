package dev.etcdmigrate.demo;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.cli.Flag;
import dev.etcdmigrate.cli.MigrateFlags;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.run.Migration;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.LeaseOption;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * `etcd-migrate demo`: a real migration end to end. Writes Kubernetes-like keys (some leased) with the
 * oldest bundled etcd, migrates the data dir to the newest, and checks every key, value, revision
 * and lease afterwards with the newest etcd.
 */
public final class Demo {

    public static final List<Flag> FLAGS = List.of(
            Flag.value("bin-dir", null, "DIR", "required", "provisioned etcd binaries."),
            Flag.value("work-dir", null, "DIR", ".demo", "where the sample data dir is made (replaced on each run)."),
            Flag.value("keys", null, "N", "2000", "how many sample keys to write."));

    private final Log log;
    private final Children children;
    private final PrintStream out = System.out;

    public Demo(Log log, Children children) {
        this.log = log;
        this.children = children;
    }

    public int run(ParsedArgs args) throws Exception {
        Path binDir = Path.of(args.get("bin-dir").orElseThrow(() -> new UsageException("demo needs --bin-dir DIR")))
                .toAbsolutePath();
        Path work =
                Path.of(args.get("work-dir").orElse(".demo")).toAbsolutePath().normalize();
        int keys = Integer.parseInt(args.get("keys").orElse("2000"));
        Catalog catalog = Catalog.bundled();
        // the oldest release that can write etcd3 data (2.x has only the v2 API)
        Release oldest = catalog.releases().stream()
                .filter(r -> r.line().v3Api())
                .findFirst()
                .orElseThrow();
        Release newest = catalog.releases().getLast();
        Path data = work.resolve("data");
        Trees.deleteRecursively(data);
        Permissions.ownerOnlyDir(data);
        ServerPorts ports = FreePorts.pick();
        PrivateEtcd.Settings settings = new PrivateEtcd.Settings(
                new BinDir(binDir),
                "demo",
                ports,
                List.of(),
                Duration.ofMinutes(2),
                Duration.ofSeconds(30),
                System.getenv(),
                GatewayClient.newHttpClient());

        out.println("== 1. etcd " + oldest.version() + " writes " + keys + " Kubernetes-like keys into " + data);
        Keyspace before;
        try (PrivateEtcd etcd = PrivateEtcd.start(oldest, data, settings, List.of(), log, children)) {
            etcd.awaitWrite(settings.startTimeout());
            try (Client client = Client.builder().endpoints(ports.clientUrl()).build()) {
                SampleData.seed(client, keys, 3600);
                before = Keyspace.read(client);
            }
            etcd.stop(settings.stopGrace());
        }
        new DataDir(data).writeVersion(new DataVersion(oldest.etcdVersion(), StorageApi.ETCD3));
        out.println("   " + before.entries().size() + " keys (" + before.leasedKeys() + " leased), revision "
                + before.revision() + "; version.txt = " + oldest.version() + "/etcd3");

        out.println("== 2. etcd-migrate carries it to " + newest.version() + "/etcd3 (--no-exec)");
        ParsedArgs migrateArgs = ParsedArgs.parse(
                MigrateFlags.FLAGS,
                List.of(
                        "--target-version",
                        newest.version(),
                        "--target-storage",
                        "etcd3",
                        "--data-dir",
                        data.toString(),
                        "--bin-dir",
                        binDir.toString(),
                        "--name",
                        "demo",
                        "--port",
                        String.valueOf(ports.client()),
                        "--peer-port",
                        String.valueOf(ports.peer()),
                        "--no-exec"),
                System.getenv());
        Migration migration =
                new Migration(MigrateFlags.read(migrateArgs), () -> catalog, log, children, System.getenv());
        migration.planEvent().message().lines().forEach(line -> out.println("   " + line));
        long start = System.nanoTime();
        DataVersion reached;
        try (Migration.Done done = migration.migrate()) {
            reached = done.version();
        }
        out.println("   reached " + reached + " in "
                + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms; version.txt = "
                + new DataDir(data).readVersion().orElseThrow());

        out.println("== 3. etcd " + newest.version() + " serves the migrated data; checking every key");
        Keyspace after;
        long liveLeases;
        try (PrivateEtcd etcd = PrivateEtcd.start(newest, data, settings, List.of(), log, children)) {
            etcd.awaitWrite(settings.startTimeout());
            try (Client client = Client.builder().endpoints(ports.clientUrl()).build()) {
                after = Keyspace.read(client);
                liveLeases = countLiveLeasedKeys(client, after);
            }
            etcd.stop(settings.stopGrace());
        }
        Map<String, String> diff = before.differences(after);
        out.println("   keys before " + before.entries().size() + ", after "
                + after.entries().size() + ", differing " + diff.size());
        out.println("   leased keys before " + before.leasedKeys() + ", after with a live lease " + liveLeases);
        diff.entrySet().stream().limit(10).forEach(e -> out.println("   ! " + e.getKey() + ": " + e.getValue()));
        boolean intact = diff.isEmpty() && liveLeases == before.leasedKeys();
        out.println(
                intact
                        ? "== data intact: every key, value, revision and lease carried from " + oldest.version()
                                + " to " + newest.version()
                        : "== DATA DIFFERS (see above)");
        return intact ? 0 : 1;
    }

    private static long countLiveLeasedKeys(Client client, Keyspace keyspace) throws Exception {
        long live = 0;
        Map<Long, Long> ttl = new java.util.HashMap<>();
        for (Keyspace.Entry e : keyspace.entries().values()) {
            if (e.lease() == 0) continue;
            long remaining = ttl.computeIfAbsent(e.lease(), id -> {
                try {
                    return client.getLeaseClient()
                            .timeToLive(id, LeaseOption.DEFAULT)
                            .get(30, TimeUnit.SECONDS)
                            .getTTL();
                } catch (Exception ex) {
                    return -1L;
                }
            });
            if (remaining > 0) live++;
        }
        return live;
    }
}
