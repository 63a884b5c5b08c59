package dev.etcdmigrate.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.demo.SampleData;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.etcd.client.V2Client;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import io.etcd.jetcd.Client;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The etcd2 conversions at scale, with the runner's heap capped (-Xmx64m: they must stream):
 * 100,000 TTL keys converted etcd2 -> etcd3 (the lease re-attachment rate), and 100,000 keys rolled back
 * etcd3 -> etcd2 (the /v2/keys reload rate). Prints the rates the runner logs and the whole step.
 *
 * <pre>usage: Etcd2Benchmark LAUNCHER BIN_DIR [KEYS]</pre>
 */
public final class Etcd2Benchmark {

    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        Path launcher = Path.of(args[0]);
        Path binDir = Path.of(args[1]);
        int keys = args.length > 2 ? Integer.parseInt(args[2]) : 100_000;
        Release v34 = Catalog.bundled().release(EtcdVersion.parse("3.4.23")).orElseThrow();
        Path work = Files.createTempDirectory("etcd-migrate-bench2");
        Children children = new Children(Duration.ofSeconds(10));
        Log quiet = Log.text(new PrintStream(OutputStream.nullOutputStream()));
        try {
            Path v2data = work.resolve("etcd2");
            long written = writeV2TtlKeys(v34, v2data, binDir, keys, children, quiet);
            long input = Trees.size(v2data);
            DiskPeak disk = DiskPeak.watch(v2data);
            String[] convert;
            try {
                convert = run(launcher, binDir, v2data, "3.4.23", "etcd3");
            } finally {
                disk.close();
            }
            System.out.printf(
                    "etcd2 -> etcd3, %d TTL keys, -Xmx64m: loaded %s keys with their leases in %s ms = %s keys/s (goal >= 50,000);"
                            + " whole conversion step %s ms; data dir %s before, peak %s = %.2fx (goal <= 3x)%n",
                    written,
                    convert[0],
                    convert[1],
                    convert[2],
                    convert[3],
                    DiskPeak.mib(input),
                    DiskPeak.mib(disk.peak()),
                    disk.peak() / (double) input);

            Path v3data = work.resolve("etcd3");
            writeV3Keys(v34, v3data, binDir, keys, children, quiet);
            input = Trees.size(v3data);
            disk = DiskPeak.watch(v3data);
            String[] rollback;
            try {
                rollback = run(launcher, binDir, v3data, "3.4.23", "etcd2");
            } finally {
                disk.close();
            }
            System.out.printf(
                    "etcd3 -> etcd2, %d keys, -Xmx64m: loaded %s keys in %s ms = %s keys/s (goal >= 10,000);"
                            + " whole rollback step %s ms; data dir %s before, peak %s = %.2fx (goal <= 3x)%n",
                    keys,
                    rollback[0],
                    rollback[1],
                    rollback[2],
                    rollback[3],
                    DiskPeak.mib(input),
                    DiskPeak.mib(disk.peak()),
                    disk.peak() / (double) input);
        } finally {
            children.stopAll();
            Trees.deleteRecursively(work);
        }
    }

    private static PrivateEtcd.Settings settings(Path binDir) {
        return new PrivateEtcd.Settings(
                new BinDir(binDir),
                "bench",
                FreePorts.pick(),
                List.of(),
                Duration.ofMinutes(1),
                Duration.ofSeconds(30),
                System.getenv(),
                GatewayClient.newHttpClient());
    }

    private static long writeV2TtlKeys(Release release, Path data, Path binDir, int keys, Children children, Log log)
            throws Exception {
        Permissions.ownerOnlyDir(data);
        PrivateEtcd.Settings settings = settings(binDir);
        try (PrivateEtcd etcd =
                PrivateEtcd.start(release, data, settings, release.line().v2EnableFlags(), log, children)) {
            etcd.awaitWrite(settings.startTimeout(), StorageApi.ETCD2);
            try (V2Client.Loader loader = etcd.v2().loader(64)) {
                for (int i = 0; i < keys; i++) {
                    loader.put(
                            "/registry/events/ns-" + (i % 50) + "/event-" + i,
                            "{\"kind\":\"Event\",\"n\":" + i + "}",
                            3600);
                }
            }
            etcd.stop(settings.stopGrace());
        }
        new DataDir(data).writeVersion(new DataVersion(release.etcdVersion(), StorageApi.ETCD2));
        return keys;
    }

    private static void writeV3Keys(Release release, Path data, Path binDir, int keys, Children children, Log log)
            throws Exception {
        Permissions.ownerOnlyDir(data);
        PrivateEtcd.Settings settings = settings(binDir);
        try (PrivateEtcd etcd = PrivateEtcd.start(release, data, settings, List.of(), log, children)) {
            etcd.awaitWrite(settings.startTimeout());
            try (Client client =
                    Client.builder().endpoints(etcd.gateway().baseUrl()).build()) {
                long lease = client.getLeaseClient()
                        .grant(3600)
                        .get(30, TimeUnit.SECONDS)
                        .getID();
                List<CompletableFuture<?>> pending = new ArrayList<>();
                for (int i = 0; i < keys; i++) {
                    var option = i % 10 == 0
                            ? io.etcd.jetcd.options.PutOption.builder()
                                    .withLeaseId(lease)
                                    .build()
                            : io.etcd.jetcd.options.PutOption.DEFAULT;
                    pending.add(client.getKVClient()
                            .put(
                                    SampleData.bytes("/registry/pods/ns-" + (i % 50) + "/pod-" + i),
                                    SampleData.bytes("{\"kind\":\"Pod\",\"n\":" + i + "}"),
                                    option));
                    if (pending.size() == 64) { // more in flight timed out on a loaded 2-core machine
                        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new))
                                .get(60, TimeUnit.SECONDS);
                        pending.clear();
                    }
                }
                CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new))
                        .get(60, TimeUnit.SECONDS);
            }
            etcd.stop(settings.stopGrace());
        }
        new DataDir(data).writeVersion(new DataVersion(release.etcdVersion(), StorageApi.ETCD3));
    }

    /**
     * Runs the launcher with a 64 MiB heap and JSON logs; returns the keys-loaded event's keys, millis and
     * rate (the step's one bulk load: the re-attachment, or the /v2/keys reload) and the step's time.
     */
    private static String[] run(Path launcher, Path binDir, Path data, String version, String storage)
            throws Exception {
        ServerPorts ports = FreePorts.pick();
        List<String> command = new ArrayList<>(List.of(launcher.toString()));
        command.addAll(RunnerArgs.flags(data, binDir, version, "bench"));
        command.addAll(List.of("--target-storage", storage));
        command.addAll(RunnerArgs.ports(ports));
        command.addAll(List.of("--no-exec", "--start-timeout", System.getProperty("bench.start.timeout", "2m")));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("ETCD_MIGRATE_JAVA_OPTS", "-Xmx64m");
        builder.environment().put("LOG_FORMAT", "json");
        Process p = builder.start();
        String[] found = new String[4];
        List<String> tail = new ArrayList<>();
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) {
                JsonNode event;
                try {
                    event = JSON.readTree(line);
                } catch (Exception notJson) {
                    continue;
                }
                if (!event.path("source").asText().equals("etcd-migrate")) continue;
                tail.add(event.path("time").asText() + " "
                        + event.path("message").asText());
                switch (event.path("event").asText()) {
                    case "keys-loaded" -> {
                        long keys = event.path("keys").asLong();
                        long millis = event.path("millis").asLong();
                        found[0] = String.valueOf(keys);
                        found[1] = String.valueOf(millis);
                        found[2] = String.valueOf(keys * 1000 / Math.max(1, millis));
                    }
                    case "step-finished" -> found[3] = event.path("tookMillis").asText();
                    default -> {}
                }
            }
        }
        if (Boolean.getBoolean("bench.verbose")) tail.forEach(System.out::println); // the phases, timestamped
        if (p.waitFor() != 0 || found[0] == null || found[3] == null) {
            throw new IllegalStateException("the run failed (exit " + p.exitValue() + "):\n" + String.join("\n", tail));
        }
        return found;
    }
}
