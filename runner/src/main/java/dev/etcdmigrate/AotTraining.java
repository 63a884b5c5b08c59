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
            trainAnsweredCalls(http);
        }
        new com.fasterxml.jackson.databind.ObjectMapper().readTree("{\"header\":{\"revision\":\"1\"},\"alarms\":[]}");
    }

    /** etcd's gateway as a private etcd answers once it serves: every call answered 200 with one JSON body. */
    private static final String ANSWER = "{\"header\":{\"cluster_id\":\"1\",\"member_id\":\"2\",\"revision\":\"3\","
            + "\"raft_term\":\"4\"},\"alarms\":[],\"etcdserver\":\"3.5.35\",\"etcdcluster\":\"3.5.0\"}";

    /**
     * The calls a step makes once its private etcd serves (the write probe and its delete, status, alarms,
     * /version), answered by a loopback stand-in of the gateway: the refused request above trains only the
     * connect path, and the answered exchange (the HTTP client's reading and writing, the reply's JSON) would
     * be 140 classes spun or loaded at run time between etcd's "ready" and the accepted write (150-400 ms at load).
     */
    static void trainAnsweredCalls(java.net.http.HttpClient http) throws Exception {
        try (java.net.ServerSocket server =
                new java.net.ServerSocket(0, 4, java.net.InetAddress.getLoopbackAddress())) {
            // a daemon: it may still wait on the client's kept-alive connection when the training ends
            Thread.ofPlatform().daemon(true).start(() -> serve(server));
            dev.etcdmigrate.etcd.client.GatewayClient gateway = new dev.etcdmigrate.etcd.client.GatewayClient(
                    http, java.net.URI.create("http://127.0.0.1:" + server.getLocalPort()), "/v3");
            for (int round = 0; round < 2; round++) {
                gateway.put("/etcd-migrate-aot-training", "x");
                gateway.delete("/etcd-migrate-aot-training");
                gateway.status();
                gateway.alarms();
                gateway.version();
            }
        }
    }

    /** Answers every request on every connection (HTTP/1.1 keep-alive) with {@link #ANSWER}, until closed. */
    private static void serve(java.net.ServerSocket server) {
        byte[] body = ANSWER.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] head = ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                        + "\r\n\r\n")
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        while (!server.isClosed()) {
            try (java.net.Socket socket = server.accept()) {
                java.io.BufferedInputStream in = new java.io.BufferedInputStream(socket.getInputStream());
                OutputStream out = socket.getOutputStream();
                while (true) {
                    int length = 0;
                    String line;
                    boolean any = false;
                    while (!(line = headerLine(in)).isEmpty()) {
                        any = true;
                        if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:"))
                            length = Integer.parseInt(
                                    line.substring("content-length:".length()).strip());
                    }
                    if (!any) break; // the client closed the connection
                    in.readNBytes(length);
                    out.write(head);
                    out.write(body);
                    out.flush();
                }
            } catch (IOException closed) {
                // the server socket closed: training over
            }
        }
    }

    /** One header line without its CRLF; empty at the blank line or the end of the stream. */
    private static String headerLine(java.io.InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = in.read()) != -1 && c != '\n') {
            if (c != '\r') line.append((char) c);
        }
        return line.toString();
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
        runStepThatFails(
                "the training run with a step", data, bin, newest.version(), Map.of(), "--", "--snapshot-count=10000");
    }

    /**
     * A run of {@code data} to {@code target} with one step, on free private ports, whose stand-in etcd exits at once:
     * it must fail (exit 1) there, after everything before the step's etcd ran.
     */
    private static void runStepThatFails(
            String what, Path data, Path bin, String target, Map<String, String> environment, String... more) {
        ServerPorts ports = FreePorts.pick();
        List<String> args = new ArrayList<>(List.of(
                "--port",
                String.valueOf(ports.client()),
                "--peer-port",
                String.valueOf(ports.peer()),
                "--start-timeout",
                "10s"));
        args.addAll(List.of(more));
        int code = Main.run(
                trainingArgs(data, bin, target, args.toArray(String[]::new)),
                environment,
                new PrintStream(OutputStream.nullOutputStream()));
        if (code != 1) {
            throw new IllegalStateException(what + " exited with " + code + ", not 1 (its stand-in etcd exits)");
        }
    }

    /** The training member's command line: its data dir to {@code target} with the binaries in {@code bin}, then {@code more}. */
    private static List<String> trainingArgs(Path data, Path bin, String target, String... more) {
        List<String> args = new ArrayList<>(List.of(
                "--data-dir",
                data.toString(),
                "--bin-dir",
                bin.toString(),
                "--target-version",
                target,
                "--name",
                AotTrainingData.MEMBER));
        args.addAll(List.of(more));
        return List.copyOf(args);
    }

    /**
     * Restarts of real data, each twice (the first start asks the stand-in etcd, the second is the restart that
     * remembers its answer), with a one-member cluster's flags after {@code --}: the data dir as etcd 3.5.35 left
     * it after its first start (a db and a WAL segment holding the member's conf change), as a migration leaves
     * it (also a v2 snapshot), and 3.4.23's first start (the data of a 3.4 -> 3.5 migration). The empty files of {@link #etcd3DataDir} never reach the db's buckets, the WAL's
     * records, the members' JSON or the snapshot, so each of those lambdas, type switches and classes would be made or
     * loaded at run time on every restart of real data without these runs: 100-400 ms at load.
     */
    static void trainRestarts(Path work) throws Exception {
        Path bin = Permissions.ownerOnlyDir(work.resolve("bin"));
        for (String v : List.of(AotTrainingData.VERSION, AotTrainingData.V34)) {
            executable(bin.resolve("etcd-" + v), "#!/bin/sh\necho 'etcd Version: " + v + "'\n");
        }
        for (String shape : List.of("wal-only", "snapshot", "3.4")) {
            Path data = realData(work.resolve(shape), shape);
            String version = shape.equals("3.4") ? AotTrainingData.V34 : AotTrainingData.VERSION;
            // every page checked, as a start with steps does before its first etcd: the mapping, the walk and the
            // value decoders come loaded and linked instead of loaded between the start and the first etcd
            try (dev.etcdmigrate.ondisk.BboltFile db =
                    dev.etcdmigrate.ondisk.BboltFile.open(data.resolve("member/snap/db"))) {
                db.checkPages();
            }
            String peer = "http://127.0.0.1:2380";
            String client = "http://127.0.0.1:2379";
            List<String> restart = trainingArgs(
                    data,
                    bin,
                    version,
                    "--no-exec",
                    "--",
                    "--name",
                    AotTrainingData.MEMBER,
                    "--data-dir",
                    data.toString(),
                    "--listen-client-urls",
                    client,
                    "--advertise-client-urls",
                    client,
                    "--listen-peer-urls",
                    peer,
                    "--initial-advertise-peer-urls",
                    peer,
                    "--initial-cluster",
                    AotTrainingData.MEMBER + "=" + peer);
            runNoOp("the training restart of " + shape + " data", restart, Map.of());
            runNoOp("the training restart of " + shape + " data, again", restart, Map.of());
            runNoOp("the training restart of " + shape + " data in JSON lines", restart, Map.of("LOG_FORMAT", "json"));
        }
    }

    /**
     * The data of {@code shape} as etcd left it ({@link AotTrainingData}): a db and a WAL segment holding the member's
     * conf change, for "snapshot" a v2 snapshot too, and version.txt naming the release that wrote it.
     */
    private static Path realData(Path dir, String shape) throws IOException {
        Path data = Permissions.ownerOnlyDir(dir);
        Path snap = Files.createDirectories(data.resolve("member/snap"));
        Path wal = Files.createDirectories(data.resolve("member/wal"));
        String version = shape.equals("3.4") ? AotTrainingData.V34 : AotTrainingData.VERSION;
        AotTrainingData.write(
                snap.resolve("db"),
                switch (shape) {
                    case "snapshot" -> AotTrainingData.SNAPSHOT_DB;
                    case "3.4" -> AotTrainingData.V34_DB;
                    default -> AotTrainingData.WAL_ONLY_DB;
                });
        AotTrainingData.write(
                wal.resolve("0000000000000000-0000000000000000.wal"),
                switch (shape) {
                    case "snapshot" -> AotTrainingData.SNAPSHOT_WAL;
                    case "3.4" -> AotTrainingData.V34_WAL;
                    default -> AotTrainingData.WAL_ONLY_WAL;
                });
        if (shape.equals("snapshot"))
            AotTrainingData.write(snap.resolve(AotTrainingData.SNAPSHOT_NAME), AotTrainingData.SNAPSHOT_SNAP);
        Files.writeString(data.resolve("version.txt"), version + "/etcd3");
        return data;
    }

    /**
     * The first start of a 3.4 -> 3.5 upgrade on real 3.4 data, in both log formats, each on a fresh copy: the
     * members read from the WAL and the db (a start with steps reads them; a restart at the target does not), the
     * decision and the checks of real data, the binaries asked, up to the step's etcd. The stand-in etcd exits at
     * once, so the step fails (exit 1). Without it, those classes are loaded from the jar and those lambdas linked
     * between the launch and the first etcd of every first start.
     */
    static void trainFirstStart(Path work) throws Exception {
        Path bin = Permissions.ownerOnlyDir(work.resolve("bin"));
        for (String v : List.of(AotTrainingData.VERSION, AotTrainingData.V34)) {
            executable(bin.resolve("etcd-" + v), "#!/bin/sh\necho 'etcd Version: " + v + "'\n");
        }
        int run = 0;
        for (Map<String, String> environment : List.of(Map.<String, String>of(), Map.of("LOG_FORMAT", "json"))) {
            Path data = realData(work.resolve("first-start-" + run++), "3.4");
            runStepThatFails(
                    "the training's first start of 3.4 data",
                    data,
                    bin,
                    AotTrainingData.VERSION,
                    environment,
                    "--no-exec");
        }
    }

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
            List<String> noOp = trainingArgs(data, bin, newest.version(), "--no-exec");
            runNoOp("the training migration", noOp, Map.of());
            Execve.link();
            trainStepPath(data.resolve("member/snap/db"));
            trainRunWithSteps(catalog, work.resolve("steps"));
            trainRestarts(work.resolve("restarts"));
            trainFirstStart(work.resolve("first-start"));
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
