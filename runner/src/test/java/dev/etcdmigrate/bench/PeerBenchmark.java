package dev.etcdmigrate.bench;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.SingleMember;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Downtime against Kubernetes' own migrate tool (k8s.io/kubernetes/cluster/images/etcd/migrate, built by
 * scripts/build-kubernetes.sh etcd-migrate-k8s): both tools, alternating, on fresh copies of the same
 * 3.4.23 data, from spawning the tool until the target etcd acknowledges a write on its real client port.
 *
 * <pre>
 * usage: PeerBenchmark LAUNCHER BIN_DIR K8S_MIGRATE [SIZES_MIB=0,250] [RUNS=5] [TARGETS=3.5.35,3.6.16]
 * </pre>
 *
 * <ul>
 *   <li>ours: {@code etcd-migrate --target-version T ... -- <etcd flags>}: it migrates, then execs etcd-T
 *       with the flags after {@code --};
 *   <li>theirs: {@code migrate --target-version T --bundled-versions 3.4.23,3.5.35,3.6.16 ...} until it
 *       exits 0, then etcd-T started with the same etcd flags (what their image's migrate-if-needed.sh
 *       does: exec etcd after the tool). Their tool starts private etcds with {@code --debug}, which 3.5
 *       and 3.6 builds reject: it gets a bin dir whose etcd-&lt;v&gt; is a shell wrapper that drops that flag
 *       and execs the real binary (so its etcds run as long as ours).
 * </ul>
 *
 * Size 0 is a data dir of 200 small keys; any other size is ScaleBenchmark's cached 3.4.23 data dir of
 * that many MiB of db.
 *
 * <p>Two more tables give the floors (docs/benchmarks.md, "Against Kubernetes' migrate tool, and its floors"): the target etcd alone on
 * a copy of the same data in the same rotation, and each of our runs split by its own JSON events ({@link Parts}).
 */
public final class PeerBenchmark {

    private static final List<String> BUNDLED = List.of("3.4.23", "3.5.35", "3.6.16");

