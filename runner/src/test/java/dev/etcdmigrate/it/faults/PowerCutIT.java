package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.ondisk.BackendStorageVersion;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Power cuts during each step type. One run of the runner on the power-cut file system records every
 * operation (the runner's and etcd's); then, for each chosen cut point and policy, the state a power cut
 * there may leave is built in place of the mount and the runner is run again on it. It must exit 0 at the
 * target with every key intact (value, create/mod revision, lease), leave nothing behind, and the cut
 * state itself must not have version.txt ahead of the data.
 *
 * <p>Cut points: the end of the run and the runner's commit points ({@link #commitPoints}; with
 * {@code powercut.allRunnerPoints}, as the powercut-long profile sets, every fsync/fdatasync/directory
 * fsync of the runner), then {@code powercut.extra} more: etcd's durability points, seeded random lines,
 * the runner's points again; policies: everything not durable lost, or a seeded choice of what survives
 * ({@link PowerCut}). System properties: {@code powercut.extra} (default 2; the powercut-long profile sets 300),
 * {@code powercut.seed} (printed; replays the same choice), {@code fault.scenarios} (as FaultInjectionIT).
 */
class PowerCutIT {

    private static final Duration RUN_DEADLINE = Duration.ofMinutes(4);

    /** Every runner sync a cut point (the long profile), or only its commit points (the default: CI time). */
    static final boolean ALL_RUNNER_POINTS = Boolean.getBoolean("powercut.allRunnerPoints");

    private final EtcdFixture etcd = new EtcdFixture();

    @AfterEach
    void stopAll() {
        etcd.close();
    }

    record Trial(int cut, PowerCut.Policy policy, String label) {}

    @ParameterizedTest(name = "{0}")
    @EnumSource(FaultScenario.class)
    void everyCrashStateOfAStepConverges(FaultScenario scenario, @TempDir Path dir) throws Exception {
        explore(scenario, dir, "", data -> {}, data -> {});
    }

