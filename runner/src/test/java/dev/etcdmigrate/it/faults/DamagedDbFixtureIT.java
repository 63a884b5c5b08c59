package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.it.data.DataClaimsIT;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Six dbs of a 3.5.35 member with a few bits flipped inside one page (the shared fixture damaged-db-3.5.35.tgz,
 * its README: what bbolt's own check and etcd 3.6.16's start say of each). Five break a leaf page's key order
 * (bbolt's check rejects them, etcd panics while it collects the free pages), one breaks a value etcd's start
 * decodes (bbolt's check passes, etcd dies of a fault). Each, in place of the healthy member/snap/db, is refused
 * before any etcd runs, naming the file, the page and the way back; inspect shows the same finding; the healthy
 * data dir still migrates.
 */
class DamagedDbFixtureIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TARGET = "3.6.16";
    private static Path fixture;

    /**
     * The shared fixtures dir: {@code -Dshared.fixtures}, by default the {@code shared/fixtures} beside the
     * repository (where CI clones it). A missing fixture fails the class: the check would otherwise go unproven.
     */
    @BeforeAll
    static void unpack(@TempDir Path dir) throws Exception {
        Path fixtures = Path.of(System.getProperty("shared.fixtures", "../../shared/fixtures"))
                .toAbsolutePath()
                .normalize();
        Path tgz = fixtures.resolve("damaged-db-3.5.35.tgz");
        assertTrue(
                Files.isRegularFile(tgz),
                "the fixture " + tgz + " is missing: clone the shared dir beside the repository, or set"
                        + " -Dshared.fixtures to the dir that holds damaged-db-3.5.35.tgz");
        Process tar = new ProcessBuilder("tar", "-xzf", tgz.toString(), "-C", dir.toString())
                .redirectErrorStream(true)
                .start();
        try {
            String output = new String(tar.getInputStream().readAllBytes());
            assertTrue(tar.waitFor(60, TimeUnit.SECONDS), "tar within 60 s");
            assertEquals(0, tar.exitValue(), output);
        } finally {
            tar.destroyForcibly();
            tar.waitFor();
        }
        fixture = dir;
    }

    /** A copy of the healthy data dir with {@code db} in place of its member/snap/db (none: the healthy one). */
    private static Path dataDir(Path dir, String db) throws Exception {
        Path data = dir.resolve("data");
        Path healthy = fixture.resolve("healthy-3.5.35");
        try (Stream<Path> tree = Files.walk(healthy)) {
            for (Path p : tree.toList()) {
                Path to = data.resolve(healthy.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(to);
                else Files.copy(p, to, StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
        if (db != null)
            Files.copy(
                    fixture.resolve(db),
                    data.resolve("member/snap/db"),
                    StandardCopyOption.REPLACE_EXISTING,
                    StandardCopyOption.COPY_ATTRIBUTES);
        return data;
    }

    private static List<String> migrate(Path data) {
        List<String> args = new ArrayList<>(DataClaimsIT.named(RunnerArgs.common("migrate", data, TARGET), "bars"));
        args.add("--no-exec");
        return args;
    }

    /** inspect -o json with migrate's flags. */
    private static JsonNode inspect(Path data) throws Exception {
        List<String> args = new ArrayList<>(DataClaimsIT.named(RunnerArgs.common("inspect", data, TARGET), "bars"));
        args.addAll(List.of("-o", "json"));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(0, runner.exitCode(), runner.output());
            return JSON.readTree(runner.output()
                    .lines()
                    .filter(l -> l.startsWith("{\"schema\""))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no report: " + runner.output())));
        }
    }

    /** The page each README row names: the page whose bytes changed. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"db-2001, 2", "db-2002, 2", "db-2005, 2", "db-2013, 2", "db-2022, 6", "db-2004, 2"})
    void aDamagedDbIsRefusedBeforeAnyEtcdRuns(String db, long page, @TempDir Path dir) throws Exception {
        Path data = dataDir(dir, db);
        String finding = "member/snap/db (page " + page + ")";
        RunnerProcess runner = DataClaimsIT.assertRefused(
                migrate(data),
                data,
                finding,
                "nothing was changed",
                "The way back",
                "etcdutl snapshot restore",
                "--name bars");
        String reason = runner.ending().path("reason").asText();
        assertEquals(reason.indexOf(finding), reason.lastIndexOf(finding), "named once: " + reason);
        JsonNode report = inspect(data);
        assertTrue(report.path("damage").path("files").toString().contains(finding), report.toString());
        assertTrue(DataClaimsIT.target(report, TARGET).path("refused").asText().contains(finding), report.toString());
    }

    @Test
    void theHealthyDataDirMigrates(@TempDir Path dir) throws Exception {
        Path data = dataDir(dir, null);
        try (RunnerProcess runner = RunnerProcess.run(migrate(data))) {
            assertEquals(0, runner.exitCode(), runner.output());
        }
        assertEquals(
                TARGET + "/etcd3", Files.readString(data.resolve("version.txt")).strip());
    }
}
