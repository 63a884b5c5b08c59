package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * etcd 3.6/3.7's own start race (docs/etcd-start-panic.md): an etcd that dies at start with the panic the catalog
 * lists for its line ({@code line.startRaces}) wrote nothing, and the runner starts it again on the same data. The
 * race itself is 1 in thousands of starts, so the newest etcd here is a wrapper that prints etcd's panic line and
 * exits 2 on its first server starts, then runs the real binary.
 */
class StartRaceIT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void anEtcdThatDiedInItsOwnStartRaceIsStartedAgainOnTheSameData(@TempDir Path dir) throws Exception {
        Release from = EtcdFixture.V3_RELEASES.get(EtcdFixture.V3_RELEASES.size() - 2);
        Release to = EtcdFixture.newest();
        Path data = dir.resolve("data");
        Keyspace before = etcd.seed(from, data, 100);
        try (RunnerProcess runner =
                RunnerProcess.run(withBinDir(RunnerArgs.migrate(data, to.version()), racingBinDir(dir, to, 1)))) {
            assertEquals(0, runner.exitCode(), runner.output());
            assertEquals(1, raceNotes(runner).size(), runner.output());
            assertEquals(2, starts(runner, to), runner.output());
        }
        etcd.assertMigratedTo(to, data, before);
    }

    @Test
    void anEtcdThatKeepsDyingInItsStartRaceFailsTheStepAfterTwoMoreStarts(@TempDir Path dir) throws Exception {
        Release from = EtcdFixture.V3_RELEASES.get(EtcdFixture.V3_RELEASES.size() - 2);
        Release to = EtcdFixture.newest();
        Path data = dir.resolve("data");
        etcd.seed(from, data, 20);
        try (RunnerProcess runner =
                RunnerProcess.run(withBinDir(RunnerArgs.migrate(data, to.version()), racingBinDir(dir, to, 99)))) {
            assertNotEquals(0, runner.exitCode(), runner.output());
            assertEquals(2, raceNotes(runner).size(), runner.output());
            assertEquals(3, starts(runner, to), runner.output());
            assertEquals(from.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
        }
    }

    /** The provisioned binaries, linked, except the newest etcd: it races {@code times} times, then runs. */
    private static Path racingBinDir(Path dir, Release racing, int times) throws Exception {
        Path bin = Permissions.ownerOnlyDir(dir.resolve("bin"));
        String name = "etcd-" + racing.version();
        try (Stream<Path> files = Files.list(EtcdFixture.binDir())) {
            for (Path f : files.toList()) {
                if (!f.getFileName().toString().equals(name)) Files.createSymbolicLink(bin.resolve(f.getFileName()), f);
            }
        }
        Path real = EtcdFixture.binDir().resolve(name).toRealPath();
        Path count = dir.resolve("races");
        String line = "{\"level\":\"panic\",\"logger\":\"raft\",\"msg\":\""
                + racing.line().startRaces().getFirst()
                + " [1, 320): requested index is unavailable due to compaction\"}";
        Path wrapper = bin.resolve(name);
        Files.writeString(
                wrapper,
                "#!/bin/sh\n"
                        + "case \"$1\" in --version|version) exec '" + real + "' \"$@\";; esac\n"
                        + "n=$(cat '" + count + "' 2>/dev/null || echo 0)\n"
                        + "if [ \"$n\" -lt " + times + " ]; then\n"
                        + "  echo $((n + 1)) > '" + count + "'\n"
                        + "  echo '" + line + "' >&2\n"
                        + "  exit 2\n"
                        + "fi\n"
                        + "exec '" + real + "' \"$@\"\n");
        Files.setPosixFilePermissions(wrapper, PosixFilePermissions.fromString("rwx------"));
        return bin;
    }

    private static List<String> withBinDir(List<String> args, Path bin) {
        List<String> out = new ArrayList<>(args);
        out.set(out.indexOf("--bin-dir") + 1, bin.toString());
        return out;
    }

    private static List<JsonNode> raceNotes(RunnerProcess runner) {
        return runner.events("note").stream()
                .filter(e -> e.path("message").asText().contains("start race"))
                .toList();
    }

    private static long starts(RunnerProcess runner, Release release) {
        return runner.events("etcd-started").stream()
                .filter(e -> e.path("version").asText().equals(release.version()))
                .count();
    }
}