    /**
     * Power cuts during a restore from a snapshot (a lone member; restored into 3.5, and into 3.6 so that the walk
     * follows): every crash state holds the old data or the restore, never a mix, and the rerun converges to the
     * restored member with the old data kept whole ({@link RestoreScenario}).
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(RestoreScenario.class)
    void everyCrashStateOfARestoreConverges(RestoreScenario scenario, @TempDir Path dir) throws Exception {
        explore(scenario, dir, "", data -> {}, data -> {});
    }

    /**
     * Retention under power cuts: the data dir already holds as many backups as are kept (3), so the
     * step's new backup makes retention delete the oldest. In every crash state at least 3 complete
     * backups exist (a backup is never deleted before the one replacing it is durable), and after the
     * rerun exactly 3. For the two ways a backup is made: a copy before etcd runs in place (online
     * downgrade) and the member dir swapped out (snapshot downgrade).
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(
            value = FaultScenario.class,
            names = {"ONLINE_DOWNGRADE", "SNAPSHOT_DOWNGRADE"})
    void retentionNeverDropsBelowTheKeptBackups(FaultScenario scenario, @TempDir Path dir) throws Exception {
        // the online downgrade's run is the longest (a full backup copy, two etcds): only in the long profile
        assumeTrue(scenario != FaultScenario.ONLINE_DOWNGRADE || ALL_RUNNER_POINTS, "-Ppowercut-long");
        explore(
                scenario,
                dir,
                "-retention",
                data -> {
                    for (int day = 1; day <= 3; day++) {
                        Path old = dir.resolve("base/data/.etcd-migrate/backups/2020010" + day + "T000000Z-it-old-"
                                + scenario.versions().getFirst().version() + "-etcd3");
                        Files.createDirectories(old);
                        Process cp = new ProcessBuilder(
                                        "cp",
                                        "-a",
                                        dir.resolve("base/data/member").toString(),
                                        old.toString())
                                .inheritIO()
                                .start();
                        assertEquals(0, cp.waitFor());
                        Files.writeString(
                                old.resolve("version.txt"),
                                scenario.versions().getFirst().format());
                    }
                    new ProcessBuilder(
                                    "chmod",
                                    "-R",
                                    "go-rwx",
                                    dir.resolve("base/data/.etcd-migrate").toString())
                            .start()
                            .waitFor();
                },
                data -> {
                    long complete = completeBackups(data);
                    if (complete < 3)
                        throw new AssertionError(complete + " complete backups in the crash state, 3 are kept");
                });
    }

    interface DataCheck {
        void check(Path data) throws Exception;
    }

    private void explore(CutScenario scenario, Path dir, String variant, DataCheck prepareBase, DataCheck cutCheck)
            throws Exception {
        scenario.assumeSelected();
        int extra = Integer.getInteger("powercut.extra", 2);
        long seed = Long.getLong("powercut.seed", System.nanoTime());
        Random random = new Random(seed + scenario.ordinal());
        String name = scenario.name() + variant;

        FaultScenario.Seeded seeded = scenario.seed(etcd, dir.resolve("base/data"));
        prepareBase.check(dir.resolve("base/data"));
        Recording rec = record(scenario, seeded, dir, Optional.empty());
        assertEquals(0, rec.exitCode(), rec.output());
        PowerCut log = rec.log();
        Path kept = Files.createDirectories(Path.of(System.getProperty("basedir", "."), "target/powercut"));
        Files.copy(
                dir.resolve("work/log"),
                kept.resolve(name + ".log"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        List<Trial> trials = choose(log, extra, random);
        System.out.printf(
                "[powercut] %s: recorded %d ops in %d ms (runner %d, etcd %d durability points); %d trials, -Dpowercut.seed=%d%n",
                name, log.ops().size(), rec.millis(), count(log, true), count(log, false), trials.size(), seed);

        List<String> failures = new ArrayList<>();
        Map<String, Integer> explored = new TreeMap<>();
        java.util.Set<java.util.BitSet> seen = new java.util.HashSet<>();
        int same = 0;
        long start = System.nanoTime();
        for (Trial trial : trials) {
            if (!seen.add(log.keeps(trial.cut(), trial.policy()))) {
                same++; // e.g. a cut between two syncs of the same file: a state already tried
                continue;
            }
            if (Instant.now().plusSeconds(120).isAfter(rec.seeded().usableUntil())) {
                System.out.println("[powercut] " + name + ": the seed's shortest TTL runs out; stopping here");
                break;
            }
            String what = name + " cut after line " + trial.cut() + " (" + trial.label() + ", " + trial.policy() + ")";
            String cutState = "";
            try {
                PowerCut.clear(rec.mount());
                log.materialize(trial.cut(), trial.policy(), rec.mount());
                cutState = listing(rec.data());
                scenario.assertConsistentCutState(rec.seeded(), rec.data());
                cutCheck.check(rec.data());
                rerunConverges(scenario, rec.seeded(), rec.data());
                cutCheck.check(rec.data());
                explored.merge(trial.label(), 1, Integer::sum);
                System.out.println("[powercut] " + what + ": ok");
            } catch (AssertionError | Exception e) {
                String failure = what + ", seed " + seed + ": " + e + "\n cut state:" + cutState;
                System.out.println("[powercut] FAILED " + failure);
                failures.add(failure);
            }
        }
        System.out.printf(
                "[powercut] %s summary: %d distinct crash states %s (%d trials gave a state already tried) in %d s;"
                        + " failures %d (-Dpowercut.seed=%d)%n",
                name, seen.size(), explored, same, (System.nanoTime() - start) / 1_000_000_000L, failures.size(), seed);
        assertEquals(List.of(), failures, "crash states that did not converge");
    }

    /** Backups in .etcd-migrate/backups that are complete: a stamped name, version.txt and member/ with its db. */
    static long completeBackups(Path data) throws Exception {
        Path dir = data.resolve(".etcd-migrate/backups");
        if (!Files.isDirectory(dir)) return 0;
        try (var entries = Files.list(dir)) {
            return entries.filter(p -> p.getFileName().toString().matches("\\d{8}T\\d{6}Z-.*")
                            && !p.getFileName().toString().endsWith(".partial"))
                    .filter(p -> Files.isRegularFile(p.resolve("version.txt"))
                            && Files.isRegularFile(p.resolve("member/snap/db")))
                    .count();
        }
    }

    /** A recorded run: where the mount was (now an ordinary empty dir), its data dir, what was seeded, the log. */
    record Recording(
            Path mount,
            Path data,
            FaultScenario.Seeded seeded,
            PowerCutFs fs,
            int exitCode,
            String output,
            String reason,
            long millis) {
        PowerCut log() throws Exception {
            return fs.log();
        }
    }

    /** Seeds the scenario's data, mounts the power-cut file system over it, runs the runner to its end, unmounts. */
    static Recording record(CutScenario scenario, EtcdFixture etcd, Path dir, Optional<String> fault) throws Exception {
        Path base = dir.resolve("base");
        FaultScenario.Seeded seeded = scenario.seed(etcd, base.resolve("data"));
        return record(scenario, seeded, dir, fault);
    }

