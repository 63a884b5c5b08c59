package dev.etcdmigrate.it.input;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.version.DataVersion;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the node claims (flags, variables, version.txt, binary names) is checked against itself and the
 * disk before anything is touched: each contradiction is a refusal that leaves every byte as it was;
 * each case that is served holds every key afterwards.
 */
class TrustNothingIT {

    private static final Release NEWEST = EtcdFixture.newest();
    private static final Release PREVIOUS = EtcdFixture.V3_RELEASES.get(EtcdFixture.V3_RELEASES.size() - 2);

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    // ---- 1. one source of truth for the data dir -----------------------------------------------------

    /** The newest release whose line downgrades by snapshot restore (a member dir swap). */
    private static Release newestRestoredDowngrade() {
        return EtcdFixture.V3_RELEASES.stream()
                .filter(r -> r.line().downgrade().method() == Release.DowngradeMethod.SNAPSHOT_RESTORE)
                .reduce((a, b) -> b)
                .orElseThrow();
    }

    /** The runner's migrate arguments to NEWEST without --data-dir (the data dir is named elsewhere). */
    private static List<String> migrateNamingNoDataDir(Path data) {
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, NEWEST.version()));
        int flag = args.indexOf("--data-dir");
        args.remove(flag + 1);
        args.remove(flag);
        return args;
    }

    @Test
    void aDataDirFlagThatContradictsEtcdsOwnIsRefused(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Path other = dir.resolve("other");
        etcd.seed(PREVIOUS, data, 50);
        Map<String, String> before = TreeDigest.of(dir);
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, NEWEST.version()));
        args.addAll(List.of("--", "--data-dir", other.toString()));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertRefusedBeforeAnyEtcd(runner, 2);
        }
        assertEquals(before, TreeDigest.of(dir), "nothing touched, the other dir not created");
    }

    @Test
    void dataDirectoryAndEtcdDataDirThatDisagreeAreRefused(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(PREVIOUS, data, 50);
        Map<String, String> before = TreeDigest.of(dir);
        List<String> args = migrateNamingNoDataDir(data);
        try (RunnerProcess runner = RunnerProcess.run(
                args,
                Map.of(
                        "DATA_DIRECTORY",
                        data.toString(),
                        "ETCD_DATA_DIR",
                        dir.resolve("other").toString()))) {
            assertRefusedBeforeAnyEtcd(runner, 2);
        }
        assertEquals(before, TreeDigest.of(dir));
    }

    @Test
    void etcdsOwnDataDirIsTheOneMigratedWhenTheRunnerNamesNone(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(PREVIOUS, data, 100);
        List<String> args = migrateNamingNoDataDir(data);
        args.addAll(List.of("--", "--data-dir=" + data));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(0, runner.exitCode(), runner.output());
        }
        etcd.assertMigratedTo(NEWEST, data, before);
    }

    // ---- an external WAL dir -------------------------------------------------------------------------

    @Test
    void anExternalWalDirIsFollowedThroughAnUpgrade(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Path wal = dir.resolve("wal");
        Keyspace before = etcd.seed(PREVIOUS, data, 200, "--wal-dir", wal.toString());
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, NEWEST.version()));
        args.addAll(List.of("--", "--wal-dir", wal.toString()));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(0, runner.exitCode(), runner.output());
            assertTrue(runner.count("etcd-started") > 0, runner.output());
        }
        assertFalse(Files.exists(data.resolve("member/wal")), "no second WAL started inside the member dir");
        assertEquals(NEWEST.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
        assertEquals(
                Map.of(),
                before.differences(
                        etcd.read(NEWEST, data, "--wal-dir", wal.toString()).keyspace()));
    }

    @Test
    void dataWrittenWithAWalDirIsRefusedWithoutIt(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Path wal = dir.resolve("wal");
        etcd.seed(PREVIOUS, data, 50, "--wal-dir", wal.toString());
        Map<String, String> before = TreeDigest.of(dir);
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, NEWEST.version()))) {
            assertRefusedBeforeAnyEtcd(runner, 3);
        }
        assertEquals(before, TreeDigest.of(dir), "no new WAL was started over the old data");
    }

    @Test
    void aSnapshotDowngradeWithAnExternalWalIsRefusedUpFront(@TempDir Path dir) throws Exception {
        Release newer = newestRestoredDowngrade();
        Release older =
                EtcdFixture.CATALOG.line(newer.line().downgrade().toLine()).orElseThrow();
        Path data = dir.resolve("data");
        Path wal = dir.resolve("wal");
        etcd.seed(newer, data, 50, "--wal-dir", wal.toString());
        Map<String, String> before = TreeDigest.of(dir);
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, older.version()));
        args.addAll(List.of("--", "--wal-dir", wal.toString()));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertRefusedBeforeAnyEtcd(runner, 3);
        }
        assertEquals(before, TreeDigest.of(dir));
    }

    @Test
    void aSnapshotRestoreGivesTheMemberThePeerUrlsEtcdsFlagsName(@TempDir Path dir) throws Exception {
        Release newer = newestRestoredDowngrade();
        Release older =
                EtcdFixture.CATALOG.line(newer.line().downgrade().toLine()).orElseThrow();
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(newer, data, 100);
        String peer = "http://127.0.0.1:"
                + dev.etcdmigrate.etcd.server.FreePorts.pick().peer();
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, older.version()));
        args.addAll(List.of(
                "--", "--name", "it", "--initial-advertise-peer-urls", peer, "--initial-cluster", "it=" + peer));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(0, runner.exitCode(), runner.output());
        }
        List<String> peerUrls = new ArrayList<>();
        etcd.withClient(
                older,
                data,
                client -> client.getClusterClient()
                        .listMember()
                        .get()
                        .getMembers()
                        .forEach(m -> m.getPeerURIs().forEach(u -> peerUrls.add(u.toString()))));
        assertEquals(
                List.of(peer), peerUrls, "the restored member carries etcd's own peer URL, not a localhost default");
        assertEquals(Map.of(), before.differences(etcd.read(older, data).keyspace()));
    }

    // ---- 2. version.txt is a claim ---------------------------------------------------------------------

    @Test
    void etcd2DataLabelledEtcd3IsRefused(@TempDir Path dir) throws Exception {
        Release etcd2 = EtcdFixture.CATALOG.releases().stream()
                .filter(r -> !r.line().v3Api())
                .reduce((a, b) -> b)
                .orElseThrow();
        Path data = dir.resolve("data");
        dev.etcdmigrate.datadir.Permissions.ownerOnlyDir(data);
        try (PrivateEtcd server = etcd.startEtcd2(etcd2, data)) {
            assertEquals(201, EtcdFixture.v2(server, "PUT", "/registry/a", "1"));
            server.stop(Duration.ofSeconds(20));
        }
        // an etcd3 line that can open 2.x data: what a careless relabel would claim
        new DataDir(data).writeVersion(DataVersion.parse(EtcdFixture.oldest().version() + "/etcd3"));
        Map<String, String> before = TreeDigest.of(dir);
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, NEWEST.version()))) {
            assertRefusedBeforeAnyEtcd(runner, 3);
        }
        assertEquals(before, TreeDigest.of(dir));
    }

    @Test
    void dataNewerThanVersionTxtClaimsIsRefused(@TempDir Path dir) throws Exception {
        Release recorder = EtcdFixture.V3_RELEASES.stream()
                .filter(r -> r.line().tools().statusReportsStorageVersion())
                .reduce((a, b) -> b)
                .orElseThrow();
        // two lines below: one below is what an interrupted upgrade step leaves (resumable, see FaultInjectionIT)
        Release below =
                EtcdFixture.CATALOG.line(recorder.line().upgrade().fromLine()).orElseThrow();
        Release claimed =
                EtcdFixture.CATALOG.line(below.line().upgrade().fromLine()).orElseThrow();
        Path data = dir.resolve("data");
        etcd.seed(recorder, data, 50);
        // the storage version is set a few seconds after start: wait until the backend records it
        awaitStorageVersion(recorder, data);
        new DataDir(data).writeVersion(DataVersion.parse(claimed.version() + "/etcd3"));
        Map<String, String> before = TreeDigest.of(dir);
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, recorder.version()))) {
            assertRefusedBeforeAnyEtcd(runner, 3);
        }
        assertEquals(before, TreeDigest.of(dir));
    }

    /** Runs the release on the data until its backend records a storage version, read the way the runner reads it. */
    private void awaitStorageVersion(Release release, Path data) throws Exception {
        Poll.untilTrue(Duration.ofMinutes(2), Duration.ofMillis(100), "a storage version in the backend", () -> {
            try (PrivateEtcd server = etcd.start(release, data)) {
                Poll.untilTrue(
                        Duration.ofMinutes(2),
                        Duration.ofMillis(100),
                        "etcd " + release.version() + " reporting a storage version",
                        () -> !server.gateway()
                                .version()
                                .path("storage")
                                .asText("")
                                .isEmpty());
                server.awaitWrite(Duration.ofSeconds(30)); // one more backend commit after the version was set
                server.stop(Duration.ofSeconds(20));
            }
            Process p = new ProcessBuilder(
                            EtcdFixture.binDir()
                                    .resolve("etcdutl-" + release.version())
                                    .toString(),
                            "snapshot",
                            "status",
                            data.resolve("member/snap/db").toString(),
                            "-w",
                            "json")
                    .redirectErrorStream(true)
                    .start();
            String status = new String(p.getInputStream().readAllBytes());
            assertEquals(0, p.waitFor(), status);
            if (!status.matches("(?s).*\"version\":\"\\d.*"))
                throw new IllegalStateException("etcdutl snapshot status: " + status);
            return true;
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"%s\r\n", " %s ", "%s\n\n", "\t%s\r\n\r\n"})
    void whiteSpaceAroundVersionTxtIsAcceptedAsKubernetesToolDid(String shape, @TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(PREVIOUS, data, 50);
        Files.writeString(data.resolve("version.txt"), shape.formatted(PREVIOUS.version() + "/etcd3"));
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, NEWEST.version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
        }
        etcd.assertMigratedTo(NEWEST, data, before);
    }

    // ---- 3. binaries are what their names say -------------------------------------------------------------

    @Test
    void aBinaryThatIsAnotherVersionThanItsNameIsRefused(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(PREVIOUS, data, 50);
        Path bin = Files.createDirectory(dir.resolve("bin"));
        try (var files = Files.list(EtcdFixture.binDir())) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                Files.createSymbolicLink(bin.resolve(f.getFileName()), f);
            }
        }
        // a bad image build: etcd-<newest> is really the previous release
        Files.delete(bin.resolve("etcd-" + NEWEST.version()));
        Files.createSymbolicLink(
                bin.resolve("etcd-" + NEWEST.version()), EtcdFixture.binDir().resolve("etcd-" + PREVIOUS.version()));
        Map<String, String> before = TreeDigest.of(data);
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, NEWEST.version()));
        args.set(args.indexOf("--bin-dir") + 1, bin.toString());
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertRefusedBeforeAnyEtcd(runner, 2);
        }
        assertEquals(before, TreeDigest.of(data));
        assertEquals(PREVIOUS.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
    }

    // ---- 5. the final etcd accepts its flags -------------------------------------------------------------

    /**
     * A flag the target rejects and knows by no other name (the catalog's flagReplacements have none for it; a
     * renamed flag is given in the target's spelling instead, FlagTranslationIT) is named before any step.
     */
    @Test
    void aFlagTheTargetRejectsIsNamedBeforeAnyStep(@TempDir Path dir) throws Exception {
        String rejected = "--experimental-enable-v2v3"; // 3.4-3.5's v2 emulation: 3.6 and 3.7 have nothing like it
        assertTrue(!NEWEST.line().flagReplacements().containsKey(rejected), "the catalog names no replacement");
        Path data = dir.resolve("data");
        etcd.seed(PREVIOUS, data, 50);
        Map<String, String> before = TreeDigest.of(data);
        Path termination = Files.createFile(dir.resolve("termination-log"));
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, NEWEST.version()));
        args.addAll(List.of("--termination-log", termination.toString(), "--", rejected + "=/v2v3"));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertRefusedBeforeAnyEtcd(runner, 2);
        }
        assertEquals(before, TreeDigest.of(data));
        String reason = Files.readString(termination);
        assertTrue(reason.contains(rejected), reason);
        assertEquals(1, reason.lines().count(), "one line: " + reason);
    }

    // ---- 6. a strict CLI ---------------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"plna", "migrate stray", "plan -data-dir"})
    void typosAreRefusedAndTouchNothing(String words, @TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(PREVIOUS, data, 20);
        Map<String, String> before = TreeDigest.of(data);
        List<String> args = new ArrayList<>(List.of(words.split(" ")));
        List<String> rest = new ArrayList<>(RunnerArgs.migrate(data, NEWEST.version()));
        rest.removeFirst(); // "migrate"
        if (words.endsWith("-data-dir")) {
            args.add(data.toString());
            rest.remove(rest.indexOf("--data-dir") + 1);
            rest.remove("--data-dir");
        }
        args.addAll(rest);
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertRefusedBeforeAnyEtcd(runner, 2);
        }
        assertEquals(before, TreeDigest.of(data));
    }

    @Test
    void versionPrintsTheRunnerAndEveryBundledEtcd() throws Exception {
        try (RunnerProcess runner = RunnerProcess.run(
                List.of("--version", "--bin-dir", EtcdFixture.binDir().toString()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            // --version prints on stdout, not as events: each bundled version (data), and "(missing)" marks an absent
            // binary
            for (Release r : EtcdFixture.CATALOG.releases()) {
                assertTrue(runner.output().contains(" " + r.version()), r.version() + " in " + runner.output());
            }
            assertFalse(runner.output().contains("(missing)"), runner.output());
        }
    }

    // ---- 8. errors an operator can act on ------------------------------------------------------------------

    @Test
    void aPrivateEtcdThatDiesIsReportedByItsFatalLineAtOnce(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(PREVIOUS, data, 20);
        // etcd cannot open a WAL file another process locks: it logs a fatal error at start. (A zeroed db
        // would not do: the runner's own readers refuse it before any etcd starts, DataClaimsIT.) The JVM's
        // POSIX lock conflicts with the open-file-description lock etcd takes on Linux, and the runner's readers
        // take none.
        Path wal;
        try (var files = Files.list(data.resolve("member/wal"))) {
            wal = files.filter(f -> f.getFileName().toString().endsWith(".wal"))
                    .sorted()
                    .reduce((a, b) -> b)
                    .orElseThrow();
        }
        Path termination = Files.createFile(dir.resolve("termination-log"));
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, NEWEST.version()));
        args.addAll(List.of("--termination-log", termination.toString(), "--start-timeout", "5m"));
        long start = System.nanoTime();
        try (FileChannel channel = FileChannel.open(wal, StandardOpenOption.WRITE);
                FileLock held = channel.lock();
                RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(1, runner.exitCode(), runner.output());
            assertEquals(1, runner.ending().path("exitCode").asInt(), runner.output());
            List<JsonNode> failed = runner.events("step-failed");
            assertEquals(1, failed.size(), runner.output());
            assertEquals(
                    PREVIOUS.version() + "/etcd3",
                    failed.getFirst().path("versionTxt").asText(),
                    "what version.txt still says");
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(Duration.ofSeconds(60)) < 0, "failed in " + took + ", not at --start-timeout");
        String reason = Files.readString(termination);
        assertTrue(
                reason.contains("\"level\":\"fatal\"")
                        || reason.contains("\"level\":\"panic\"")
                        || reason.contains("panic:"),
                "etcd's own fatal line: " + reason);
        assertTrue(
                reason.contains(PREVIOUS.version() + "/etcd3"),
                "the termination message names what version.txt says: " + reason);
    }

    @Test
    void theLockFileIsOwnerOnly(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(NEWEST, data, 10);
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, NEWEST.version()))) {
            assertEquals(0, runner.exitCode(), runner.output());
        }
        assertEquals(
                "rw-------",
                java.nio.file.attribute.PosixFilePermissions.toString(
                        Files.getPosixFilePermissions(data.resolve(".etcd-migrate/lock"))));
    }

    /** The run ended in a "refused" event with this exit code, and no private etcd was started. */
    private static void assertRefusedBeforeAnyEtcd(RunnerProcess runner, int exitCode) {
        assertEquals(exitCode, runner.exitCode(), runner.output());
        JsonNode ending = runner.ending();
        assertEquals("refused", ending.path("event").asText(), runner.output());
        assertEquals(exitCode, ending.path("exitCode").asInt(), runner.output());
        assertEquals(0, runner.count("etcd-started"), runner.output());
    }
}