    public static void main(String[] args) throws Exception {
        // BENCH_LAUNCHER (env): another build of the runner (e.g. a proposed change) instead of this tree's;
        // BENCH_VARIANTS (env): more builds, comma-separated, measured in the same rotation (each its own row)
        List<Path> launchers =
                new ArrayList<>(List.of(Path.of(System.getenv().getOrDefault("BENCH_LAUNCHER", args[0]))));
        for (String more : System.getenv().getOrDefault("BENCH_VARIANTS", "").split(",")) {
            if (!more.isBlank()) launchers.add(Path.of(more.strip()));
        }
        Path binDir = Path.of(args[1]);
        Path k8s = Path.of(args[2]);
        List<Long> sizes = args.length > 3
                ? java.util.Arrays.stream(args[3].split(","))
                        .map(Long::parseLong)
                        .toList()
                : List.of(0L, 250L);
        int runs = args.length > 4 ? Integer.parseInt(args[4]) : 5;
        List<String> targets = args.length > 5 ? List.of(args[5].split(",")) : List.of("3.5.35", "3.6.16");
        Catalog catalog = Catalog.bundled();
        Path cache = Path.of(System.getProperty("user.home"), ".cache", "etcd-migrate", "bench-data");
        Path work = Files.createTempDirectory(Path.of("/var/tmp"), "etcd-migrate-peer");
        System.out.println("ours: " + launchers + "; Kubernetes' tool: " + k8s + "; "
                + Runtime.getRuntime().availableProcessors() + " cores; load "
                + Files.readString(Path.of("/proc/loadavg")).trim());
        List<String> table = new ArrayList<>();
        List<String> floors = new ArrayList<>();
        List<String> breakdown = new ArrayList<>();
        try {
            Path wrapped = wrapperBinDir(binDir, work.resolve("k8s-bin"));
            for (long mib : sizes) {
                Path seed =
                        mib == 0 ? smallSeed(catalog, binDir, cache) : ScaleBenchmark.seed(catalog, binDir, cache, mib);
                for (String target : targets) {
                    List<List<Long>> ours = new ArrayList<>();
                    launchers.forEach(l -> ours.add(new ArrayList<>()));
                    List<List<Parts>> parts = new ArrayList<>();
                    launchers.forEach(l -> parts.add(new ArrayList<>()));
                    List<Long> theirs = new ArrayList<>();
                    List<Long> alone = new ArrayList<>();
                    for (int i = 0; i < runs; i++) {
                        boolean theirsFirst = i % 2 == 1;
                        if (theirsFirst) theirs.add(theirs(k8s, wrapped, binDir, seed, work, target));
                        for (int l = 0; l < launchers.size(); l++) {
                            int at = (l + i) % launchers.size(); // the builds take turns going first
                            Parts run = ours(launchers.get(at), binDir, seed, work, target);
                            ours.get(at).add(run.total());
                            parts.get(at).add(run);
                        }
                        if (!theirsFirst) theirs.add(theirs(k8s, wrapped, binDir, seed, work, target));
                        alone.add(alone(binDir, seed, work, target));
                        System.out.printf(
                                "%s 3.4.23 -> %s run %d: ours %s ms, Kubernetes' %d ms, etcd-%s alone %d ms%n",
                                mib == 0 ? "small" : mib + " MiB",
                                target,
                                i + 1,
                                parts.stream().map(o -> o.getLast().toString()).toList(),
                                theirs.getLast(),
                                target,
                                alone.getLast());
                    }
                    floors.add(String.format(
                            "| 3.4.23 -> %s | %s | %d ms (%s) | %.2f |",
                            target,
                            mib == 0 ? "200 keys" : mib + " MiB db",
                            ScaleBenchmark.median(alone),
                            join(alone),
                            ScaleBenchmark.median(alone) / (double) ScaleBenchmark.median(theirs)));
                    for (int l = 0; l < launchers.size(); l++) {
                        List<Parts> p = parts.get(l);
                        breakdown.add(String.format(
                                "| 3.4.23 -> %s | %s | %s | %d | %d | %d | %d | %.2f |",
                                target,
                                mib == 0 ? "200 keys" : mib + " MiB db",
                                launchers.get(l),
                                ScaleBenchmark.median(
                                        p.stream().map(Parts::beforeFirstEtcd).toList()),
                                ScaleBenchmark.median(
                                        p.stream().map(Parts::stepEtcds).toList()),
                                ScaleBenchmark.median(
                                        p.stream().map(Parts::otherBeforeExec).toList()),
                                ScaleBenchmark.median(
                                        p.stream().map(Parts::target).toList()),
                                ScaleBenchmark.median(p.stream()
                                                .map(x -> x.stepEtcds() + x.target())
                                                .toList())
                                        / (double) ScaleBenchmark.median(theirs)));
                    }
                    long t = ScaleBenchmark.median(theirs);
                    for (int l = 0; l < launchers.size(); l++) {
                        long o = ScaleBenchmark.median(ours.get(l));
                        table.add(String.format(
                                "| 3.4.23 -> %s | %s | %s | %d | %d ms (%s) | %d ms (%s) | %.2f |",
                                target,
                                mib == 0 ? "200 keys" : mib + " MiB db",
                                launchers.get(l),
                                runs,
                                o,
                                join(ours.get(l)),
                                t,
                                join(theirs),
                                o / (double) t));
                    }
                }
            }
        } finally {
            Trees.deleteRecursively(work);
        }
        System.out.println();
        System.out.println(
                "| transition | data | ours (launcher) | runs | ours, median (all) | Kubernetes' migrate + etcd, median (all) | ratio |");
        System.out.println("|---|---|---|---|---|---|---|");
        table.forEach(System.out::println);
        System.out.println();
        System.out.println(
                "The target etcd alone on a copy of the same 3.4.23 data, the same flags, in the same rotation"
                        + " (what any tool that leaves the data's opening to the target pays at the least):");
        System.out.println("| transition | data | etcd-T alone, median (all) | ratio to Kubernetes' |");
        System.out.println("|---|---|---|---|");
        floors.forEach(System.out::println);
        System.out.println();
        System.out.println("Ours by its events, medians in ms: spawn to its first etcd; its step etcds, start to stop;"
                + " the rest before exec; exec to the acknowledged write (the target); step etcds + target against"
                + " Kubernetes' whole run:");
        System.out.println(
                "| transition | data | ours (launcher) | before the first etcd | step etcds | rest before exec"
                        + " | target | (step etcds + target) / Kubernetes' |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        breakdown.forEach(System.out::println);
    }

    /**
     * One run of ours split by its JSON events (times from the same clock as the spawn): before its first etcd
     * started (JVM, reads, decision, binary checks), its step etcds from start to stop, the rest before its exec
     * (version.txt, syncs, checks between steps), and the target from the exec to the acknowledged write.
     */
    record Parts(long total, long beforeFirstEtcd, long stepEtcds, long otherBeforeExec, long target) {
        @Override
        public String toString() {
            return total + " (" + beforeFirstEtcd + " + " + stepEtcds + " + " + otherBeforeExec + " + " + target + ")";
        }
    }

    private static final java.util.regex.Pattern EVENT = java.util.regex.Pattern.compile(
            "^\\{\"time\":\"([^\"]+)\".*\"source\":\"etcd-migrate\",\"event\":\"([a-z-]+)\"");

    static Parts parts(List<String> lines, java.time.Instant spawned, long totalMillis) {
        long firstEtcd = -1, exec = -1, started = -1, inEtcds = 0;
        for (String line : lines) {
            java.util.regex.Matcher m = EVENT.matcher(line);
            if (!m.find()) continue;
            long at = Duration.between(spawned, java.time.Instant.parse(m.group(1)))
                    .toMillis();
            switch (m.group(2)) {
                case "etcd-started" -> {
                    if (firstEtcd < 0) firstEtcd = at;
                    started = at;
                }
                case "etcd-stopped" -> {
                    if (started >= 0) inEtcds += at - started;
                    started = -1;
                }
                case "exec" -> exec = at;
                default -> {}
            }
        }
        if (exec < 0) throw new IllegalStateException("ours logged no exec event");
        long before = firstEtcd < 0 ? exec : firstEtcd;
        return new Parts(totalMillis, before, inEtcds, exec - before - inEtcds, totalMillis - exec);
    }

    private static String join(List<Long> values) {
        return String.join(", ", values.stream().map(String::valueOf).toList());
    }

    /** etcd-&lt;v&gt; wrappers that drop --debug (3.5+ reject it) and exec the real binary; etcdctl-&lt;v&gt; links. */
    static Path wrapperBinDir(Path real, Path dir) throws IOException {
        Files.createDirectories(dir);
        for (String v : BUNDLED) {
            Path etcd = dir.resolve("etcd-" + v);
            Files.writeString(
                    etcd,
                    "#!/bin/sh\n# Kubernetes' migrate passes --debug, which etcd 3.5+ rejects: drop it, exec the real etcd\n"
                            + "for a do shift; [ \"$a\" = --debug ] || set -- \"$@\" \"$a\"; done\n"
                            + "exec " + real.resolve("etcd-" + v).toRealPath() + " \"$@\"\n");
            Files.setPosixFilePermissions(etcd, PosixFilePermissions.fromString("rwx------"));
            Files.createSymbolicLink(
                    dir.resolve("etcdctl-" + v), real.resolve("etcdctl-" + v).toRealPath());
        }
        return dir;
    }

    private static Path smallSeed(Catalog catalog, Path binDir, Path cache) throws Exception {
        Path dir = cache.resolve("3.4.23-small");
        Path data = dir.resolve("data");
        if (Files.isRegularFile(dir.resolve("done"))) return data;
        Trees.deleteRecursively(dir);
        Files.createDirectories(dir);
        RunnerBenchmark.seed(
                catalog.release(dev.etcdmigrate.version.EtcdVersion.parse("3.4.23"))
                        .orElseThrow(),
                data,
                binDir);
        Files.writeString(dir.resolve("done"), "200 keys\n");
        return data;
    }

    private static List<String> etcdFlags(Path data, ServerPorts real) {
        String client = "http://127.0.0.1:" + real.client();
        String peer = "http://127.0.0.1:" + real.peer();
        return SingleMember.flags("bench", data, client, peer);
    }

    private static Parts ours(Path launcher, Path binDir, Path seed, Path work, String target) throws Exception {
        Path data = ScaleBenchmark.copy(seed, work, "ours");
        ServerPorts real = FreePorts.pick();
        ServerPorts priv = FreePorts.pick();
        List<String> command = new ArrayList<>(List.of(launcher.toString()));
        command.addAll(RunnerArgs.flags(data, binDir, target, "bench"));
        command.addAll(RunnerArgs.ports(priv));
        command.addAll(List.of("--log-format=json", "--"));
        command.addAll(etcdFlags(data, real));
        java.time.Instant spawned = java.time.Instant.now();
        long start = System.nanoTime();
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(work.resolve("ours.log").toFile())
                .start();
        try {
            awaitWrite(real, target, p, start, work.resolve("ours.log"));
            long total = (System.nanoTime() - start) / 1_000_000;
            return parts(Files.readAllLines(work.resolve("ours.log")), spawned, total);
        } finally {
            stop(p);
            Trees.deleteRecursively(data.getParent());
        }
    }

    private static long theirs(Path k8s, Path wrapped, Path binDir, Path seed, Path work, String target)
            throws Exception {
        Path data = ScaleBenchmark.copy(seed, work, "theirs");
        ServerPorts real = FreePorts.pick();
        ServerPorts priv = FreePorts.pick();
        List<String> command = List.of(
                k8s.toString(),
                "--data-dir",
                data.toString(),
                "--bin-dir",
                wrapped.toString(),
                "--target-version",
                target,
                "--target-storage",
                "etcd3",
                "--bundled-versions",
                String.join(",", BUNDLED),
                "--name",
                "bench",
                "--port",
                String.valueOf(priv.client()),
                "--peer-port",
                String.valueOf(priv.peer()),
                "--initial-cluster",
                "bench=http://localhost:" + priv.peer(),
                "--listen-peer-urls",
                "http://localhost:" + priv.peer(),
                "--initial-advertise-peer-urls",
                "http://localhost:" + priv.peer());
        Path log = work.resolve("theirs.log");
        long start = System.nanoTime();
        Process tool = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        if (!tool.waitFor(10, TimeUnit.MINUTES) || tool.exitValue() != 0) {
            stop(tool);
            throw new IllegalStateException("Kubernetes' migrate failed (exit "
                    + (tool.isAlive() ? "none" : tool.exitValue()) + "): " + tail(log));
        }
        return etcdUntilWrite(binDir, target, data, real, log, start);
    }

    /** The target etcd alone, started with the same flags on a fresh copy of the same data, until a write. */
    private static long alone(Path binDir, Path seed, Path work, String target) throws Exception {
        Path data = ScaleBenchmark.copy(seed, work, "alone");
        Path log = work.resolve("alone.log");
        Files.deleteIfExists(log); // this run's lines only
        return etcdUntilWrite(binDir, target, data, FreePorts.pick(), log, System.nanoTime());
    }

    /**
     * etcd-{@code target} on {@code data} with the benchmark's flags, its output appended to {@code log}, until a write
     * on its real port; milliseconds since {@code start}. The etcd is stopped and the copy removed either way.
     */
    private static long etcdUntilWrite(Path binDir, String target, Path data, ServerPorts real, Path log, long start)
            throws Exception {
        List<String> etcd =
                new ArrayList<>(List.of(binDir.resolve("etcd-" + target).toString()));
        etcd.addAll(etcdFlags(data, real));
        Process p = new ProcessBuilder(etcd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .start();
        try {
            awaitWrite(real, target, p, start, log);
            return (System.nanoTime() - start) / 1_000_000;
        } finally {
            stop(p);
            Trees.deleteRecursively(data.getParent());
        }
    }

    /** Polls a v3 put on the real client port every 5 ms until it is acknowledged. */
    /**
     * Made once, before any run: a client made while a contender starts would take the two cores from it (the JDK's
     * HTTP client costs tens of milliseconds of CPU on its first use).
     */
    private static final HttpClient HTTP = GatewayClient.newHttpClient();

    /**
     * Until a put is acknowledged on the real port. While nothing listens there, each 5 ms poll is one refused
     * loopback connect (microseconds of CPU), so the poller takes next to nothing from the contender's start;
     * the HTTP put is tried only once the port accepts.
     */
    private static void awaitWrite(ServerPorts real, String target, Process p, long start, Path log) throws Exception {
        GatewayClient gateway = new GatewayClient(HTTP, real.clientUrl(), "/v3");
        java.net.InetSocketAddress address = new java.net.InetSocketAddress("127.0.0.1", real.client());
        try {
            Poll.untilTrue(Duration.ofMinutes(5), Duration.ofMillis(5), "a write acknowledged", () -> {
                if (!p.isAlive()) throw new AssertionError("exited with " + p.exitValue() + " before a write");
                try (java.net.Socket socket = new java.net.Socket()) {
                    socket.connect(address, 1000);
                } catch (IOException notListening) {
                    return false;
                }
                gateway.put("/bench-probe", "ok"); // an IOException: not serving yet
                return true;
            });
        } catch (AssertionError e) {
            throw new IllegalStateException(e.getMessage() + ": " + tail(log), e);
        }
    }

    private static void stop(Process p) throws InterruptedException {
        p.destroy();
        if (!p.waitFor(60, TimeUnit.SECONDS)) p.destroyForcibly().waitFor();
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 8), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
