package dev.etcdmigrate.it.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.it.support.WrittenDirs;
import dev.etcdmigrate.version.StorageApi;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an operator's flags or labels claim against what the data says: inspect,
 * plan and migrate give the same answer, a refusal is exit 3 before any etcd starts and leaves the data dir byte
 * for byte as it was.
 */
public class DataClaimsIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    /**
     * version.txt says 3.7.3/etcd3 on data only 3.4 wrote: etcd 3.7 cannot open it (it panics
     * "unmarshal should never fail"), so no target may take the label: not the restart at 3.7.3 (it exited 0), not a
     * downgrade to 3.5.35 (it changed member/snap/db, then exited 1).
     */
    @Test
    void aLabelNewerThanTheDataIsRefusedByInspectPlanAndMigrate(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(EtcdFixture.release("3.4.23"), data, 20);
        Files.writeString(data.resolve("version.txt"), EtcdFixture.newest().version() + "/etcd3\n");
        Map<String, String> before = TreeDigest.of(data);
        JsonNode report = inspect(data, EtcdFixture.newest().version());
        assertEquals("contradicted", report.path("label").path("verdict").asText(), report.toString());
        for (String target : List.of(EtcdFixture.newest().version(), "3.5.35")) {
            JsonNode shown = target(report, target);
            assertTrue(shown.path("refused").isTextual(), "inspect refuses " + target + ": " + shown);
            assertRefused(RunnerArgs.common("plan", data, target), data, "3.4", "version.txt");
            assertRefused(RunnerArgs.migrate(data, target), data, "3.4", "version.txt");
        }
        assertEquals(before, TreeDigest.of(data), "byte-identical, no backup taken");
    }

    /**
     * A --name that is not the member the data records: every bundled line's data written as
     * member "it" (etcd3 for 3.x: the db's members bucket; etcd2 with snapshots for 2.x: the v2 store), started as
     * "other": inspect (given the name), plan and migrate refuse, exit 3, naming both; as "it" no refusal names it.
     */
    @Test
    void anotherMembersNameIsRefusedOnEveryLinesData(@TempDir Path dir) throws Exception {
        List<String> recorded = new ArrayList<>();
        for (Release release : EtcdFixture.CATALOG.releases()) {
            boolean v3 = release.line().v3Api();
            Path data = dir.resolve(release.version());
            try (WrittenDirs dirs = new WrittenDirs()) {
                dirs.write(
                        release,
                        data,
                        new WrittenDirs.Variant(v3 ? StorageApi.ETCD3 : StorageApi.ETCD2, !v3, Optional.empty()),
                        v3 ? 3 : 40);
            }
            String storage = v3 ? "etcd3" : "etcd2";
            JsonNode report = inspect(data, release.version(), "--target-storage", storage);
            JsonNode self = null;
            for (JsonNode m : report.path("members"))
                if (m.path("id").asText().equals(report.path("memberId").asText())) self = m;
            assertTrue(self != null && self.path("name").asText().equals("it"), "the data names its member: " + report);
            JsonNode asIt = target(report, release.version());
            assertFalse(asIt.path("refused").asText().contains("--name"), asIt.toString());
            List<String> other = new ArrayList<>(named(RunnerArgs.common("inspect", data, release.version()), "other"));
            other.addAll(List.of("--target-storage", storage, "-o", "json"));
            JsonNode otherReport;
            try (RunnerProcess runner = RunnerProcess.run(other)) {
                assertEquals(0, runner.exitCode(), runner.output());
                otherReport = JSON.readTree(runner.output()
                        .lines()
                        .filter(l -> l.startsWith("{\"schema\""))
                        .findFirst()
                        .orElseThrow());
            }
            String shown =
                    target(otherReport, release.version()).path("refused").asText();
            assertTrue(shown.contains("'other'") && shown.contains("'it'"), "inspect: " + shown);
            for (String command : List.of("plan", "migrate")) {
                List<String> args = named(RunnerArgs.common(command, data, release.version()), "other");
                args.set(args.indexOf("--target-storage") + 1, storage);
                if (command.equals("migrate")) args.add("--no-exec");
                assertRefused(
                        args, data, "'other'", "'it'", report.path("memberId").asText());
            }
            recorded.add(release.version() + ": " + self.path("name").asText());
        }
        System.out.println("member names the data records, refused as 'other': " + recorded);
    }

    /**
     * A data dir that does not exist, and an empty one: a new cluster's first boot and a mistyped
     * hostPath look the same. plan and migrate go on (exit 0) and both emit one WARN event new-cluster naming the
     * path; inspect (exit 0, also for a dir that does not exist) says a start begins a new, empty cluster and shows
     * no step for the target. Only migrate writes (the dir, version.txt).
     */
    @Test
    void aMissingOrEmptyDataDirWarnsOfANewClusterInInspectPlanAndMigrate(@TempDir Path dir) throws Exception {
        String target = EtcdFixture.newest().version();
        Path empty = Files.createDirectory(dir.resolve("empty"));
        Path missing = dir.resolve("missing");
        for (Path data : List.of(missing, empty)) {
            JsonNode report = inspect(data, target);
            assertEquals("no-data", report.path("label").path("verdict").asText(), report.toString());
            assertFalse(report.path("holdsEtcdData").asBoolean(), report.toString());
            assertEquals(0, target(report, target).path("steps").size(), report.toString());
            assertEquals(Files.exists(data), Files.isDirectory(data), "inspect created nothing");
            for (String command : List.of("plan", "migrate")) {
                List<String> args = new ArrayList<>(RunnerArgs.common(command, data, target));
                args.addAll(1, List.of("--log-format", "json"));
                if (command.equals("migrate")) args.add("--no-exec");
                try (RunnerProcess runner = RunnerProcess.run(args)) {
                    assertEquals(0, runner.exitCode(), runner.output());
                    List<JsonNode> warned = runner.events("new-cluster");
                    assertEquals(1, warned.size(), runner.output());
                    assertEquals("warn", warned.getFirst().path("level").asText(), runner.output());
                    assertEquals(
                            data.toString(), warned.getFirst().path("dataDir").asText());
                    assertEquals(
                            data.equals(empty), warned.getFirst().path("exists").asBoolean(), runner.output());
                    assertFalse(warned.getFirst().path("joins").asBoolean(), runner.output());
                    assertEquals(0, runner.count("etcd-started"), runner.output());
                }
            }
            assertEquals(
                    target + "/etcd3",
                    Files.readString(data.resolve("version.txt")).strip());
        }
    }

    /**
     * An empty data dir whose etcd is told to join a running cluster (--initial-cluster-state=existing, a member
     * added or replaced): `plan` warns of the empty dir as a member that joins the running cluster, not a new
     * cluster, and its plan says so: the line comes from the other members when it starts, not the target's record.
     * Nothing is written.
     */
    @Test
    void anEmptyDirOfAMemberJoiningARunningClusterIsPlannedAsAJoin(@TempDir Path dir) throws Exception {
        String target = EtcdFixture.newest().version();
        Path data = Files.createDirectory(dir.resolve("m1"));
        ServerPorts m0 = FreePorts.pick();
        ServerPorts m1 = FreePorts.pick();
        String initialCluster = "m0=http://127.0.0.1:" + m0.peer() + ",m1=http://127.0.0.1:" + m1.peer();
        RunnerArgs.Member member = new RunnerArgs.Member(
                "m1",
                data,
                initialCluster,
                "joining",
                "http://127.0.0.1:" + m1.peer(),
                "http://127.0.0.1:" + m1.client());
        List<String> args = new ArrayList<>(RunnerArgs.member("plan", member, target, List.of(), List.of()));
        args.set(args.lastIndexOf("new"), "existing");
        args.addAll(1, List.of("--log-format", "json", "-o", "json"));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(0, runner.exitCode(), runner.output());
            List<JsonNode> warned = runner.events("new-cluster");
            assertEquals(1, warned.size(), runner.output());
            assertTrue(warned.getFirst().path("joins").asBoolean(), runner.output());
            JsonNode plan = JSON.readTree(runner.output()
                    .lines()
                    .filter(l -> l.startsWith("{\"current\""))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no plan: " + runner.output())));
            assertTrue(plan.path("joins").asBoolean(), plan.toString());
            assertEquals("", plan.path("current").asText(), plan.toString());
            assertEquals(0, runner.count("etcd-started"), runner.output());
        }
        try (var left = Files.list(data)) {
            assertEquals(List.of(), left.toList(), "plan wrote nothing");
        }
    }

    /**
     * A damaged db: one page deep in the key bucket's tree claims another id, which only a
     * reading of every page finds. A start with steps (3.5 -> 3.6) reads every page: inspect shows the refusal,
     * plan and migrate refuse it (exit 3) before any etcd runs, the reason names the file and page once, the way back
     * names the data's own member ("it") and peer URL, and nothing changes. A restart at version.txt's version reads
     * only the pages it needs: inspect shows no step and migrate goes on (etcd then judges the db itself).
     */
    @Test
    void aDbWhosePagesTheReadersProveDamagedIsRefusedBeforeAnyEtcdRuns(@TempDir Path dir) throws Exception {
        Release from = EtcdFixture.release("3.5.35");
        Release to = EtcdFixture.release("3.6.16");
        Path data = dir.resolve("data");
        etcd.seed(from, data, 3000);
        Files.writeString(data.resolve("version.txt"), from.version() + "/etcd3\n");
        long page = Bbolt.damageADeepPageOfTheKeyBucket(data.resolve("member/snap/db"));
        String finding = "member/snap/db (page " + page + ")";
        JsonNode report = inspect(data, to.version());
        assertTrue(report.path("damage").path("files").toString().contains(finding), report.toString());
        assertTrue(target(report, to.version()).path("refused").asText().contains(finding), report.toString());
        assertEquals(0, target(report, from.version()).path("steps").size(), "a restart: " + report);
        for (String command : List.of("plan", "migrate")) {
            List<String> args = new ArrayList<>(RunnerArgs.common(command, data, to.version()));
            if (command.equals("migrate")) args.add("--no-exec");
            RunnerProcess runner = assertRefused(
                    args,
                    data,
                    finding,
                    "--name it --initial-cluster it=http://127.0.0.1:",
                    "--initial-advertise-peer-urls http://127.0.0.1:");
            String reason = runner.ending().path("reason").asText();
            assertEquals(reason.indexOf(finding), reason.lastIndexOf(finding), "named once: " + reason);
            assertFalse(reason.contains("etcd-inspect"), reason);
            long naming = runner.events().stream()
                    .filter(e -> e.toString().contains(finding))
                    .count();
            assertEquals(1, naming, "one event names the damage:\n" + runner.output());
        }
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, from.version()))) {
            assertEquals(0, runner.exitCode(), "a restart reads only what it needs: " + runner.output());
        }
    }

    /** The common flags with the member name replaced. */
    public static List<String> named(List<String> args, String name) {
        List<String> out = new ArrayList<>(args);
        out.set(out.indexOf("--name") + 1, name);
        return out;
    }

    /** inspect -o json with migrate's flags for {@code target}. */
    public static JsonNode inspect(Path data, String target, String... extra) throws Exception {
        List<String> args = new ArrayList<>(RunnerArgs.common("inspect", data, target));
        args.addAll(List.of("-o", "json"));
        args.addAll(List.of(extra));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(0, runner.exitCode(), runner.output());
            return JSON.readTree(runner.output()
                    .lines()
                    .filter(l -> l.startsWith("{\"schema\""))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no report: " + runner.output())));
        }
    }

    public static JsonNode target(JsonNode report, String version) {
        for (JsonNode t : report.path("targets")) if (t.path("version").asText().equals(version)) return t;
        throw new AssertionError("no target " + version + " in " + report);
    }

    /**
     * The run ends with a "refused" event, exit 3, no etcd started, the data dir byte-identical; the reason names
     * each of {@code named}.
     */
    public static RunnerProcess assertRefused(List<String> args, Path data, String... named) throws Exception {
        Map<String, String> before = TreeDigest.of(data);
        List<String> withJson = new ArrayList<>(args);
        withJson.addAll(1, List.of("--log-format", "json"));
        RunnerProcess runner = RunnerProcess.run(withJson);
        try {
            assertEquals(3, runner.exitCode(), runner.output());
            JsonNode ending = runner.ending();
            assertEquals("refused", ending.path("event").asText(), runner.output());
            String reason = ending.path("reason").asText();
            for (String name : named)
                assertTrue(reason.contains(name), "'" + name + "' in the reason:\n" + runner.output());
            assertEquals(0, runner.count("etcd-started"), "no etcd was started:\n" + runner.output());
        } finally {
            runner.close();
        }
        assertEquals(before, TreeDigest.of(data), "byte-identical");
        assertFalse(Files.exists(data.resolve(".etcd-migrate/backups")), "no backup");
        return runner;
    }

    static Release release(String version) {
        return EtcdFixture.release(version);
    }
}
