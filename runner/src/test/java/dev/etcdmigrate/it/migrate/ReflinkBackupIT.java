package dev.etcdmigrate.it.migrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.it.support.Ballast;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Mount;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backups by clone: on XFS with reflinks, an online downgrade whose volume has room for half a copy of
 * member/ (a plain copy would be refused up front) completes, its backup holds the member dir as it
 * was, and the backup cost far fewer blocks than its size.
 */
class ReflinkBackupIT {

    private static final Release FROM = EtcdFixture.release("3.7.3");
    private static final Release TO = EtcdFixture.release("3.6.16");

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void anOnlineDowngradeOnXfsClonesItsBackupAndFitsWhereACopyWouldNot(@TempDir Path dir) throws Exception {
        Path fs = Files.createDirectories(dir.resolve("fs"));
        try (Mount xfs = Mount.xfs(fs, dir.resolve("xfs.img"), 1024)) {
            Path data = fs.resolve("data");
            Keyspace before = etcd.seed(FROM, data, 2000);
            long member = Ballast.sizeOf(data.resolve("member"));
            Path ballast = Ballast.fill(
                    fs.resolve("ballast"), Files.getFileStore(fs).getUsableSpace() - member / 2 - 200 * Ballast.MB);
            long freeBefore = Files.getFileStore(fs).getUsableSpace();

            try (RunnerProcess runner = RunnerProcess.run(RunnerArgs.migrate(data, TO.version()))) {
                assertEquals(0, runner.exitCode(), runner.output());
                List<JsonNode> checked = runner.events("space-checked");
                assertEquals(1, checked.size(), runner.output());
                assertTrue(
                        checked.getFirst().path("clones").asBoolean(),
                        "the file system clones files:\n" + runner.output());
                assertEquals(data.toString(), checked.getFirst().path("dir").asText(), runner.output());
                List<JsonNode> made = runner.events("backup-made");
                assertEquals(1, made.size(), runner.output());
                assertEquals(
                        FROM.version() + "/etcd3",
                        made.getFirst().path("version").asText(),
                        runner.output());
                assertEquals(
                        "cloned",
                        made.getFirst().path("how").asText(),
                        "every file cloned (FICLONE), none copied byte by byte");
            }
            assertEquals(TO.version() + "/etcd3", Files.readString(data.resolve("version.txt")));
            assertEquals(
                    java.util.Map.of(),
                    before.differences(etcd.read(TO, data).keyspace()),
                    "served by " + TO.version());

            List<Path> backups;
            try (Stream<Path> list = Files.list(data.resolve(".etcd-migrate/backups"))) {
                backups = list.toList();
            }
            assertEquals(1, backups.size(), backups.toString());
            assertEquals(
                    member, Ballast.sizeOf(backups.getFirst().resolve("member")), "the backup is the whole member dir");
            assertEquals(
                    FROM.version() + "/etcd3",
                    Files.readString(backups.getFirst().resolve("version.txt")));
            long used = freeBefore - Files.getFileStore(fs).getUsableSpace();
            // Free space counts, besides the backup, what the private etcds wrote meanwhile: when etcd replaces a file
            // (e.g. cuts a new 64 MB WAL segment and purges the old one) the backup alone keeps the old blocks. A byte
            // copy costs the whole member dir on top of that; a clone never more than what etcd replaced.
            System.out.printf(
                    "ReflinkBackupIT: member/ %d MiB, backup %d MiB, free space used by the whole downgrade %d MiB%n",
                    member / Ballast.MB, member / Ballast.MB, used / Ballast.MB);
            assertTrue(
                    used < member,
                    "the clone shares blocks: " + used / Ballast.MB + " MiB used for a " + member / Ballast.MB
                            + " MiB backup");
            Files.delete(ballast);
        }
    }
}
