package dev.etcdmigrate.it.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** What the runner does with each kind of data dir it can meet, and that refusals touch nothing. */
class DataDirCasesIT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void alreadyAtTargetStartsNoEtcdAndLeavesVersionTxtAlone(@TempDir Path dir) throws Exception {
        Release newest = EtcdFixture.newest();
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(newest, data, 200);
        long modified = Files.getLastModifiedTime(data.resolve("version.txt")).toMillis();
        Path classes = dir.resolve("classes.log");
        try (RunnerProcess runner = RunnerProcess.run(
                RunnerArgs.migrate(data, newest.version()),
                Map.of("ETCD_MIGRATE_JAVA_OPTS", "-Xlog:class+load=info:file=" + classes))) {
            assertEquals(0, runner.exitCode(), runner.output());
            assertEquals(0, runner.count("etcd-started"), runner.output());
            List<JsonNode> plans = runner.events("plan-made");
            assertEquals(1, plans.size(), runner.output());
            assertEquals(
                    newest.version() + "/etcd3",
                    plans.getFirst().path("current").asText(),
                    runner.output());
            assertEquals(0, plans.getFirst().path("steps").size(), "a plan without steps: " + runner.output());
            assertTrue(plans.getFirst().path("steps").isArray(), runner.output());
        }
        List<String> loaded = Files.readAllLines(classes);
        assertTrue(loaded.size() > 100, "the class-load log was written");
        assertEquals(
                List.of(),
                loaded.stream()
                        .filter(l -> l.contains(" io.etcd.") || l.contains(" io.grpc.") || l.contains(" io.netty."))
                        .limit(5)
                        .toList(),
                "the no-op path loads no etcd client library");
        assertEquals(newest.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
        assertEquals(
                modified, Files.getLastModifiedTime(data.resolve("version.txt")).toMillis(), "not rewritten");
        assertEquals(Map.of(), before.differences(etcd.read(newest, data).keyspace()));
    }

    @Test
    void aPatchOnlyChangeRecordsTheTargetPatchWithoutStartingEtcd(@TempDir Path dir) throws Exception {
        Release newest = EtcdFixture.newest();
        Path data = dir.resolve("data");
        etcd.seed(newest, data, 50);
        String olderPatch =
                newest.etcdVersion().major() + "." + newest.etcdVersion().minor() + ".0";
        Files.writeString(data.resolve("version.txt"), olderPatch + "/etcd3");
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, newest.version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            assertEquals(0, runner.count("etcd-started"), runner.output());
        }
        assertEquals(newest.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
    }