    static Recording record(CutScenario scenario, FaultScenario.Seeded seeded, Path dir, Optional<String> fault)
            throws Exception {
        Path base = dir.resolve("base");
        Path backing = dir.resolve("backing");
        Files.createDirectories(dir.resolve("mnt"));
        PowerCut.clear(dir.resolve("mnt"));
        dev.etcdmigrate.datadir.Trees.deleteRecursively(backing);
        Process cp = new ProcessBuilder("cp", "-a", base.toString(), backing.toString())
                .inheritIO()
                .start();
        assertEquals(0, cp.waitFor());
        return runMounted(scenario, seeded, dir, fault);
    }

    /** Mounts dir/backing (as it is) on dir/mnt, runs the runner on mnt/data to its end, unmounts. */
    static Recording runMounted(CutScenario scenario, FaultScenario.Seeded seeded, Path dir, Optional<String> fault)
            throws Exception {
        Path mount = dir.resolve("mnt");
        Path data = mount.resolve("data");
        PowerCutFs fs =
                PowerCutFs.mount(dir.resolve("backing"), dir.resolve("base"), mount, dir.resolve("work"), fault);
        int code;
        String output;
        String reason = "";
        long start = System.nanoTime();
        try (fs;
                RunnerProcess runner = RunnerProcess.startInOwnGroup(scenario.args(seeded, data))) {
            code = runner.awaitExit(RUN_DEADLINE);
            output = runner.output();
            if (code != 0) reason = runner.ending().path("reason").asText();
        }
        return new Recording(mount, data, seeded, fs, code, output, reason, (System.nanoTime() - start) / 1_000_000);
    }

    private static long count(PowerCut log, boolean runner) {
        return log.ops().stream()
                .filter(op -> op.sync() && op.byRunner() == runner)
                .count();
    }

    /**
     * The trials: the end of the run (nothing but what was made durable, and a seeded choice) and the
     * runner's commit points (or all its durability points) with nothing non-durable kept (deterministic: the states that found
     * the defects fixed so far, kept as their regression tests); then {@code extra} more, round robin over
     * etcd's durability points, random lines and the runner's points again, each in a seeded order, with
     * alternating policies.
     */
    static List<Trial> choose(PowerCut log, int extra, Random random) {
        int end = log.ops().size();
        List<Trial> trials = new ArrayList<>(List.of(
                new Trial(end, new PowerCut.Policy.DurableOnly(), "end"),
                new Trial(end, new PowerCut.Policy.Seeded(random.nextLong()), "end")));
        List<Integer> runnerPoints = ALL_RUNNER_POINTS
                ? log.ops().stream()
                        .filter(op -> op.sync() && op.byRunner())
                        .map(op -> op.line() + 1)
                        .toList()
                : commitPoints(log);
        runnerPoints.forEach(cut -> trials.add(new Trial(cut, new PowerCut.Policy.DurableOnly(), "runner-sync")));
        List<List<Integer>> categories = new ArrayList<>();
        List<String> labels = List.of("etcd-sync", "random", "runner-sync");
        List<Integer> etcdPoints = new ArrayList<>(log.ops().stream()
                .filter(op -> op.sync() && !op.byRunner())
                .map(op -> op.line() + 1)
                .toList());
        Collections.shuffle(etcdPoints, random);
        categories.add(etcdPoints);
        List<Integer> lines = new ArrayList<>();
        for (int i = 0; i < Math.max(extra, 1); i++) lines.add(1 + random.nextInt(end));
        categories.add(lines);
        List<Integer> again = new ArrayList<>(runnerPoints);
        Collections.shuffle(again, random);
        categories.add(again);
        int[] next = new int[categories.size()];
        int budget = trials.size() + extra;
        int round = 0;
        while (trials.size() < budget) {
            boolean any = false;
            for (int c = 0; c < categories.size() && trials.size() < budget; c++) {
                if (next[c] >= categories.get(c).size()) continue;
                any = true;
                int cut = categories.get(c).get(next[c]++);
                PowerCut.Policy policy = c == 2 || (round + c) % 2 == 1
                        ? new PowerCut.Policy.Seeded(random.nextLong())
                        : new PowerCut.Policy.DurableOnly();
                trials.add(new Trial(cut, policy, labels.get(c)));
            }
            round++;
            if (!any) break;
        }
        return trials;
    }

