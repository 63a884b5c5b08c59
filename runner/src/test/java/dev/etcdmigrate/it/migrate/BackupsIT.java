package dev.etcdmigrate.it.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backups before destructive steps, on real etcd: what they hold and their modes, retention in a backup
 * dir outside the data dir, and docs/operations.md's restore procedure run as written.
 */
class BackupsIT {

    private static final String NAME = "\\d{8}T\\d{6}Z-it-[0-9a-f]{8}-";
    /** Backups of one data dir taken within one second are numbered .1, .2, ... in order. */
    private static final String COUNTER = "(\\.\\d+)?";

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void anOnlineDowngradeCopiesTheMemberDirBeforeAnyEtcdRuns(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(EtcdFixture.release("3.7.3"), data, 300);
        Map<String, String> before = contents(data.resolve("member"));
        List<JsonNode> copies;

        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, "3.6.16"))) {
            assertEquals(0, runner.exitCode(), runner.output());
            copies = runner.events("backup-made");
            assertEquals(1, copies.size(), runner.output());
        }

        assertEquals("3.6.16/etcd3", Files.readString(data.resolve("version.txt")));
        Path backup = single(backups(data.resolve(".etcd-migrate/backups")));
        assertTrue(backup.getFileName().toString().matches(NAME + "3\\.7\\.3-etcd3" + COUNTER), backup.toString());
        assertEquals("3.7.3/etcd3", Files.readString(backup.resolve("version.txt")));
        JsonNode copy = copies.getFirst();
        assertEquals(
                List.of("copied", "3.7.3/etcd3", backup.toString()),
                List.of(
                        copy.path("how").asText(),
                        copy.path("version").asText(),
                        copy.path("path").asText()),
                copy.toString());
        assertOwnerOnly(backup);
        assertEquals(before, contents(backup.resolve("member")), "byte for byte the member dir before the step");
    }

    @Test
    void aSnapshotDowngradeKeepsTheReplacedMemberDir(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Keyspace seeded = etcd.seed(EtcdFixture.release("3.5.35"), data, 300);

        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, "3.4.23"))) {
            assertEquals(0, runner.exitCode(), runner.output());
        }

        Path backup = single(backups(data.resolve(".etcd-migrate/backups")));
        assertTrue(backup.getFileName().toString().matches(NAME + "3\\.5\\.35-etcd3" + COUNTER), backup.toString());
        assertEquals("3.5.35/etcd3", Files.readString(backup.resolve("version.txt")));
        assertOwnerOnly(backup);
        // the pre-step data: etcd 3.5.35 on a copy of the backup serves every seeded key as it was
        Path scratch = dir.resolve("scratch");
        Files.createDirectories(scratch);
        Files.setPosixFilePermissions(scratch, PosixFilePermissions.fromString("rwx------"));
        Trees.copy(backup.resolve("member"), scratch.resolve("member"));
        assertSameKeys(seeded, etcd.read(EtcdFixture.release("3.5.35"), scratch).keyspace());
    }

    @Test
    void aBackupDirElsewhereKeepsOnlyTheNewestOfThisDataDir(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Path shared = dir.resolve("shared-backups");
        etcd.seed(EtcdFixture.release("3.5.35"), data, 100);
        // another member's backup in the same place: not this data dir's to count or delete
        Path foreign = Files.createDirectories(shared.resolve("20200101T000000Z-other-00000000-3.5.35-etcd3/member"));

        String[] external = {"--backup-dir", shared.toString(), "--backup-retention", "2"};
        List<JsonNode> deletions = new ArrayList<>();
        List<String> targets = List.of("3.4.23", "3.3.27", "3.2.32");
        for (int i = 0; i < targets.size(); i++) {
            // the second run takes the location and count from the image's variables instead of flags
            List<String> args = i == 1
                    ? RunnerArgs.migrate(data, targets.get(i))
                    : RunnerArgs.migrate(data, targets.get(i), external);
            Map<String, String> env =
                    i == 1 ? Map.of("BACKUP_DIR", shared.toString(), "BACKUP_RETENTION", "2") : Map.of();
            try (RunnerProcess runner = RunnerProcess.run(args, env)) {
                assertEquals(0, runner.exitCode(), runner.output());
                runner.events("backup-deleted").forEach(deletions::add);
            }
        }

        List<Path> ours = backups(shared).stream()
                .filter(p -> !p.equals(foreign.getParent()))
                .toList();
        assertEquals(2, ours.size(), ours.toString());
        assertTrue(ours.get(0).getFileName().toString().matches(NAME + "3\\.4\\.23-etcd3" + COUNTER), ours.toString());
        assertTrue(ours.get(1).getFileName().toString().matches(NAME + "3\\.3\\.27-etcd3" + COUNTER), ours.toString());
        assertEquals("3.4.23/etcd3", Files.readString(ours.get(0).resolve("version.txt")));
        assertEquals("3.3.27/etcd3", Files.readString(ours.get(1).resolve("version.txt")));
        ours.forEach(BackupsIT::assertOwnerOnly);
        assertTrue(Files.isDirectory(foreign), "another data dir's backup is kept");
        assertEquals(1, deletions.size(), deletions.toString());
        assertTrue(
                deletions
                        .getFirst()
                        .path("path")
                        .asText()
                        .matches(Pattern.quote(shared + "/") + NAME + "3\\.5\\.35-etcd3" + COUNTER),
                deletions.toString());
        assertEquals(2, deletions.getFirst().path("retention").asInt(), deletions.toString());
        try (Stream<Path> all = Files.list(shared)) {
            assertTrue(all.noneMatch(p -> p.getFileName().toString().endsWith(".partial")), "no partial copy left");
        }
        assertFalse(Files.exists(data.resolve(".etcd-migrate/backups")), "nothing left in .etcd-migrate/backups");
        assertEquals("3.2.32/etcd3", Files.readString(data.resolve("version.txt")));
    }

    @Test
    void theReadmeRestoreProcedureBringsBackThePreMigrationKeys(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        Path shared = dir.resolve("backups");
        Keyspace seeded = etcd.seed(EtcdFixture.release("3.7.3"), data, 300);
        try (RunnerProcess runner =
                RunnerProcess.run(RunnerArgs.migrate(data, "3.6.16", "--backup-dir", shared.toString()))) {
            assertEquals(0, runner.exitCode(), runner.output());
        }
        Path backup = single(backups(shared));
        Path aside = dir.resolve("member-before-restore");

        // step 1 (stop etcd): the runner exited and started nothing else; steps 2 and 3 as docs/operations.md has them
        runShell(
                restoreCommands(),
                Map.of("DATA_DIR", data.toString(), "BACKUP", backup.toString(), "ASIDE", aside.toString()));

        assertEquals("3.7.3/etcd3", Files.readString(data.resolve("version.txt")));
        assertTrue(Files.isDirectory(aside.resolve("snap")), "the downgraded member dir was moved aside");
        assertOwnerOnly(data.resolve("member"));
        // step 4: etcd of the recorded version serves every key exactly as the seed wrote it
        assertSameKeys(seeded, etcd.read(EtcdFixture.release("3.7.3"), data).keyspace());
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, "3.7.3"))) {
            assertEquals(0, runner.exitCode(), runner.output());
            JsonNode plan = runner.awaitEvent("plan-made", Duration.ZERO);
            assertEquals("3.7.3/etcd3", plan.path("current").asText(), runner.output());
            assertEquals(0, plan.path("steps").size(), "no etcd needs to run: " + runner.output());
            assertEquals(0, runner.count("etcd-started"), runner.output());
        }
    }

    @Test
    void aRetentionBelowOneIsAUsageErrorBeforeAnythingIsTouched(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, "3.7.3", "--backup-retention", "0"))) {
            assertEquals(2, runner.exitCode(), runner.output());
            JsonNode refused = runner.ending();
            assertEquals("refused", refused.path("event").asText(), runner.output());
            assertEquals(2, refused.path("exitCode").asInt(), runner.output());
            assertTrue(refused.path("reason").asText().contains("--backup-retention"), runner.output());
        }
        assertFalse(Files.exists(data), "nothing created");
    }

    // ------------------------------------------------------------------ helpers

    /** docs/operations.md's restore commands: the ```sh block after the restore-commands marker. */
    static String restoreCommands() throws IOException {
        Path readme = Path.of(System.getProperty("readme.file", "../docs/operations.md"));
        List<String> lines = Files.readAllLines(readme, StandardCharsets.UTF_8);
        int marker = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("<!-- restore-commands")) marker = i;
        }
        assertTrue(marker >= 0, readme.toAbsolutePath() + " has no restore-commands marker");
        int open = marker + 1;
        while (open < lines.size() && !lines.get(open).trim().equals("```sh")) open++;
        StringBuilder block = new StringBuilder();
        for (int i = open + 1; i < lines.size() && !lines.get(i).trim().equals("```"); i++) {
            block.append(lines.get(i).strip()).append('\n');
        }
        assertFalse(block.isEmpty(), "the restore block in " + readme + " is empty");
        return block.toString();
    }

    static void runShell(String script, Map<String, String> env) throws Exception {
        ProcessBuilder builder = new ProcessBuilder("bash", "-euc", script).redirectErrorStream(true);
        builder.environment().putAll(env);
        Process shell = builder.start();
        try {
            String output = new String(shell.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!shell.waitFor(1, TimeUnit.MINUTES)) fail("restore commands still running after a minute:\n" + script);
            assertEquals(0, shell.exitValue(), "restore commands failed:\n" + script + "\n" + output);
        } finally {
            shell.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Complete backups in a backup dir, oldest first (names start with their UTC stamp). */
    /** The backups in a location, oldest first: by the name's stamp, then by the counter same-second backups get. */
    static List<Path> backups(Path location) throws IOException {
        assertTrue(Files.isDirectory(location), "no backup dir " + location);
        try (Stream<Path> entries = Files.list(location)) {
            return entries.filter(p -> !p.getFileName().toString().endsWith(".partial"))
                    .sorted(java.util.Comparator.comparing(
                                    (Path p) -> p.getFileName().toString().substring(0, 16))
                            .thenComparingInt(BackupsIT::counterOf))
                    .toList();
        }
    }

    private static int counterOf(Path backup) {
        java.util.regex.Matcher m =
                Pattern.compile("\\.(\\d+)$").matcher(backup.getFileName().toString());
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    static Path single(List<Path> backups) {
        assertEquals(1, backups.size(), backups.toString());
        return backups.getFirst();
    }

    static void assertOwnerOnly(Path tree) {
        try (Stream<Path> walk = Files.walk(tree)) {
            for (Path p : walk.toList()) {
                String mode =
                        PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
                assertEquals(Files.isDirectory(p) ? "rwx------" : "rw-------", mode, p.toString());
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    /** Each file's content digest by relative path, modes left out (a backup forces its own). */
    static Map<String, String> contents(Path tree) throws Exception {
        Map<String, String> contents = new TreeMap<>();
        TreeDigest.of(tree).forEach((path, digest) -> contents.put(path, digest.substring(digest.indexOf(' ') + 1)));
        return contents;
    }

    /** Key by key: value, create/mod revision, version and lease as the seed read them. */
    static void assertSameKeys(Keyspace expected, Keyspace actual) {
        assertEquals(expected.entries().keySet(), actual.entries().keySet(), "key set");
        expected.entries()
                .forEach((key, entry) -> assertEquals(entry, actual.entries().get(key), "key " + key));
    }
}
