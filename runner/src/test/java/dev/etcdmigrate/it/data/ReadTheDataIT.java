package dev.etcdmigrate.it.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.it.support.WrittenDirs;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Reading the data, integrated: a dir without version.txt (kubeadm writes none) is planned from what its data
 * says (every key checked after the carry to the newest line), and a label the data contradicts is refused for
 * every line with the data dir byte-identical, a hand-edited label first.
 */
class ReadTheDataIT {

    private static final Release NEWEST = EtcdFixture.newest();

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    /** Data 3.5.35 wrote, labelled 3.4.23/etcd3 by hand: trusting the label would carry it on as 3.4 data. */
    @Test
    void data35Labelled34IsRefused(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        writeEtcd3(EtcdFixture.release("3.5.35"), data, 20);
        new DataDir(data).writeVersion(DataVersion.parse("3.4.23/etcd3"));
        String reason = assertRefusedUntouched(data, RunnerArgs.migrate(data, NEWEST.version()), Map.of());
        assertTrue(reason.contains("3.4.23/etcd3") && reason.contains("3.5.0"), "both facts named: " + reason);
    }

    /**
     * Every line's data labelled with the line before it (no run of the runner on it, so not the
     * interrupted-step case) is refused before any etcd starts, the data dir byte-identical; and the same
     * claim as INITIAL_VERSION on the unlabelled dir.
     */
    @Test
    void aLabelOlderThanTheDataIsRefusedForEveryLine(@TempDir Path dir) throws Exception {
        List<Release> releases = EtcdFixture.CATALOG.releases();
        List<String> seen = new ArrayList<>();
        for (int i = 1; i < releases.size(); i++) {
            Release writer = releases.get(i);
            Release claimed = releases.get(i - 1);
            StorageApi api = writer.line().v3Api() ? StorageApi.ETCD3 : StorageApi.ETCD2;
            StorageApi claimedApi = claimed.line().v3Api() ? api : StorageApi.ETCD2;
            Path data = dir.resolve(writer.version());
            try (WrittenDirs dirs = new WrittenDirs()) {
                dirs.write(writer, data, WrittenDirs.Variant.plain(api), 5);
            }
            String label = claimed.version() + "/" + claimedApi;
            Files.writeString(data.resolve("version.txt"), label);
            String reason = assertRefusedUntouched(data, RunnerArgs.migrate(data, NEWEST.version()), Map.of());
            assertTrue(reason.contains(label), reason);
            seen.add(writer.version() + " labelled " + label + ": " + reason);

            Files.delete(data.resolve("version.txt"));
            String claim = assertRefusedUntouched(
                    data, RunnerArgs.migrate(data, NEWEST.version()), Map.of("INITIAL_VERSION", claimed.version()));
            assertTrue(claim.contains(claimed.version()), claim);
            seen.add(writer.version() + " with INITIAL_VERSION=" + claimed.version() + ": " + claim);
        }
        seen.forEach(System.out::println);
    }

