package dev.etcdmigrate.bench;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Cost at scale (docs/benchmarks.md): the runner's 3.4 -> 3.7 migration against the floor, the sum of each etcd's
 * own start-to-first-write on the same data, measured in the same run.
 *
 * <pre>
 * usage: ScaleBenchmark LAUNCHER[#JAVA_OPTS][,LAUNCHER2[#JAVA_OPTS]...] BIN_DIR [SIZES_MIB=100,1024,4096] [RUNS=3]
 * </pre>
 *
 * <p>Several launchers (another commit's build, or the same one with ETCD_MIGRATE_JAVA_OPTS after '#') are
 * measured side by side, each on its own copy, in the same run.
 *
 * <p>Per size: a data dir written by etcd 3.4.23 (32 KiB values, --quota-backend-bytes 8 GiB,
 * --snapshot-count 5000) until its db reaches the size, cached under
 * $HOME/.cache/etcd-migrate/bench-data. Per run, alternating: (a) the runner (--no-exec, target 3.7.3,
 * ETCD_QUOTA_BACKEND_BYTES 8 GiB) on a fresh copy: wall time from spawn to exit, its JVM's peak RSS
 * (VmHWM), the peak bytes of the copy's parent dir over the copy's size; (b) the floor on another fresh
 * copy: etcd 3.5.35, 3.6.16 and 3.7.3 started one after the other with the runner's private flags
 * (PrivateEtcd), each with --snapshot-count=1 as the runner's plan starts them (3.5 leaves a snapshot for
 * 3.6 to judge its v2 content on, 3.6 one for 3.7, 3.7 one for the exec'd target), each until a write is
 * acknowledged; the floor is the sum of those three times. The runner starts no 3.4 etcd.
 * Where the runner's time goes is printed from its own log timestamps.
 */
public final class ScaleBenchmark {

    private static final long GIB = 1L << 30;
    private static final long QUOTA = 8 * GIB;
    private static final int VALUE = 32 * 1024;
    private static final List<String> HOPS = List.of("3.5.35", "3.6.16", "3.7.3");
    private static final Pattern STAMP =
            Pattern.compile("^(\\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z) (INFO |WARN |ERROR|     ) \\[([^\\]]+)\\] (.*)$");

    public static void main(String[] args) throws Exception {
        // BENCH_VARIANTS (env): more launchers, comma-separated, each LAUNCHER[#ETCD_MIGRATE_JAVA_OPTS]
        String more = System.getenv().getOrDefault("BENCH_VARIANTS", "");
        List<String> variants = List.of((args[0] + (more.isBlank() ? "" : "," + more)).split(","));
        Path binDir = Path.of(args[1]);
        List<Long> sizes = args.length > 2
                ? java.util.Arrays.stream(args[2].split(","))
                        .map(Long::parseLong)
                        .toList()
                : List.of(100L, 1024L, 4096L);
        int runs = args.length > 3 ? Integer.parseInt(args[3]) : 3;
        Catalog catalog = Catalog.bundled();
        Path cache = Path.of(System.getProperty("user.home"), ".cache", "etcd-migrate", "bench-data");
        Files.createDirectories(cache);
        Path work =
                Files.createTempDirectory(Path.of(System.getProperty("bench.work", "/var/tmp")), "etcd-migrate-scale");
        Path logs = Files.createDirectories(Path.of(System.getProperty(
                "bench.logs",
                work.getParent().resolve("etcd-migrate-scale-logs").toString())));
        System.out.println(
                "logs of the runner: " + logs + "; " + Runtime.getRuntime().availableProcessors() + " cores; load "
                        + Files.readString(Path.of("/proc/loadavg")).trim());
        List<String> summary = new ArrayList<>();
        try {
            for (long mib : sizes) {
                Path seed = seed(catalog, binDir, cache, mib);
                long seedBytes = new DiskPeakProbe(seed).bytes();
                long db = Files.size(seed.resolve("member/snap/db"));
                requireFree(work, 4 * seedBytes, "runs at " + mib + " MiB");
                int n = variants.size();
                List<List<Long>> runner = new ArrayList<>();
                List<List<Long>> rss = new ArrayList<>();
                List<List<Long>> extra = new ArrayList<>();
                for (int v = 0; v < n; v++) {
                    runner.add(new ArrayList<>());
                    rss.add(new ArrayList<>());
                    extra.add(new ArrayList<>());
                }
                List<Long> floor = new ArrayList<>();
                for (int i = 0; i < runs; i++) {
                    boolean floorFirst = i % 2 == 1; // alternate the order: a slow spell of the machine hits both
                    long[] f = null;
                    if (floorFirst) f = floor(catalog, binDir, seed, work);
                    long[][] r = new long[n][];
                    for (int k = 0; k < n; k++) {
                        int v = (i + k) % n; // and the variants' order
                        Path log = logs.resolve(mib + "mib-run" + i + "-v" + v + ".log");
                        r[v] = runner(variants.get(v), binDir, seed, work, log);
                    }
                    if (!floorFirst) f = floor(catalog, binDir, seed, work);
                    floor.add(f[0]);
                    for (int v = 0; v < n; v++) {
                        runner.get(v).add(r[v][0]);
                        rss.get(v).add(r[v][1]);
                        extra.get(v).add(r[v][2] - seedBytes);
                        System.out.printf(
                                "%5d MiB run %d%s: runner %6d ms, floor %6d ms (3.5 %d, 3.6 %d, 3.7 %d), ratio %.2f, runner peak"
                                        + " RSS %d MiB, peak extra disk %s (%.0f%% of the %s dir)%n",
                                mib,
                                i + 1,
                                n > 1 ? " [" + variants.get(v) + "]" : "",
                                r[v][0],
                                f[0],
                                f[1],
                                f[2],
                                f[3],
                                r[v][0] / (double) f[0],
                                r[v][1] >> 20,
                                DiskPeak.mib(r[v][2] - seedBytes),
                                100.0 * (r[v][2] - seedBytes) / seedBytes,
                                DiskPeak.mib(seedBytes));
                        printPhases(logs.resolve(mib + "mib-run" + i + "-v" + v + ".log"), r[v][3], r[v][3] + r[v][0]);
                    }
                }
                long fm = median(floor);
                for (int v = 0; v < n; v++) {
                    long rm = median(runner.get(v));
                    summary.add(String.format(
                            "| %d MiB (db %s, dir %s) |%s %d | %d ms | %d ms | %.2f | %s | %d MiB | %s (%.0f%%) |",
                            mib,
                            DiskPeak.mib(db),
                            DiskPeak.mib(seedBytes),
                            n > 1 ? " " + variants.get(v) + " |" : "",
                            runs,
                            rm,
                            fm,
                            rm / (double) fm,
                            ratios(runner.get(v), floor),
                            median(rss.get(v)) >> 20,
                            DiskPeak.mib(Collections.max(extra.get(v))),
                            100.0 * Collections.max(extra.get(v)) / seedBytes));
                }
            }
        } finally {
            Trees.deleteRecursively(work);
        }
        System.out.println();
        System.out.println("| size |" + (variants.size() > 1 ? " runner |" : "")
                + " runs | runner, median | floor, median | ratio of medians | ratio per run | runner peak RSS, median |"
                + " peak extra disk, max |");
        System.out.println("|---|---|---|---|---|---|---|---|" + (variants.size() > 1 ? "---|" : ""));
        summary.forEach(System.out::println);
    }

    private static String ratios(List<Long> runner, List<Long> floor) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < runner.size(); i++) out.add(String.format("%.2f", runner.get(i) / (double) floor.get(i)));
        return String.join(", ", out);
    }

    static long median(List<Long> values) {
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get(sorted.size() / 2);
    }

    static void requireFree(Path dir, long bytes, String what) throws Exception {
        long free = Files.getFileStore(dir).getUsableSpace();
        if (free < bytes + 2 * GIB) {
            throw new IllegalStateException(what + " need about " + DiskPeak.mib(bytes) + " plus a 2 GiB margin on "
                    + dir + ", " + DiskPeak.mib(free) + " are free");
        }
    }

    /** The cached 3.4.23 data dir of about {@code mib} MiB of db, written once. */
    static Path seed(Catalog catalog, Path binDir, Path cache, long mib) throws Exception {
        Path dir = cache.resolve("3.4.23-" + mib + "mib");
        Path data = dir.resolve("data");
        if (Files.isRegularFile(dir.resolve("done"))) return data;
        Trees.deleteRecursively(dir);
        Files.createDirectories(dir);
        requireFree(dir, 3 * mib * (1L << 20), "writing the " + mib + " MiB data dir");
        Permissions.ownerOnlyDir(data);
        Release v34 = catalog.release(EtcdVersion.parse("3.4.23")).orElseThrow();
        Children children = new Children(Duration.ofSeconds(10));
        Log quiet = Log.text(new PrintStream(OutputStream.nullOutputStream()));
        PrivateEtcd.Settings settings = new PrivateEtcd.Settings(
                new BinDir(binDir),
                "bench",
                FreePorts.pick(),
                List.of("--quota-backend-bytes=" + QUOTA, "--snapshot-count=5000"),
                Duration.ofMinutes(5),
                Duration.ofSeconds(60),
                System.getenv(),
                GatewayClient.newHttpClient());
        long target = mib << 20;
        long t0 = System.nanoTime();
        AtomicLong written = new AtomicLong();
        try (PrivateEtcd etcd = PrivateEtcd.start(v34, data, settings, List.of(), quiet, children)) {
            etcd.awaitWrite(settings.startTimeout());
            Path db = data.resolve("member/snap/db");
            Random random = new Random(11);
            char[] chars = new char[VALUE];
            for (int i = 0; i < VALUE; i++) chars[i] = (char) ('a' + random.nextInt(26));
            String base = new String(chars);
            ExecutorService pool = Executors.newFixedThreadPool(16);
            try {
                int batch = 0;
                while (Files.size(db) < target) {
                    List<Future<?>> inFlight = new ArrayList<>();
                    for (int j = 0; j < 512; j++) {
                        long n = written.getAndIncrement();
                        inFlight.add(pool.submit(() -> {
                            String key = String.format("/registry/bench/obj-%09d", n);
                            etcd.gateway().put(key, n + base.substring(20));
                            return null;
                        }));
                    }
                    for (Future<?> f : inFlight) f.get();
                    if (++batch % 20 == 0) {
                        System.out.printf(
                                "  seeding %d MiB: %d keys, db %s, %d s%n",
                                mib,
                                written.get(),
                                DiskPeak.mib(Files.size(db)),
                                (System.nanoTime() - t0) / 1_000_000_000);
                    }
                }
            } finally {
                pool.shutdownNow();
            }
            etcd.stop(settings.stopGrace());
        }
        new DataDir(data).writeVersion(new DataVersion(v34.etcdVersion(), StorageApi.ETCD3));
        Files.writeString(
                dir.resolve("done"),
                written.get() + " keys of " + VALUE + " bytes, db " + Files.size(data.resolve("member/snap/db"))
                        + " bytes, written in " + (System.nanoTime() - t0) / 1_000_000 + " ms\n");
        System.out.println(
                "seeded " + dir + ": " + Files.readString(dir.resolve("done")).trim());
        return data;
    }

    static Path copy(Path seed, Path work, String name) throws Exception {
        Path parent = Files.createDirectories(work.resolve(name));
        Path data = parent.resolve("data");
        Process p = new ProcessBuilder("cp", "-a", "--reflink=auto", seed.toString(), data.toString())
                .inheritIO()
                .start();
        if (p.waitFor() != 0) throw new IllegalStateException("cp failed");
        Process sync =
                new ProcessBuilder("sync", "-f", data.toString()).inheritIO().start();
        sync.waitFor();
        return data;
    }

    /** {wall ms, peak RSS bytes, peak bytes of the copy's parent, spawn epoch ms}. */
    private static long[] runner(String variant, Path binDir, Path seed, Path work, Path logFile) throws Exception {
        Path launcher = Path.of(variant.split("#", 2)[0]);
        Path data = copy(seed, work, "runner");
        try {
            ServerPorts ports = FreePorts.pick();
            List<String> command = new ArrayList<>(List.of(launcher.toString()));
            command.addAll(RunnerArgs.flags(data, binDir, "3.7.3", "bench"));
            command.addAll(RunnerArgs.ports(ports));
            command.add("--no-exec");
            ProcessBuilder builder =
                    new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(logFile.toFile());
            builder.environment().put("ETCD_QUOTA_BACKEND_BYTES", String.valueOf(QUOTA));
            if (variant.contains("#")) builder.environment().put("ETCD_MIGRATE_JAVA_OPTS", variant.split("#", 2)[1]);
            try (DiskPeak disk = DiskPeak.watch(data.getParent())) {
                long epoch = System.currentTimeMillis();
                long spawned = System.nanoTime();
                Process p = builder.start();
                long hwm = 0;
                Path status = Path.of("/proc/" + p.pid() + "/status");
                while (p.isAlive()) {
                    hwm = Math.max(hwm, vmHwm(status));
                    p.waitFor(20, java.util.concurrent.TimeUnit.MILLISECONDS); // a sampling period, bounded by the exit
                }
                long wall = (System.nanoTime() - spawned) / 1_000_000;
                if (p.exitValue() != 0) {
                    throw new IllegalStateException(
                            "the runner exited with " + p.exitValue() + "; its log: " + logFile);
                }
                return new long[] {wall, hwm, disk.peak(), epoch};
            }
        } finally {
            Trees.deleteRecursively(data.getParent());
        }
    }

    private static long vmHwm(Path status) {
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("VmHWM:")) return Long.parseLong(line.replaceAll("\\D", "")) * 1024;
            }
        } catch (Exception gone) {
            // exited between the check and the read
        }
        return 0;
    }

    /** {sum ms, 3.5 ms, 3.6 ms, 3.7 ms}: each etcd of the runner's hops, started as the runner starts it, to its first write. */
    private static long[] floor(Catalog catalog, Path binDir, Path seed, Path work) throws Exception {
        Path data = copy(seed, work, "floor");
        try {
            Children children = new Children(Duration.ofSeconds(10));
            Log quiet = Log.text(new PrintStream(OutputStream.nullOutputStream()));
            PrivateEtcd.Settings settings = new PrivateEtcd.Settings(
                    new BinDir(binDir),
                    "bench",
                    FreePorts.pick(),
                    List.of("--quota-backend-bytes=" + QUOTA),
                    Duration.ofMinutes(5),
                    Duration.ofSeconds(60),
                    System.getenv(),
                    GatewayClient.newHttpClient());
            long[] out = new long[1 + HOPS.size()];
            for (int i = 0; i < HOPS.size(); i++) {
                Release release =
                        catalog.release(EtcdVersion.parse(HOPS.get(i))).orElseThrow();
                List<String> lineFlags = List.of("--snapshot-count=1");
                long start = System.nanoTime();
                try (PrivateEtcd etcd = PrivateEtcd.start(release, data, settings, lineFlags, quiet, children)) {
                    etcd.awaitWrite(settings.startTimeout());
                    out[i + 1] = (System.nanoTime() - start) / 1_000_000;
                    etcd.stop(settings.stopGrace());
                }
                out[0] += out[i + 1];
            }
            return out;
        } finally {
            Trees.deleteRecursively(data.getParent());
        }
    }

    /**
     * Where the runner's wall time went, from its log's timestamps: launch to its first line, first line to
     * the plan, plan to step 1, per step (its etcd's start-to-write as logged, the rest), the last step to exit.
     */
    static void printPhases(Path logFile, long spawnEpochMs, long exitEpochMs) throws Exception {
        List<String[]> lines = new ArrayList<>();
        for (String line : Files.readAllLines(logFile)) {
            Matcher m = STAMP.matcher(line);
            if (m.matches() && m.group(3).equals("etcd-migrate")) {
                lines.add(new String[] {String.valueOf(Instant.parse(m.group(1)).toEpochMilli()), m.group(4)});
            } else if (m.matches() && m.group(3).startsWith("etcdutl")) {
                lines.add(new String[] {
                    String.valueOf(Instant.parse(m.group(1)).toEpochMilli()), "(" + m.group(3) + " output)"
                });
            }
        }
        if (lines.isEmpty()) return;
        Map<String, Long> phases = new java.util.LinkedHashMap<>();
        long prev = spawnEpochMs;
        String prevWhat = "spawn";
        for (String[] l : lines) {
            long t = Long.parseLong(l[0]);
            String what = l[1];
            String key = prevWhat + " -> " + shorten(what);
            phases.merge(key, t - prev, Long::sum);
            prev = t;
            prevWhat = shorten(what);
        }
        phases.put(prevWhat + " -> exit", exitEpochMs - prev);
        StringBuilder sb = new StringBuilder("    phases (ms, from the runner's log):");
        for (Map.Entry<String, Long> e : phases.entrySet()) {
            if (e.getValue() >= 15) sb.append("\n      ").append(String.format("%6d  %s", e.getValue(), e.getKey()));
        }
        System.out.println(sb);
    }

    private static String shorten(String what) {
        String s = what.replaceAll("/tmp\\S*|/var\\S*|http://\\S*", "…");
        s = s.length() > 70 ? s.substring(0, 70) : s;
        return s;
    }

    /** The bytes of a tree once. */
    private record DiskPeakProbe(Path root) {
        long bytes() throws Exception {
            try (DiskPeak d = DiskPeak.watch(root)) {
                return d.sample();
            }
        }
    }
}
