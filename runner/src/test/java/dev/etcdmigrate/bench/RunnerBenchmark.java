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
import dev.etcdmigrate.version.StorageApi;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Start-up and per-step figures of the runner's real command line (not a test: it prints numbers).
 *
 * <pre>
 * usage: RunnerBenchmark LAUNCHER BIN_DIR [RUNS]
 * </pre>
 *
 * <ul>
 *   <li>no-op start to execve: data already at the newest version; from spawning the launcher until
 *       its process runs the etcd binary;
 *   <li>launch to step 1: from spawning the launcher to the timestamp of its "step 1/1:" line (the
 *       millisecond clock of this JVM and of the runner's log are the same wall clock);
 *   <li>one plain minor step on a small data dir (3.4 -> 3.5: no v2 check, no extra snapshot start):
 *       the step's own time, etcd's start-to-first-write inside it, and the difference (the runner's
 *       overhead).
 * </ul>
 */
public final class RunnerBenchmark {

    private static final Pattern STEP_DONE = Pattern.compile("step 1/1 done in (\\d+) ms");
    private static final Pattern STEP_ONE = Pattern.compile("^(\\S+Z) INFO  \\[etcd-migrate\\] step 1/1: ");
    private static final Pattern FIRST_WRITE = Pattern.compile("accepted a write after (\\d+) ms");

    public static void main(String[] args) throws Exception {
        Path launcher = Path.of(args[0]);
        Path binDir = Path.of(args[1]);
        int runs = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        Catalog catalog = Catalog.bundled();
        Release newest = catalog.releases().getLast();
        Release from = catalog.release(dev.etcdmigrate.version.EtcdVersion.parse("3.4.23"))
                .orElseThrow();
        Release to = catalog.release(dev.etcdmigrate.version.EtcdVersion.parse("3.5.35"))
                .orElseThrow();
        Path work = Files.createTempDirectory("etcd-migrate-bench");
        try {
            Path template = work.resolve("template");
            seed(from, template, binDir);

            // BENCH_VARIANTS (env): more launchers (another commit's build), measured alternating with this one
            String more = System.getenv().getOrDefault("BENCH_VARIANTS", "");
            List<Path> launchers = new ArrayList<>(List.of(launcher));
            for (String v : more.split(",")) if (!v.isBlank()) launchers.add(Path.of(v));
            int n = launchers.size();
            Path noopData = work.resolve("noop");
            seed(newest, noopData, binDir); // written by the newest etcd: a real no-op restart
            // a pod's restart: the same flags every time (the first start also asks the target etcd to parse them)
            ServerPorts noopPorts = FreePorts.pick();
            List<List<Long>> noop = lists(n),
                    step = lists(n),
                    firstWrite = lists(n),
                    overhead = lists(n),
                    toStep1 = lists(n);
            for (int v = 0; v < n; v++) {
                long first = noopToExec(
                        launchers.get(v), binDir, noopData, newest, noopPorts); // warms the page cache, the AOT cache
                System.out.println("no-op first start of " + launchers.get(v)
                        + " (etcd asked to parse its flags, answer remembered): " + first + " ms");
            }
            for (int i = 0; i < runs; i++) {
                for (int k = 0; k < n; k++) {
                    int v = (i + k) % n;
                    noop.get(v).add(noopToExec(launchers.get(v), binDir, noopData, newest, noopPorts));
                    Path data = work.resolve("step-" + i + "-" + v);
                    copy(template, data);
                    long[] r = minorStep(launchers.get(v), binDir, data, to);
                    step.get(v).add(r[0]);
                    firstWrite.get(v).add(r[1]);
                    overhead.get(v).add(r[0] - r[1]);
                    toStep1.get(v).add(r[2]);
                    Trees.deleteRecursively(data);
                }
            }
            System.out.println("runs: " + runs + " (no-op at " + newest.version() + "; step " + from.version() + " -> "
                    + to.version() + ", " + Runtime.getRuntime().availableProcessors() + " cores; load "
                    + Files.readString(Path.of("/proc/loadavg")).trim() + ")");
            for (int v = 0; v < n; v++) {
                if (n > 1) System.out.println(launchers.get(v) + ":");
                print("no-op start to execve", noop.get(v), 100);
                print("launch to step 1 (3.4 -> 3.5, --no-exec)", toStep1.get(v), 150);
                print("minor step, whole", step.get(v), 300);
                print("  etcd start to first write", firstWrite.get(v), -1);
                print("  runner overhead (step - first write)", overhead.get(v), 50);
            }
        } finally {
            Trees.deleteRecursively(work);
        }
    }

    private static List<List<Long>> lists(int n) {
        List<List<Long>> out = new ArrayList<>();
        for (int i = 0; i < n; i++) out.add(new ArrayList<>());
        return out;
    }

    private static void print(String what, List<Long> ms, long goal) {
        List<Long> sorted = new ArrayList<>(ms);
        Collections.sort(sorted);
        System.out.printf(
                "%-40s median %4d ms   min %4d   max %4d%s%n",
                what,
                sorted.get(sorted.size() / 2),
                sorted.getFirst(),
                sorted.getLast(),
                goal > 0 ? "   (goal <= " + goal + " ms)" : "");
    }

    static void seed(Release release, Path data, Path binDir) throws Exception {
        Permissions.ownerOnlyDir(data);
        Children children = new Children(Duration.ofSeconds(10));
        Log quiet = Log.text(new PrintStream(OutputStream.nullOutputStream()));
        PrivateEtcd.Settings settings = new PrivateEtcd.Settings(
                new BinDir(binDir),
                "bench",
                FreePorts.pick(),
                List.of(),
                Duration.ofMinutes(1),
                Duration.ofSeconds(20),
                System.getenv(),
                GatewayClient.newHttpClient());
        try (PrivateEtcd etcd = PrivateEtcd.start(release, data, settings, List.of(), quiet, children)) {
            etcd.awaitWrite(settings.startTimeout());
            for (int i = 0; i < 200; i++) {
                etcd.gateway().put("/registry/pods/default/pod-" + i, "{\"kind\":\"Pod\"}");
            }
            etcd.stop(settings.stopGrace());
        }
        new DataDir(data).writeVersion(new DataVersion(release.etcdVersion(), StorageApi.ETCD3));
    }

    /** From spawning the launcher until its PID runs the etcd binary (polling /proc/PID/exe every 0.2 ms). */
    private static long noopToExec(Path launcher, Path binDir, Path data, Release newest, ServerPorts ports)
            throws Exception {
        String client = "http://127.0.0.1:" + ports.client();
        Path etcd = binDir.resolve("etcd-" + newest.version()).toRealPath();
        List<String> command = new ArrayList<>(List.of(launcher.toString()));
        command.addAll(RunnerArgs.flags(data, binDir, newest.version(), "bench"));
        command.addAll(List.of(
                "--",
                "--name",
                "bench",
                "--listen-client-urls",
                client,
                "--advertise-client-urls",
                client,
                "--listen-peer-urls",
                "http://127.0.0.1:" + ports.peer()));
        long spawned = System.nanoTime();
        Process p = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        Path exe = Path.of("/proc/" + p.pid() + "/exe");
        try {
            long deadline = spawned + Duration.ofSeconds(30).toNanos();
            while (System.nanoTime() < deadline) {
                try {
                    if (Files.readSymbolicLink(exe).equals(etcd)) {
                        return (System.nanoTime() - spawned) / 1_000_000;
                    }
                } catch (java.io.IOException gone) {
                    // not started yet, or already exited
                }
                if (!p.isAlive()) break;
                Thread.onSpinWait();
                java.util.concurrent.locks.LockSupport.parkNanos(200_000); // poll interval of a deadline-bound wait
            }
        } finally {
            p.toHandle().destroy();
            if (!p.waitFor(20, TimeUnit.SECONDS)) p.destroyForcibly().waitFor();
        }
        throw new IllegalStateException("the runner never exec'd etcd (exit " + p.exitValue() + ")");
    }

    private static long[] minorStep(Path launcher, Path binDir, Path data, Release target) throws Exception {
        ServerPorts ports = FreePorts.pick();
        List<String> command = new ArrayList<>(List.of(launcher.toString()));
        command.addAll(RunnerArgs.flags(data, binDir, target.version(), "bench"));
        command.addAll(RunnerArgs.ports(ports));
        command.add("--no-exec");
        long spawned = System.currentTimeMillis();
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        long step = -1;
        long write = -1;
        long step1 = -1;
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line; (line = out.readLine()) != null; ) {
                Matcher s = STEP_DONE.matcher(line);
                if (s.find()) step = Long.parseLong(s.group(1));
                Matcher w = FIRST_WRITE.matcher(line);
                if (w.find()) write = Long.parseLong(w.group(1));
                Matcher one = STEP_ONE.matcher(line);
                if (one.find()) step1 = java.time.Instant.parse(one.group(1)).toEpochMilli() - spawned;
            }
        }
        if (p.waitFor() != 0 || step < 0 || write < 0) {
            throw new IllegalStateException("the minor step did not complete (exit " + p.exitValue() + ")");
        }
        return new long[] {step, write, step1};
    }

    private static void copy(Path from, Path to) throws Exception {
        Process p = new ProcessBuilder("cp", "-a", from.toString(), to.toString())
                .inheritIO()
                .start();
        if (p.waitFor() != 0) throw new IllegalStateException("cp failed");
    }
}
