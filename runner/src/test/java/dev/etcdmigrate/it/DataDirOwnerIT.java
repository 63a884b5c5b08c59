package dev.etcdmigrate.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.FreePorts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Started as root on a data dir another uid owns, the runner and its etcd run as that uid. */
class DataDirOwnerIT {

    private static final int UID = 1000;

    private final EtcdFixture etcd = new EtcdFixture();

    @AfterEach
    void stopAll() {
        etcd.close();
    }

    @Test
    void aMigrationOnADataDirOwnedByAnotherUidRunsAsThatUid(@TempDir Path dir) throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "switching users needs root (CI runs as root)");
        List<Release> releases = EtcdFixture.V3_RELEASES;
        Release previous = releases.get(releases.size() - 2);
        Release newest = EtcdFixture.newest();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x")); // let the uid reach its dir
        Path data = dir.resolve("data");
        etcd.seed(previous, data, 100);
        chownTree(data, UID);

        try (RunnerProcess runner = RunnerProcess.start(RunnerArgs.migrateAndServe(data, newest.version(), FreePorts.pick()), Map.of())) {
            runner.awaitLine("running as that user", Duration.ofMinutes(1));
            runner.awaitLine("\\[etcd-migrate\\] exec ", Duration.ofMinutes(2));
            String uids = awaitUidLine(runner.pid());
            assertTrue(uids.matches("Uid:\\s+" + UID + "\\s+" + UID + "\\s+" + UID + "\\s+" + UID), uids);
            runner.process().toHandle().destroy();
            assertEquals(143, runner.awaitExit(Duration.ofSeconds(10)));
        }
        try (Stream<Path> paths = Files.walk(data)) {
            assertEquals(List.of(), paths.filter(p -> owner(p) != UID).map(Path::toString).toList(), "files not owned by " + UID);
        }
        assertEquals(newest.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
    }

    /** The exec'd etcd's credentials, once /proc shows the etcd binary. */
    private static String awaitUidLine(long pid) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (System.nanoTime() < end) {
            if (Files.readSymbolicLink(Path.of("/proc/" + pid + "/exe")).getFileName().toString().startsWith("etcd-")) {
                return Files.readAllLines(Path.of("/proc/" + pid + "/status")).stream().filter(l -> l.startsWith("Uid:"))
                        .findFirst().orElseThrow();
            }
            Thread.sleep(10); // poll interval of a deadline-bound wait
        }
        throw new AssertionError("PID " + pid + " never became etcd");
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
