package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.it.migrate.ConvertToV3IT;
import dev.etcdmigrate.it.support.Ballast;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Mount;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.it.support.V2Dataset;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The disk fills up during a step: the data dir sits on a small tmpfs, and a ballast file leaves less
 * room than the step needs. The conversion of etcd2 data works on copies until its swap, so the data
 * dir must come out byte-identical, with no copy left behind and nothing running on it; with the
 * ballast gone, a rerun converges.
 */
class DiskFullIT {

    private static final Release RELEASE = EtcdFixture.release("3.4.23");

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    /**
     * Free space left: half the member dir (the runner's copy of it fails), or the member dir and 1 MB:
     * the copy fits, then etcd wants 64 MB WAL segments; either the etcd restarting on the copy dies (it
     * does when its WAL reader cannot preallocate) or, when it only warns, a later write fails. (With 32 MB
     * the conversion completes: it frees the work copy's spent WAL and restores without a snapshot copy.)
     */
    @ParameterizedTest(name = "full {0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "while copying member/               | 50  | 0  | false",
                "after copying member/               | 100 | 1  | true"
            })
    void aFullDiskFailsTheStepCleanlyAndARerunConverges(
            String when, long memberPercent, long extraMb, boolean copied, @TempDir Path dir) throws Exception {
        Path fs = Files.createDirectories(dir.resolve("fs"));
        try (Mount tmpfs = Mount.tmpfs(fs, 448)) {
            Path data = fs.resolve("data");
            V2Dataset written = ConvertToV3IT.writeEtcd2(etcd, RELEASE, data, 300);
            long free = Ballast.sizeOf(data.resolve("member")) * memberPercent / 100 + extraMb * Ballast.MB;
            Path ballast =
                    Ballast.fill(fs.resolve("ballast"), Files.getFileStore(fs).getUsableSpace() - free);
            Map<String, String> before = TreeDigest.of(data);

            try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, RELEASE.version()))) {
                assertEquals(1, runner.exitCode(), runner.output());
                String output = runner.output();
                assertEquals(1, runner.ending().path("exitCode").asInt(), output);
                List<JsonNode> failed = runner.events("step-failed");
                assertEquals(1, failed.size(), output);
                JsonNode step = failed.getFirst();
                assertEquals(
                        "1/1 convert-to-v3",
                        step.path("index").asInt() + "/" + step.path("total").asInt() + " "
                                + step.path("kind").asText(),
                        output);
                assertEquals(
                        RELEASE.version() + "/etcd2",
                        step.path("versionTxt").asText(),
                        "what version.txt still says:\n" + output);
                String reason = step.path("reason").asText();
                Path work = data.resolve(".etcd-migrate/staging/work");
                List<JsonNode> onCopy = runner.events("etcd-started").stream()
                        .filter(e -> e.path("dataDir").asText().equals(work.toString()))
                        .toList();
                if (copied) {
                    // the copy fitted: etcd started on it and met the full disk (it died, or a later write failed)
                    assertTrue(onCopy.size() >= 1, "failed " + when + ":\n" + output);
                    assertTrue(
                            reason.toLowerCase(Locale.ROOT).contains("no space left on device")
                                    || runner.childLines("etcd-").stream()
                                            .anyMatch(l -> l.toString()
                                                    .toLowerCase(Locale.ROOT)
                                                    .contains("no space left on device")),
                            output);
                } else {
                    assertEquals(0, runner.count("etcd-started"), "failed " + when + ":\n" + output);
                    assertTrue(
                            reason.contains(data.resolve("member").toString())
                                    && reason.contains(work.resolve("member").toString())
                                    && reason.toLowerCase(Locale.ROOT).contains("no space left on device"),
                            "failed " + when + ":\n" + output);
                }
                var discarded = runner.events("work-discarded");
                assertEquals(1, discarded.size(), output);
                assertEquals(1, discarded.getFirst().path("index").asInt());
                assertTrue(
                        java.util.stream.StreamSupport.stream(
                                        discarded.getFirst().path("removed").spliterator(), false)
                                .anyMatch(r -> r.asText().equals(".etcd-migrate/staging")),
                        output);
            }
            assertEquals(List.of(), processesUsing(fs), "nothing runs on the data any more");
            assertEquals(before, TreeDigest.of(data), "byte-identical, no copy or lock left");

            Files.delete(ballast);
            try (RunnerProcess rerun = RunnerProcess.run(RunnerArgs.migrate(data, RELEASE.version()))) {
                assertEquals(0, rerun.exitCode(), rerun.output());
            }
            assertEquals(RELEASE.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
            ConvertToV3IT.assertCarried(written, etcd.read(RELEASE, data));
        }
    }

    /** Processes with a file open, or their working directory, under root. */
    private static List<String> processesUsing(Path root) {
        return ProcessHandle.allProcesses()
                .filter(p -> uses(p.pid(), root))
                .map(p -> p.pid() + " " + p.info().commandLine().orElse("?"))
                .toList();
    }

    private static boolean uses(long pid, Path root) {
        Path proc = Path.of("/proc", String.valueOf(pid));
        try (Stream<Path> fds = Files.list(proc.resolve("fd"))) {
            return Files.readSymbolicLink(proc.resolve("cwd")).startsWith(root)
                    || fds.anyMatch(fd -> {
                        try {
                            return Files.readSymbolicLink(fd).startsWith(root);
                        } catch (IOException gone) {
                            return false;
                        }
                    });
        } catch (IOException | RuntimeException gone) {
            return false; // exited meanwhile
        }
    }
}