    /**
     * The runner's commit points: its first directory fsync after each of its renames (AtomicFile's
     * replace, the member swap's two renames, a backup's rename) and after creating etcd-output.log, and
     * the state just before each rename (all that etcd made durable, the commit not yet made: a step's
     * etcd has written its data, version.txt still names the step's start), the points the defects fixed
     * so far were found at. The long profile takes every runner sync instead.
     */
    static List<Integer> commitPoints(PowerCut log) {
        java.util.SortedSet<Integer> points = new java.util.TreeSet<>();
        boolean pending = false;
        for (PowerCut.Op op : log.ops()) {
            if (!op.byRunner()) continue;
            if (op.kind() == PowerCut.Kind.RENAME && op.line() > 0) points.add(op.line());
            if (op.kind() == PowerCut.Kind.RENAME
                    || op.kind() == PowerCut.Kind.CREATE && "etcd-output.log".equals(op.name())) pending = true;
            if (pending && op.kind() == PowerCut.Kind.FSYNCDIR) {
                points.add(op.line() + 1);
                pending = false;
            }
        }
        return List.copyOf(points);
    }

    /**
     * What a power cut leaves must not claim more than the data holds: version.txt names a version of the
     * plan; without a complete staging, member/ is in place (with its db when version.txt says etcd3), and
     * a db that carries etcd's storage version is not behind what version.txt names (3.6+ records it;
     * version.txt at 3.6.16 over a db still at 3.7 would be ahead of the data).
     */
    static void assertConsistentCutState(FaultScenario scenario, Path data) throws Exception {
        Optional<DataVersion> recorded = new DataDir(data).readVersion();
        if (recorded.isEmpty()) {
            if (!scenario.name().equals("PATCH_FLOOR")) return; // the seed had none: nothing recorded yet
            throw new AssertionError("version.txt is gone");
        }
        DataVersion v = recorded.get();
        if (!scenario.versions().contains(v))
            throw new AssertionError("version.txt names " + v + ", not a version of " + scenario.versions());
        Path staged = data.resolve(".etcd-migrate/staging/complete");
        if (Files.isRegularFile(staged)) return;
        if (!Files.isDirectory(data.resolve("member"))) throw new AssertionError("no member/ and no complete staging");
        Path db = data.resolve("member/snap/db");
        if (v.storage() == StorageApi.ETCD3 && !Files.isRegularFile(db))
            throw new AssertionError("version.txt says " + v + ", no member/snap/db");
        if (v.storage() == StorageApi.ETCD3) assertNotAheadOfTheData(scenario.versions(), v, db);
    }

    /**
     * version.txt's {@code v} is not ahead of the db: of the plan's {@code versions}, the db can be at its storage
     * version's minor (3.6+ record one), or at any before 3.6.
     */
    static void assertNotAheadOfTheData(List<DataVersion> versions, DataVersion v, Path db) throws Exception {
        Optional<String> storage = BackendStorageVersion.read(db);
        int at = -1;
        for (int j = 0; j < versions.size(); j++) {
            DataVersion candidate = versions.get(j);
            String minor =
                    candidate.version().major() + "." + candidate.version().minor();
            // no storage version: before 3.6, or a 3.6+ etcd stopped before it recorded one (seeds can be)
            boolean fits = storage.map(s -> compare(s, minor) == 0).orElse(true);
            if (fits) at = j;
        }
        if (versions.indexOf(v) > at) {
            throw new AssertionError("version.txt says " + v + ", ahead of the data: the db's storage version is "
                    + storage.orElse("absent (before 3.6)") + " (plan " + versions + ")");
        }
    }

    /** Every path of a tree with its size, for a failure report. */
    static String listing(Path root) throws Exception {
        if (!Files.exists(root)) return " (no data dir)";
        StringBuilder out = new StringBuilder();
        try (var walk = Files.walk(root)) {
            for (Path p : walk.sorted().toList()) {
                out.append("\n  ").append(root.relativize(p)).append(Files.isDirectory(p) ? "/" : " " + Files.size(p));
            }
        }
        return out.toString();
    }

    private static int compare(String a, String b) {
        String[] x = a.split("\\."), y = b.split("\\.");
        int c = Integer.compare(Integer.parseInt(x[0]), Integer.parseInt(y[0]));
        return c != 0 ? c : Integer.compare(Integer.parseInt(x[1]), Integer.parseInt(y[1]));
    }

    /** After a run on dir/mnt (now unmounted): the data in dir/backing is at the target, clean, every key served. */
    static void assertConvergedAfterUnmount(
            CutScenario scenario, FaultScenario.Seeded seeded, EtcdFixture etcd, Path dir) throws Exception {
        Path data = dir.resolve("backing/data");
        scenario.assertConverged(seeded, etcd, data);
    }

    private void rerunConverges(CutScenario scenario, FaultScenario.Seeded seeded, Path data) throws Exception {
        try (RunnerProcess rerun = RunnerProcess.startInOwnGroup(scenario.args(seeded, data))) {
            assertEquals(0, rerun.awaitExit(RUN_DEADLINE), "the rerun:\n" + rerun.output());
        }
        scenario.assertConverged(seeded, etcd, data);
    }
}
