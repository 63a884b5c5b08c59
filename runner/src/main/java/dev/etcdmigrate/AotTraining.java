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
     * connect path, and the answered exchange (the HTTP client's reading and writing, the reply's JSON) was
     * 140 classes spun or loaded at run time between etcd's "ready" and the accepted write (150-400 ms at load).
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
     * Restarts of real data, each twice (the first start asks the stand-in etcd, the second is the restart that
     * remembers its answer), with a one-member cluster's flags after {@code --}: the data dir as etcd 3.5.35 left
     * it after its first start (a db and a WAL segment holding the member's conf change), as a migration leaves
     * it (also a v2 snapshot), and 3.4.23's first start (the data of a 3.4 -> 3.5 migration). The empty files of {@link #etcd3DataDir} never reach the db's buckets, the WAL's
     * records, the members' JSON or the snapshot, so each of those lambdas, type switches and classes was made or
     * loaded at run time on every restart of real data: 100-400 ms at load, before this.
     */
    static void trainRestarts(Path work) throws Exception {
        Path bin = Permissions.ownerOnlyDir(work.resolve("bin"));
        for (String v : List.of(RealData.VERSION, RealData.V34)) {
            executable(bin.resolve("etcd-" + v), "#!/bin/sh\necho 'etcd Version: " + v + "'\n");
        }
        for (String shape : List.of("wal-only", "snapshot", "3.4")) {
            Path data = Permissions.ownerOnlyDir(work.resolve(shape));
            Path snap = Files.createDirectories(data.resolve("member/snap"));
            Path wal = Files.createDirectories(data.resolve("member/wal"));
            String version = shape.equals("3.4") ? RealData.V34 : RealData.VERSION;
            RealData.write(
                    snap.resolve("db"),
                    switch (shape) {
                        case "snapshot" -> RealData.SNAPSHOT_DB;
                        case "3.4" -> RealData.V34_DB;
                        default -> RealData.WAL_ONLY_DB;
                    });
            RealData.write(
                    wal.resolve("0000000000000000-0000000000000000.wal"),
                    switch (shape) {
                        case "snapshot" -> RealData.SNAPSHOT_WAL;
                        case "3.4" -> RealData.V34_WAL;
                        default -> RealData.WAL_ONLY_WAL;
                    });
            if (shape.equals("snapshot")) RealData.write(snap.resolve(RealData.SNAPSHOT_NAME), RealData.SNAPSHOT_SNAP);
            Files.writeString(data.resolve("version.txt"), version + "/etcd3");
            String peer = "http://127.0.0.1:2380";
            String client = "http://127.0.0.1:2379";
            List<String> restart = List.of(
                    "--data-dir",
                    data.toString(),
                    "--bin-dir",
                    bin.toString(),
                    "--target-version",
                    version,
                    "--name",
                    RealData.MEMBER,
                    "--no-exec",
                    "--",
                    "--name",
                    RealData.MEMBER,
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
                    RealData.MEMBER + "=" + peer);
            runNoOp("the training restart of " + shape + " data", restart, Map.of());
            runNoOp("the training restart of " + shape + " data, again", restart, Map.of());
            runNoOp("the training restart of " + shape + " data in JSON lines", restart, Map.of("LOG_FORMAT", "json"));
        }
    }

    /**
     * A one-member etcd 3.5.35 data dir (member "training", peer http://127.0.0.1:23800), gzip'd and Base64'd: the
     * db cut to its last used page, the WAL segment to its last record (etcd preallocates 64 MB), and for the
     * snapshot shape the newest v2 snapshot of a start with --snapshot-count=1 and one put.
     */
    static final class RealData {

        static final String VERSION = "3.5.35";
        /** The same first start by etcd 3.4.23 (the raft voters come from the WAL: 3.4 keeps no confState). */
        static final String V34 = "3.4.23";

        static final String MEMBER = "training";
        static final String SNAPSHOT_NAME = "0000000000000003-0000000000000006.snap";

        static void write(Path file, String gzipBase64) throws IOException {
            byte[] bytes;
            try (java.util.zip.GZIPInputStream in = new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(
                    java.util.Base64.getDecoder().decode(gzipBase64)))) {
                bytes = in.readAllBytes();
            }
            Files.write(file, bytes);
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        }

        static final String WAL_ONLY_DB = ""
                + "H4sIAAAAAAACA+3bvW7TUBQH8Nw0hIIq4A2KrsQWpf7IR+MVFiQWgoqEaIku8Q218EdlOxGldOAVEBMTEgsjCwsbEk/BwghL"
                + "XgG4xichjoDbIYAF/19065zk3NjXtiqdo6RSydVoO32/Ma1mTy7k8Vql6As5RXGdti+CD/W3h/6zCgAAAAAAAACUDtPU/zVN"
                + "/X+atpc+7b38/Gj3Hc4oAAAAAAAAQPlU59uz837AczWy+v4ixa+pD3CF4qkaZxber7NivMnyvsAs7rD8ewSz+Corfv6dpfyx"
                + "+nN+IX7K8v1nsfBFHOgWI8bp/s9z2Px51uPYUGOd5vTlxEu8KKS32bfXIl8mJ9nhTiJjbeLQHyepjHVp9+WhLsWXIpG6pEAG"
                + "d09wVJQ2iGUQTaSrT0+FLgcAAAAAAADKZa1E9f8Tij8u1f/1ar7/V6j/V13/F89FNvpqWNK02j23ZbZHljBaxhH3XO7Yttnb"
                + "NludltXtmB2722tbDX4gZbzTv5Zw5zbfT9MDZ2vLtLpNQz1Mx7K3DYPvNXgoAskdnsbCC73wHj9eacfh+29UDLozbYp3aVHr"
                + "FLt0J2fxMApHN1KRyiM+idQ1yZbwgyWqo1dXNxqo8z1RaxgJP5HHam7iqQsZpgMvdOWD2Q2jPmZ2czL8bwEAAAAAgHKp/cb6"
                + "/zLFt5bqf3+p/n9M+W8otqrF+v/6f1T/Fw/uHF0JmnZT7UEdnt1sN42/2CJ4+CdaBA0+9D1VYP9iZrenZv6jrYTaQisB36kA"
                + "AAAAAIBV+Aq51Gm3AFAAAA==";

        static final String WAL_ONLY_WAL = ""
                + "H4sIAAAAAAACA2NhAIMWDhYBMEMWwm/mYBTonfNTTEqE48CBU+sP7prWqSfQfvXtrv6rcw+yABXwQdQ1cbAKtPcc7eWVYuFg"
                + "AJlQAjOPSeDL7t3tvFJZQJMYJRiVkkDyEnDDlIKqlTJTlKyMjQ0tLQxNzEyMzM0MzYzNLU2NdJQKUlOLQoN8ipWsopUySkoK"
                + "rPT1DY3M9QyA0NDKyNjCwEApVkcpLzE3VclKqaQoMTMvMy9dqRZkMcQXDAwczAJ7pncd45ZiA9rPIMEIF2cSmHdv6TdeoDiD"
                + "AJMEkwRC/cIf97dxSPEBVcBdKcG0AKHv4qtFDYxSUxnBGpmVehg5GpuuNrYeWbFgAaMQc0BoiJSavoF+bmpuUmpRsb5RqqGR"
                + "qWWKiaFpmlGigYmBfmJJSVFmUmlJarGSdTWG43WUknMyU/NK8Hjb3BLo7VoNBiMGCwYPhgCGCIYEhgyGAoYKhgZGBiR/fJg3"
                + "Yw8jmj+YfRDxcvNe0xUmKSewN1iUrDia0HzBBfRFGdALmfl5SqzGeqZ6BjjsBAEke79s3PyPC81eFgCkh+J2YAIAAA==";

        static final String SNAPSHOT_DB = ""
                + "H4sIAAAAAAACA+3aTWvUQBgH8E127RultjdvljnKus3LvjQ5VvGkBysVii9hupm1wbyUZLpYSwW/gjdv3gURoRcRP4f4HfYz"
                + "1Il5srqLbSqIVPn/lunk2ZlJMjvpwjNsrVZoUD36ujjS84PlIq7XJp2QSxQvUf328/bj+Q8br2oAAAAAAAAAcOFoFfl/oyL/"
                + "v0z1defLya1j6xM+UQAAAAAAAICLRx/XC+P9gDeq5Pn9KsXHtA9wk+KRKvM/tc9ok/FV9WdW1Tco3taK3xGU7aE2ef6X1P8j"
                + "xZZe7CuU7Xf14vrvVeEhT6OqyfB9uXt6H218nO9xLKoyR2M2xTDIgiSmZu37e0kosvNccCsTaWXHfrifSZGe9+aWaCVo2H11"
                + "BXV7dqvTMp6Kg6qLhYJnoqpTJKKdM2988o7y8jxfI2FaHcdvm52BxY22ccgCn7m2bTrrZrvbtnpds2v3nI7VZHtCpFubtzPm"
                + "PmC7Uu65a2um1WsZ6mW6lr1uGOxRk8U8EsxlMuVBHMRPWJP1w0DE8oyRPUeNPKIJeKmIkqHwq+cr+el9fvzcxaCH3Kb4IU1+"
                + "jmKf/inyuJ/Eg3uSS3HIholap/yGf/FRqFmqByXx1LoM1VwHPMzEkRqbBWpxY+kFsS+e0eln1GnK57yOrykAAAAAAPgD6n8x"
                + "/79D8eup/P/dVP7vTeX/L5D//2b+P3mWFZpm2eyVRwsaX9av6KvaNW0HmwX/7mbBLDYLAAAAAACgWgP5P/J/5P/I/wEAAAAA"
                + "4L/3DYJSZYIAUAAA";

        static final String SNAPSHOT_WAL = ""
                + "H4sIAAAAAAACA2NhAIMWDhYBMEMWwm/mYBTonfNTTEqE48CBU+sP7prWqSfQfvXtrv6rcw+yABXwQdQ1cbAKtPcc7eWVYuFg"
                + "AJlQAjOPSeDL7t3tvFJZQJMYJRiVkkDyEnDDlIKqlTJTlKyMjQ0tLQxNzEyMzM0MzYzNLU2NdJQKUlOLQoN8ipWsopUySkoK"
                + "rPT1DY3M9QyA0NDKyNjCwEApVkcpLzE3VclKqaQoMTMvMy9dqRZkMcQXDAwczAJ7pncd45ZiA9rPIMEIF2cSmHdv6TdeoDiD"
                + "AJMEkwRC/cIf97dxSPEBVcBdKcG0AKHv4qtFDYxSUxnBGpmVehg5GpuuNrYeWbFgAaMQc0BoiJSavoF+bmpuUmpRsb5RqqGR"
                + "qWWKiaFpmlGigYmBfmJJSVFmUmlJarGSdTWG43WUknMyU/NK8Hjb3BLo7VoNBiMGCwYPhgCGCIYEhgyGAoYKhgZGBiR/fJg3"
                + "Yw8jmj+YfRDxcvNe0xUmKSewN1iUrDia0HzBBfRFGdALmfl5SqzGeqZ6BjjsBAEke79s3PyPC81eFhmYvawCBza/Oc4rJQRM"
                + "aUxSPIhkpcGAEm9MAiff7VrCCY4fZglWpPC/0bBvAh8k/Jkl2MDh/+BL8+AL/74Pb5bzAsOBGSkc2JDC4Wnjvj2swHBgE2DG"
                + "DAcNhH+7dl6/wSclB/Yuu5KYEhsXY6IQY9IiNm6OZrjHkezdturvdQ40e9kB4DKjE+ADAAA=";

        static final String SNAPSHOT_SNAP = ""
                + "H4sIAAAAAAACA+1Zy27TQBRFQkKlYoGyYj0rFiYeP6JS70po1UoFQVOKRN3FxL5tRvVL43HaUOUD+AHEX3TPqmxZsuQ3WCMx"
                + "thvHjxQ1kCwqjW0da+5j7rkzdzZ3Vn78/vnrYevSWv1iXaC9MORI/N8QPkAWUpGCugwIB3cncOEcWVhBr0KXHtOyZPM8ogz2"
                + "qQ/CB2OsPcu+fYyt7PsgpjkgXpKq0xkH1HMZBGkgXI6Glx7OB78PLK4EVSfCenCtEVz7r+A6aHpn3TW1zrFOsIlnslAbVsum"
                + "RThntJ9wiG9HSC051LmZDW7mfNwubBQQH2xk2YgzQgManNhIsZHjUQj4u73dWOgObTTgPLJUVdPX2li8mqUba+vYRkfjSnpB"
                + "4nljBTFyzDfmzbPmtPB9ELlGAOyvOT3HN+SUPgoaCuI0DKoJTYR1wkaDsDEfYaPdaeNZVBSklSloyz7HefLvCXcGwLaTfhp8"
                + "cyjqY5vGPGSjdPw2gdTzWiH2/FCUusOz1UJOxk5MGoRuZnQKo3mrYfhP2+g3SsapVpXIrEQ0Bj4XS3IDwwUcqhpzvc5cvxXz"
                + "aXEOa1XlN2qzOr9xV1bGrDM3RbFGDIav78o2psdaggQJEiRIkCBBggQJEiRIkCBBggQJC4MjBfXoR8i6h1ssDHjWIn9BnNNM"
                + "1CURcSgfIUvDGI+FMSeMT5vIuyTmRbdRqLsJYxDwaUdS2PPs4uMEeNxLHAfiOPNMx1uEeplVXFYa+ThXCjIueMChUBeSwiCJ"
                + "XFI1yCWFQd5pLEfPJVOD0I8Ig43A7Z2RqDxTVTPD4WWDXV1XOEF28dANk+tVPssvElKv6dIdTK5W9HGrtfpo5erq++W3r58/"
                + "tZ/ee/zgyf0/OlNYcjgdAAA=";

        static final String V34_DB = ""
                + "H4sIAAAAAAACA+3azWrUUBTA8WQ6flKs+y6Uux6m+ZqPZFXQTaEbB6qIaImdqw0mmZKkBRUX4ot04St04xO4dO1OXM8zaGLu"
                + "xCZgM4JCYf6/ISRn7rmTm8zqnETTSl21n39dn3eKg9tlvKbV/VCuqPj6Yt5knG1uj79oAAAAAADg0tFb6v9OS/1/Te2/f/s8"
                + "cD/un3JHAQAAAAC4fDrV/mbVDyiK+KK+v6viM9UfuK/ieb7dODd+Va/Hd/SyL7CIh3r5HsEi3tHrv/9M5X9S8Ua+qI1z4/1O"
                + "ef4i9kM/idouxj/ODv+co1fHRY9jXStfYijmTORJkAazWA3rv76bhTJd5oR7qUxaEw/C4zSTSVvaK/m6LSWUfirbkiIZPb9w"
                + "VfV7UWxv8s2SpjVwp445eGH5hmO8FcFUeLZtumPTGTrWaGgO7ZE7sHriSMpkb7KbCu+JOMyyI29ry7RGfSP/mJ5ljw1DPO2J"
                + "2I+k8ESW+EEcxC9FTxyEgYyzC2aO3HzmO3UB+4mMZidy2n69md+WAwAAAACrae0/1v/3VPy4Uf+Hjfr/faP+txr1/4MVqv/r"
                + "i7ul/gk17WF+hnx5dt/pG7QIaBEAAAAAwF/oVqVPt6r/t7X68/tHjX5A2Bj/oP2u15d8wP1vStNa2rIFIAAAAAAAq+cnJN6s"
                + "6gBQAAA=";

        static final String V34_WAL = ""
                + "H4sIAAAAAAACA2NhAIMWDhYBMEMWwm/mYBTonfNTTEqE48CBU+sP7prWqSfQfvXtrv6rcw+yABXwQdQ1cbAKtPcc7eWVYuFg"
                + "AJlQAjOPSeDL7t3tvFJZQJMYJRiVkkDyEnDDlIKqlTJTlKyMjQ0tLQxNzEyMzM0MzYzNLU2NdJQKUlOLQoN8ipWsopUySkoK"
                + "rPT1DY3M9QyA0NDKyNjCwEApVkcpLzE3VclKqaQoMTMvMy9dqRZkMcQXDAwczAJ7pncd45ZiA9rPIMEIF2cSmHdv6TdeoDiD"
                + "AJME03yIcCNQ/EbvrCKpqYxgcWalHkaOpglzJrUdWbFgAaMQc0BoiJSavoF+bmpuUmpRsb5RqqGRqWWKiaFpmlGigYmBfmJJ"
                + "SVFmUmlJarGSdTWG23SUknMyU/NK8PjK3BLoq1oNBiMGCwYPhgCGCIYEhgyGAoYKhgZGBgYJhL9eXtq4n0+KD+hieGhKMPsg"
                + "wv1d85pWLiknsD9YlKw4WtC8wQX0RhnQD5n5eUqsxnomega4LGVAtffXiwu8aPay2MHSAZPA9G1TFzNLmYDtZVXS4WhF2MsS"
                + "6O4aIsWgxIDTJiR7Jn08NY8dzR5WAHS9TQqoAgAA";
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
            trainRestarts(work.resolve("restarts"));
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
