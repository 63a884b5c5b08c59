package dev.etcdmigrate;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.exec.Execve;
import dev.etcdmigrate.plan.Planner;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The training run behind the runner's AOT cache (JDK 25, -XX:AOTCacheOutput), made at build time:
 * it walks the no-op restart path (options, version.txt, the at-target check), links execve without
 * calling it, and plans with the catalog, so those classes come loaded and linked at start. Then the
 * first things a run with steps does: the storage version read from a db file, the HTTP client of the
 * private etcds (one request to a loopback port nobody listens on: the request and connect path, refused)
 * and the JSON of their answers; a run with one step up to its first etcd ({@link #trainRunWithSteps}); the
 * no-op again in JSON lines. It touches only a temp dir and loopback; its only processes are stand-in
 * binaries in that dir.
 */
public final class AotTraining {

    private AotTraining() {}

    /** What a run with steps needs before and at its first step, without an etcd. */
    static void trainStepPath(Path emptyDb) throws Exception {
        try {
            dev.etcdmigrate.ondisk.BackendStorageVersion.read(emptyDb);
        } catch (java.io.IOException expected) {
            // an empty file is no bbolt db: the reader's paths up to the meta page check
        }
        dev.etcdmigrate.ondisk.BackendStorageVersion.lockHolder(emptyDb);
        java.net.http.HttpClient http = dev.etcdmigrate.etcd.client.GatewayClient.newHttpClient();
        try (http) {
            int port;
            try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
                port = s.getLocalPort(); // closed again: the request below is refused
            }
            dev.etcdmigrate.etcd.client.GatewayClient gateway = new dev.etcdmigrate.etcd.client.GatewayClient(
                    http, java.net.URI.create("http://127.0.0.1:" + port), "/v3");
            try {
                gateway.put("/etcd-migrate-aot-training", "x");
            } catch (java.io.IOException refused) {
                // nobody listens there
            }
        }
        new com.fasterxml.jackson.databind.ObjectMapper().readTree("{\"header\":{\"revision\":\"1\"},\"alarms\":[]}");
    }

    /**
     * A one-step run (the previous line to the newest) up to its first etcd: stand-in binaries that only
     * print their version, so the checks of a plan with steps (the binaries asked at once, free ports, the
     * server flags), the plan, and the step's start run; the stand-in etcd exits at once, so the step fails
     * (exit 1). The only processes of the training, in its temp dir.
     */
    static void trainRunWithSteps(Catalog catalog, Path work) throws Exception {
        Release newest = catalog.releases().getLast();
        Release previous = catalog.releases().get(catalog.releases().size() - 2);
        Path bin = Permissions.ownerOnlyDir(work.resolve("bin"));
        for (Release release : List.of(previous, newest)) {
            executable(
                    bin.resolve("etcd-" + release.version()),
                    "#!/bin/sh\necho 'etcd Version: " + release.version() + "'\n");
        }
        Path data = etcd3DataDir(work.resolve("data"), previous);
        ServerPorts ports = FreePorts.pick();
        int code = Main.run(
                trainingArgs(
                        data,
                        bin,
                        newest,
                        "--port",
                        String.valueOf(ports.client()),
                        "--peer-port",
                        String.valueOf(ports.peer()),
                        "--start-timeout",
                        "10s",
                        "--",
                        "--snapshot-count=10000"),
                Map.of(),
                new PrintStream(OutputStream.nullOutputStream()));
        if (code != 1) {
            throw new IllegalStateException(
                    "the training run with a step exited with " + code + ", not 1 (its stand-in etcd exits)");
        }
    }

    /** The training member's command line: its data dir to {@code target} with the binaries in {@code bin}, then {@code more}. */
    private static List<String> trainingArgs(Path data, Path bin, Release target, String... more) {
        List<String> args = new ArrayList<>(List.of(
                "--data-dir",
                data.toString(),
                "--bin-dir",
                bin.toString(),
                "--target-version",
                target.version(),
                "--name",
                "training"));
        args.addAll(List.of(more));
        return List.copyOf(args);
    }

    /**
     * A training run that must succeed: one that ends early (a refusal, a bad flag) trains the failure path
     * instead of the one the cache is for, so the build stops and says so.
     */
    static void runNoOp(String what, List<String> args, Map<String, String> environment) {
        int code = Main.run(args, environment, new PrintStream(OutputStream.nullOutputStream()));
        if (code != 0) {
            throw new IllegalStateException(what + " exited with " + code + ", not 0");
        }
    }

    /** The layout the data dir checks expect of etcd3 data (a backend and a WAL, both empty), written by {@code release}. */
    private static Path etcd3DataDir(Path dir, Release release) throws IOException {
        Path data = Permissions.ownerOnlyDir(dir);
        Files.createDirectories(data.resolve("member/snap"));
        Files.createFile(data.resolve("member/snap/db"));
        Files.createDirectories(data.resolve("member/wal"));
        Files.createFile(data.resolve("member/wal/0000000000000000-0000000000000000.wal"));
        Files.writeString(data.resolve("version.txt"), release.version() + "/etcd3");
        return data;
    }

    private static void executable(Path file, String content) throws IOException {
        Files.writeString(
                Files.createFile(
                        file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"))),
                content);
    }

    public static void main(String[] args) throws Exception {
        Path work = Files.createTempDirectory("etcd-migrate-aot");
        try {
            Catalog catalog = Catalog.bundled();
            Release newest = catalog.releases().getLast();
            Path bin = Permissions.ownerOnlyDir(work.resolve("bin"));
            executable(bin.resolve("etcd-" + newest.version()), "");
            Path data = etcd3DataDir(work.resolve("data"), newest);
            List<String> noOp = trainingArgs(data, bin, newest, "--no-exec");
            runNoOp("the training migration", noOp, Map.of());
            Execve.link();
            trainStepPath(data.resolve("member/snap/db"));
            trainRunWithSteps(catalog, work.resolve("steps"));
            // the same no-op in JSON lines (LOG_FORMAT=json, what tests and log collectors use)
            runNoOp("the training migration in JSON lines", noOp, Map.of("LOG_FORMAT", "json"));
            new Planner(catalog)
                    .plan(
                            new DataVersion(
                                    catalog.releases()
                                            .get(catalog.releases().size() - 2)
                                            .etcdVersion(),
                                    StorageApi.ETCD3),
                            new DataVersion(newest.etcdVersion(), StorageApi.ETCD3));
        } finally {
            Trees.deleteRecursively(work);
        }
    }
}
