package dev.etcdmigrate.it.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Started as root on a data dir another uid owns, the runner and its etcd run as that uid. */
class DataDirOwnerIT {

    private static final int UID = 1000;

    /** The data is one minor below the newest, so a migration has a step to run as the owner. */
    private final Release previous = EtcdFixture.V3_RELEASES.get(EtcdFixture.V3_RELEASES.size() - 2);

    private final Release newest = EtcdFixture.newest();

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void aMigrationOnADataDirOwnedByAnotherUidRunsAsThatUid(@TempDir Path dir) throws Exception {
        Path data = dataOwnedByUid(dir, 100);

        List<String> args = new ArrayList<>(RunnerArgs.migrateAndServe(data, newest.version(), FreePorts.pick()));
        args.addAll(
                args.indexOf("--"),
                List.of("--bin-dir", binDirReachableBy(dir, previous, newest).toString()));

        try (RunnerProcess runner = RunnerProcess.start(args, Map.of())) {
            runner.awaitEvent(
                    "owner-adopted",
                    e -> e.path("uid").asInt() == UID && e.path("gid").asInt() == UID,
                    Duration.ofMinutes(1));
            runner.awaitEvent("exec", Duration.ofMinutes(2));
            String uids = awaitUidLine(runner);
            assertTrue(uids.matches("Uid:\\s+" + UID + "\\s+" + UID + "\\s+" + UID + "\\s+" + UID), uids);
            runner.process().toHandle().destroy();
            assertEquals(143, runner.awaitExit(Duration.ofSeconds(10)));
        }
        try (Stream<Path> paths = Files.walk(data)) {
            assertEquals(
                    List.of(),
                    paths.filter(p -> owner(p) != UID).map(Path::toString).toList(),
                    "files not owned by " + UID);
        }
        assertEquals(newest.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
    }

    /**
     * The runner refuses, before touching anything, a bin dir the owner cannot reach: a private home
     * (/root is 0700) is where a provisioned cache often lives.
     */
    @Test
    void aBinDirTheOwnerCannotReachIsRefused(@TempDir Path dir) throws Exception {
        Path data = dataOwnedByUid(dir, 20);
        Path privateHome = Files.createDirectory(
                dir.resolve("home"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Path bin = binDirReachableBy(privateHome, previous, newest);
        Map<String, String> before = TreeDigest.of(data);

        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, newest.version()));
        args.addAll(List.of("--bin-dir", bin.toString()));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(2, runner.exitCode(), runner.output());
            JsonNode refused = runner.ending();
            assertEquals("refused", refused.path("event").asText(), runner.output());
            assertEquals(2, refused.path("exitCode").asInt(), runner.output());
            String reason = refused.path("reason").asText();
            assertTrue(
                    reason.contains(bin + "/"),
                    "the refusal names a binary in the unreachable bin dir: " + runner.output());
            assertTrue(reason.contains(String.valueOf(UID)), "the refusal names the uid: " + runner.output());
            assertEquals(
                    UID,
                    runner.events("owner-adopted").getFirst().path("uid").asInt(),
                    "it ran as that uid when it looked");
            assertEquals(0, runner.count("etcd-started"), "no etcd was started");
        }
        assertEquals(before, TreeDigest.of(data), "byte-identical");
    }

    /**
     * dir/data written by the previous release with {@code keys} keys, every file owned by {@link #UID};
     * dir itself opened up so that uid can reach it. Skips the test unless it runs as root.
     */
    private Path dataOwnedByUid(Path dir, int keys) throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "switching users needs root (CI runs as root)");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path data = dir.resolve("data");
        etcd.seed(previous, data, keys);
        chownTree(data, UID);
        return data;
    }

    /** dir/bin (mode 0755) with the tools of the given releases, hard-linked or copied from the provisioned bin dir. */
    private static Path binDirReachableBy(Path dir, Release... releases) throws IOException {
        Path bin = Files.createDirectory(
                dir.resolve("bin"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
        for (Release release : releases) {
            for (String tool : release.toolNames()) {
                String name = tool + "-" + release.version();
                Path source = EtcdFixture.binDir().resolve(name);
                try {
                    Files.createLink(bin.resolve(name), source);
                } catch (IOException | UnsupportedOperationException e) { // another file system
                    Files.copy(source, bin.resolve(name), StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
        return bin;
    }

    /** The exec'd etcd's credentials, once /proc shows the etcd binary; its output if it died instead. */
    private static String awaitUidLine(RunnerProcess runner) throws Exception {
        Path proc = Path.of("/proc/" + runner.pid());
        return Poll.until(Duration.ofSeconds(30), Duration.ofMillis(10), "PID " + runner.pid() + " as etcd", () -> {
            try {
                if (Files.readSymbolicLink(proc.resolve("exe"))
                        .getFileName()
                        .toString()
                        .startsWith("etcd-")) {
                    return Files.readAllLines(proc.resolve("status")).stream()
                            .filter(l -> l.startsWith("Uid:"))
                            .findFirst()
                            .orElseThrow();
                }
            } catch (NoSuchFileException e) {
                if (!runner.process().isAlive()) {
                    throw new AssertionError("the exec'd etcd exited with " + runner.awaitExit(Duration.ofSeconds(5))
                            + ":\n" + runner.output());
                }
            }
            return null;
        });
    }

    private static void chownTree(Path root, int uid) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path p : paths.toList()) {
                Files.setAttribute(p, "unix:uid", uid);
                Files.setAttribute(p, "unix:gid", uid);
            }
        }
    }

    private static int owner(Path p) {
        try {
            return (Integer) Files.getAttribute(p, "unix:uid");
        } catch (IOException e) {
            return -1;
        }
    }
}