    @Test
    void aMissingDataDirIsCreatedOwnerOnlyWithTheTargetRecorded(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("a/b/data");
        String target = EtcdFixture.newest().version();
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, target))) {
            assertEquals(0, runner.exitCode(), runner.output());
            assertEquals(0, runner.count("etcd-started"), runner.output());
        }
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(data)));
        assertEquals(target + "/etcd3", Files.readString(data.resolve("version.txt")));
        assertFalse(Files.exists(data.resolve("member")));
    }

    @Test
    void anEmptyDataDirGetsOwnerOnlyModeAndTheTarget(@TempDir Path dir) throws Exception {
        Path data = Files.createDirectory(
                dir.resolve("data"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        Files.createDirectory(data.resolve("lost+found"));
        String target = EtcdFixture.oldest().version();
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, target))) {
            assertEquals(0, runner.exitCode(), runner.output());
        }
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(data)));
        assertEquals(target + "/etcd3", Files.readString(data.resolve("version.txt")));
    }

    @Test
    void dataWithoutVersionTxtIsReadFromTheDataAndAnInitialVersionIsAClaimCheckedAgainstIt(@TempDir Path dir)
            throws Exception {
        Release from = EtcdFixture.release("3.5.35");
        Release to = EtcdFixture.release("3.6.16");
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(from, data, 300);
        Files.delete(data.resolve("version.txt"));
        Map<String, String> untouched = TreeDigest.of(data);

        // a claim the data contradicts (3.4 cannot run on data whose cluster version is 3.5): refused, untouched
        Release older = EtcdFixture.release("3.4.23");
        try (RunnerProcess refused =
                RunnerProcess.run(RunnerArgs.migrate(data, to.version(), "--initial-version", older.version()))) {
            assertEquals(3, refused.exitCode(), refused.output());
            String reason = refusal(refused, 3);
            assertTrue(reason.contains(older.version()) && reason.contains("3.5"), refused.output());
        }
        assertEquals(untouched, TreeDigest.of(data), "byte-identical after the refusal");

        // a claim the data agrees with is taken (its patch is more than the data tells)
        try (RunnerProcess runner =
                RunnerProcess.run(RunnerArgs.migrate(data, to.version(), "--initial-version", from.version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            var read = runner.events("data-dir-read");
            assertEquals(1, read.size(), runner.output());
            assertEquals(
                    from.version() + "/etcd3", read.getFirst().path("version").asText());
        }
        etcd.assertMigratedTo(to, data, before);
    }

    @Test
    void anUnsupportedTransitionIsRefusedWithTheDataDirByteIdentical(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(EtcdFixture.oldest(), data, 100);
        Files.writeString(
                data.resolve("version.txt"), "3.8.0/etcd3"); // newer than every bundled line: nothing can run it
        Map<String, String> untouched = TreeDigest.of(data);
        for (List<String> args :
                List.of(RunnerArgs.migrate(data, EtcdFixture.newest().version()), RunnerArgs.migrate(data, "3.9.9"))) {
            try (RunnerProcess runner = RunnerProcess.run(args)) {
                assertEquals(3, runner.exitCode(), runner.output());
                refusal(runner, 3);
                assertEquals(0, runner.count("etcd-started"), runner.output());
            }
            assertEquals(untouched, TreeDigest.of(data));
        }
    }

    /** Empty, garbage, a version without its storage: each quoted back (as data: the file and what it holds), exit 2, nothing touched. */
    @ParameterizedTest(name = "version.txt = \"{0}\"")
    @CsvSource(
            delimiter = '|',
            value = {"''|''", "'hello\\n'|hello\\n", "3.5.21|3.5.21"})
    void aBadVersionTxtIsAnErrorThatSaysWhatWasFound(String content, String shown, @TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(EtcdFixture.oldest(), data, 20);
        Files.writeString(data.resolve("version.txt"), content.replace("\\n", "\n"));
        Map<String, String> untouched = TreeDigest.of(data);
        try (RunnerProcess runner =
                RunnerProcess.run(RunnerArgs.migrate(data, EtcdFixture.newest().version()))) {
            assertEquals(2, runner.exitCode(), runner.output());
            String reason = refusal(runner, 2);
            assertTrue(
                    reason.contains(data.resolve("version.txt").toString()) && reason.contains("'" + shown + "'"),
                    runner.output());
            assertEquals(0, runner.count("etcd-started"), runner.output());
        }
        assertEquals(untouched, TreeDigest.of(data));
    }

    @Test
    void aMissingTargetIsAnErrorAndTouchesNothing(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        try (RunnerProcess runner =
                RunnerProcess.run(List.of("migrate", "--data-dir", data.toString(), "--name", "it", "--no-exec"))) {
            assertEquals(2, runner.exitCode(), runner.output());
            String reason = refusal(runner, 2);
            assertTrue(reason.contains("--target-version") && reason.contains("TARGET_VERSION"), runner.output());
        }
        assertFalse(Files.exists(data));
    }

    @Test
    void planPrintsTheStepsAndChangesNothing(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(EtcdFixture.oldest(), data, 20);
        Map<String, String> untouched = TreeDigest.of(data);
        List<String> args = new ArrayList<>(
                RunnerArgs.common("plan", data, EtcdFixture.newest().version()));
        args.addAll(List.of("-o", "json"));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(0, runner.exitCode(), runner.output());
            JsonNode plan = printedPlan(runner);
            assertEquals(
                    EtcdFixture.oldest().version() + "/etcd3",
                    plan.path("current").asText(),
                    runner.output());
            assertEquals(
                    EtcdFixture.newest().version() + "/etcd3",
                    plan.path("target").asText(),
                    runner.output());
            JsonNode steps = plan.path("steps");
            assertEquals(EtcdFixture.V3_RELEASES.size() - 1, steps.size(), runner.output());
            for (int i = 0; i < steps.size(); i++) {
                assertEquals(i + 1, steps.get(i).path("index").asInt(), runner.output());
                assertEquals(
                        EtcdFixture.V3_RELEASES.get(i + 1).version() + "/etcd3",
                        steps.get(i).path("result").asText(),
                        "one minor per step: " + runner.output());
            }
        }
        assertEquals(untouched, TreeDigest.of(data));
    }

    /**
     * 3.6 judges v2 content itself right after the run's 3.5 step, unless the operator's ETCD_CREDS set
     * --v2-deprecation (write-only-skip-check would make 3.6 accept v2 content): then the check comes first.
     */
    @Test
    void etcd36JudgesV2ContentItselfUnlessTheOperatorSetsV2Deprecation(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(EtcdFixture.release("3.4.23"), data, 20);
        List<String> args = new ArrayList<>(RunnerArgs.common("plan", data, "3.6.16"));
        args.addAll(List.of("-o", "json"));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(0, runner.exitCode(), runner.output());
            String step36 =
                    printedPlan(runner).path("steps").get(1).path("description").asText();
            assertTrue(step36.contains("it refuses v2 content itself at start"), step36);
        }
        try (RunnerProcess runner =
                RunnerProcess.run(args, Map.of("ETCD_CREDS", "--v2-deprecation=write-only-skip-check"))) {
            assertEquals(0, runner.exitCode(), runner.output());
            String step36 =
                    printedPlan(runner).path("steps").get(1).path("description").asText();
            assertTrue(step36.contains("after etcdutl 3.5.35 confirms no v2 content"), step36);
        }
    }

    /** The run ended in a "refused" event with this exit code; its reason. */
    private static String refusal(RunnerProcess runner, int exitCode) {
        JsonNode ending = runner.ending();
        assertEquals("refused", ending.path("event").asText(), runner.output());
        assertEquals(exitCode, ending.path("exitCode").asInt(), runner.output());
        return ending.path("reason").asText();
    }

    /** The plan `plan -o json` printed on stdout: the one JSON line that is not a log line. */
    private static JsonNode printedPlan(RunnerProcess runner) throws Exception {
        List<JsonNode> printed = new ArrayList<>();
        for (String line : runner.lines()) { // stdout's line passes through as printed
            if (!line.startsWith("{")) continue;
            JsonNode json = new ObjectMapper().readTree(line);
            if (!json.has("source") && json.has("steps")) printed.add(json);
        }
        assertEquals(1, printed.size(), "one plan on stdout: " + runner.output());
        return printed.getFirst();
    }
}