    /** Unlabelled dirs of 3.4, 3.5 and 3.6 are carried to the newest line from what the data says, every key kept. */
    @Test
    void unlabelledDirsAreCarriedToTheNewestLineFromTheirData(@TempDir Path dir) throws Exception {
        for (String version : List.of("3.4.23", "3.5.35", "3.6.16")) {
            Release writer = EtcdFixture.release(version);
            Path data = dir.resolve(version);
            Map<String, String> written = writeEtcd3(writer, data, 200);
            assertFalse(Files.exists(data.resolve("version.txt")));
            try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, NEWEST.version()))) {
                assertEquals(0, runner.exitCode(), runner.output());
                List<JsonNode> detected = runner.events("data-detected");
                assertFalse(detected.isEmpty(), runner.output());
                JsonNode d = detected.getFirst();
                assertEquals(writer.minorLine().toString(), d.path("line").asText(), d.toString());
                assertTrue(d.path("evidence").size() > 0, d.toString());
                String lowest = writer.minorLine() + ".0/etcd3";
                assertEquals(
                        lowest,
                        runner.events("data-dir-read")
                                .getFirst()
                                .path("version")
                                .asText(),
                        runner.output());
                JsonNode plan = runner.events("plan-made").getFirst();
                assertEquals(lowest, plan.path("current").asText(), plan.toString());
                // the lowest patch is below the floor the next line requires (where it has one): a patch step first
                String floor = EtcdFixture.CATALOG.releases().stream()
                        .filter(r -> r.line().upgrade().fromLine().equals(writer.minorLine()))
                        .findFirst()
                        .orElseThrow()
                        .line()
                        .upgrade()
                        .previousMinimumPatch();
                if (!floor.isEmpty()) {
                    assertTrue(
                            plan.toString().contains(writer.version()),
                            "a patch-floor step to " + writer.version() + ": " + plan);
                }
            }
            assertEquals(NEWEST.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
            Keyspace after = etcd.read(NEWEST, data).keyspace();
            Map<String, String> values = new TreeMap<>();
            after.entries().forEach((k, e) -> {
                if (k.startsWith("/registry/")) values.put(k, new String(e.value(), StandardCharsets.UTF_8));
            });
            assertEquals(
                    new TreeMap<>(written), values, "every key and value after " + version + " -> " + NEWEST.version());
        }
    }

    /**
     * The resumed step where the step prepares the data with the previous line first (3.5 -> 3.6: etcdutl 3.5
     * checks for v2 content; 3.6 -> 3.7: etcd 3.6 leaves a snapshot): the killed run had prepared the data and
     * its etcd had recorded the new line in the db, which the previous line's etcd refuses to open ("version
     * \"3.7.0\" is not supported", seen in NodeCheck's kills). The resumed step starts the new line directly.
     */
    @ParameterizedTest(name = "version.txt {0}, data written by {1}")
    @CsvSource({"3.5.35, 3.6.16", "3.6.16, 3.7.3"})
    void aResumedStepDoesNotRunThePreviousLineOnDataTheNextLineRecorded(String label, String writer, @TempDir Path dir)
            throws Exception {
        Path data = dir.resolve("data");
        Release release = EtcdFixture.release(writer);
        Map<String, String> written = writeEtcd3(release, data, 20);
        assertTrue(
                dev.etcdmigrate.ondisk.DataDetection.recordedFloor(data)
                        .filter(f -> f.equals(release.minorLine()))
                        .isPresent(),
                "the db records " + release.minorLine());
        resumeStartsOnlyTheNextLine(
                data,
                label,
                release,
                written,
                runner -> assertEquals(1, runner.count("interrupted-step-found"), runner.output()));
    }

    /** An etcd3 data dir {@code writer} wrote with {@code keys} keys, unlabelled; returns the written keys. */
    private static Map<String, String> writeEtcd3(Release writer, Path data, int keys) throws Exception {
        try (WrittenDirs dirs = new WrittenDirs()) {
            return dirs.write(writer, data, WrittenDirs.Variant.plain(StorageApi.ETCD3), keys);
        }
    }

    /** What a run with steps leaves in the runner's own dir (its etcd-output.log), as a kill inside a step would. */
    private static void markStepsRanHere(Path data) throws Exception {
        Files.createDirectories(data.resolve(".etcd-migrate"));
        Files.writeString(data.resolve(".etcd-migrate/etcd-output.log"), "");
    }

    /**
     * Resumes a step as a kill leaves it (version.txt at {@code label}, the runner's etcd-output.log): the run to
     * {@code next} exits 0 having started only etcd {@code next}, version.txt records it, and it serves every
     * written key with its value. {@code alsoCheck} sees the finished run.
     */
    private void resumeStartsOnlyTheNextLine(
            Path data,
            String label,
            Release next,
            Map<String, String> written,
            java.util.function.Consumer<RunnerProcess> alsoCheck)
            throws Exception {
        new DataDir(data).writeVersion(DataVersion.parse(label + "/etcd3"));
        markStepsRanHere(data);
        String version = next.version();
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, version))) {
            assertEquals(0, runner.exitCode(), runner.output());
            alsoCheck.accept(runner);
            assertEquals(
                    List.of(version),
                    runner.events("etcd-started").stream()
                            .map(e -> e.path("version").asText())
                            .distinct()
                            .toList(),
                    "only the new line's etcd runs: " + runner.output());
        }
        assertEquals(version + "/etcd3", Files.readString(data.resolve("version.txt")));
        Map<String, String> values = new TreeMap<>();
        etcd.read(next, data).keyspace().entries().forEach((k, e) -> {
            if (written.containsKey(k)) values.put(k, new String(e.value(), StandardCharsets.UTF_8));
        });
        assertEquals(new TreeMap<>(written), values);
    }

    /**
     * The same resumption where the killed etcd 3.7.3 had logged its cluster version update (3.7) in the WAL but
     * not yet committed it to the db, which still records 3.6 (a power cut found it: PowerCutIT, 3.6 -> 3.7,
     * an etcd sync point). etcd 3.6.16, the step's preparation, replays that entry and panics ("invalid
     * downgrade; server version is lower than determined cluster version"). Made here with the kill's real
     * order: etcd 3.6.16 prepares (--snapshot-count=1), etcd 3.7.3 starts with its backend batch held open and
     * is SIGKILLed once the WAL holds its 3.7 entry.
     */
    @Test
    void aResumedStepDoesNotRunThePreviousLineOnDataWhoseWalHoldsTheNextLine(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Release previous = EtcdFixture.release("3.6.16");
        Release next = EtcdFixture.release("3.7.3");
        Map<String, String> written = writeEtcd3(previous, data, 20);
        try (dev.etcdmigrate.etcd.server.PrivateEtcd prepare = etcd.start(previous, data, "--snapshot-count=1")) {
            prepare.stop(java.time.Duration.ofSeconds(20));
        }
        try (dev.etcdmigrate.etcd.server.PrivateEtcd killed =
                etcd.start(next, data, "--backend-batch-interval=1h", "--backend-batch-limit=1000000000")) {
            Poll.untilTrue(
                    java.time.Duration.ofSeconds(30),
                    java.time.Duration.ofMillis(50),
                    "etcd " + next.version() + " logging a 3.7 cluster version",
                    () -> walSetsLine(data, next.minorLine()));
            long pid = dev.etcdmigrate.ondisk.BackendStorageVersion.lockHolder(data.resolve("member/snap/db"))
                    .orElseThrow();
            ProcessHandle handle = ProcessHandle.of(pid).orElseThrow();
            handle.destroyForcibly();
            handle.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
        }
        assertEquals(
                java.util.Optional.of(previous.minorLine()),
                dev.etcdmigrate.ondisk.DataDetection.recordedFloor(data),
                "the db still records " + previous.minorLine() + " (the batch was never committed)");
        resumeStartsOnlyTheNextLine(data, previous.version(), next, written, runner -> {});
    }

    private static boolean walSetsLine(Path data, dev.etcdmigrate.version.MinorLine line) {
        try {
            return dev.etcdmigrate.ondisk.WalRecords.read(data.resolve("member/wal"))
                    .lastClusterVersion()
                    .filter(v -> v.version().startsWith(line + "."))
                    .isPresent();
        } catch (java.io.IOException e) {
            return false; // a record still being written
        }
    }

    /**
     * The one tolerated case, and only with its evidence: data one line ahead of version.txt is what an
     * upgrade step killed after its etcd ran leaves (FaultInjectionIT kills real steps); it is resumed only
     * where this runner ran steps before (its .etcd-migrate/etcd-output.log), refused everywhere else.
     */
    @Test
    void dataOneLineAheadIsResumedOnlyWhereTheRunnersStepsRan(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        writeEtcd3(EtcdFixture.release("3.5.35"), data, 20);
        new DataDir(data).writeVersion(DataVersion.parse("3.4.23/etcd3"));
        assertRefusedUntouched(data, RunnerArgs.migrate(data, "3.5.35"), Map.of());
        markStepsRanHere(data);
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, "3.5.35"))) {
            assertEquals(0, runner.exitCode(), runner.output());
            List<JsonNode> resumed = runner.events("interrupted-step-found");
            assertEquals(1, resumed.size(), runner.output());
            assertEquals("3.5", resumed.getFirst().path("dataLine").asText(), runner.output());
        }
        assertEquals("3.5.35/etcd3", Files.readString(data.resolve("version.txt")));
        // two lines ahead is never a step of this runner: refused even with its marks
        Path newer = dir.resolve("newer");
        writeEtcd3(EtcdFixture.release("3.6.16"), newer, 5);
        new DataDir(newer).writeVersion(DataVersion.parse("3.4.23/etcd3"));
        markStepsRanHere(newer);
        Map<String, String> member = TreeDigest.of(newer.resolve("member"));
        String version = Files.readString(newer.resolve("version.txt"));
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(newer, NEWEST.version()))) {
            assertEquals(3, runner.exitCode(), runner.output());
            assertEquals(0, runner.count("etcd-started"), runner.output());
            assertEquals(0, runner.count("interrupted-step-found"), runner.output());
        }
        // the runner's own dir already existed: its lock file stays, as on any start; the data does not change
        assertEquals(member, TreeDigest.of(newer.resolve("member")));
        assertEquals(version, Files.readString(newer.resolve("version.txt")));
    }

    /**
     * The same interrupted step found through --initial-version (no version.txt): reported once, although a
     * start reads the data twice (before the lock, and again under it).
     */
    @Test
    void anInterruptedStepFoundThroughInitialVersionIsReportedOnce(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        writeEtcd3(EtcdFixture.release("3.5.35"), data, 20);
        markStepsRanHere(data);
        try (RunnerProcess runner =
                RunnerProcess.run(RunnerArgs.migrate(data, "3.5.35", "--initial-version", "3.4.23"))) {
            assertEquals(0, runner.exitCode(), runner.output());
            List<JsonNode> resumed = runner.events("interrupted-step-found");
            assertEquals(1, resumed.size(), runner.output());
            assertEquals("3.5", resumed.getFirst().path("dataLine").asText(), runner.output());
        }
        assertEquals("3.5.35/etcd3", Files.readString(data.resolve("version.txt")));
    }

    /**
     * Data that cannot say which line wrote it (a db of garbage, no WAL, no snapshot) and no label: refused, untouched.
     * The runner's own reader finds the db too short for bbolt's meta pages, so the refusal names the file (its
     * wording is the decision's, checked in DataClaimsIT and OneDecisionIT).
     */
    @Test
    void dataThatCannotAnswerIsStillRefused(@TempDir Path dir) throws Exception {
        Path data = Files.createDirectories(dir.resolve("data/member/snap"))
                .getParent()
                .getParent();
        Files.writeString(data.resolve("member/snap/db"), "not etcd's");
        String reason = assertRefusedUntouched(data, RunnerArgs.migrate(data, NEWEST.version()), Map.of());
        assertTrue(reason.contains("member/snap/db"), reason);
    }

    private static String assertRefusedUntouched(Path data, List<String> args, Map<String, String> env)
            throws Exception {
        Map<String, String> before = TreeDigest.of(data);
        String reason;
        try (RunnerProcess runner = RunnerProcess.run(args, env)) {
            assertEquals(3, runner.exitCode(), runner.output());
            JsonNode ending = runner.ending();
            assertEquals("refused", ending.path("event").asText(), runner.output());
            assertEquals(0, runner.count("etcd-started"), runner.output());
            reason = ending.path("reason").asText();
        }
        assertEquals(before, TreeDigest.of(data), "byte-identical after the refusal");
        return reason;
    }
}
