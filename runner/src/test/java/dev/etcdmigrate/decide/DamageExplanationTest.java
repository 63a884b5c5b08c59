package dev.etcdmigrate.decide;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.cli.MigrateFlags;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.RefusedException;
import dev.etcdmigrate.it.support.RunnerArgs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reason a run on damaged data ends with: the file, what changed, and the way back this member has. */
class DamageExplanationTest {

    private static final String PANIC =
            "step 1/1 failed: etcd 3.5.35 exited before it accepted a write: \"panic: assertion failed: Page expected"
                    + " to be: 3, but self identifies as 0\"; version.txt still says 3.4.23/etcd3";

    private static RunConfig options(Path data, String... more) throws Exception {
        List<String> args = new java.util.ArrayList<>(RunnerArgs.flags(data, "3.5.35", "m0"));
        args.addAll(List.of("--initial-cluster", "m0=https://10.0.0.1:2380,m1=https://10.0.0.2:2380"));
        args.addAll(List.of(more));
        return MigrateFlags.read(ParsedArgs.parse(MigrateFlags.FLAGS, args, Map.of()));
    }

    @Test
    void etcdsPanicOnADamagedDbNamesTheDbAndTheNewestBackup(@TempDir Path data) throws Exception {
        Path older =
                Files.createDirectories(data.resolve(".etcd-migrate/backups/20261101T000000Z-3.3.27-etcd3/member"));
        Path newer =
                Files.createDirectories(data.resolve(".etcd-migrate/backups/20261125T000000Z-3.4.23-etcd3/member"));
        Files.createDirectories(data.resolve("member/snap"));
        MigrateException e = DamageExplanation.explain(
                new FailedException(PANIC), new DataDir(data), options(data), Catalog.bundled());
        assertEquals(ExitStatus.FAILED, e.status());
        assertTrue(e.getMessage().startsWith(PANIC), e.getMessage());
        assertTrue(
                e.getMessage().contains("The data is damaged: member/snap/db (etcd said \"Page expected to be: 3,"),
                e.getMessage());
        assertTrue(e.getMessage().contains("newest backup " + newer.getParent()), e.getMessage());
        assertTrue(!e.getMessage().contains(older.getParent().toString()), e.getMessage());
    }

    @Test
    void withoutABackupTheWayBackIsASnapshotRestoreForThisMembersNameAndPeers(@TempDir Path data) throws Exception {
        Files.createDirectories(data.resolve("member/snap"));
        MigrateException e = DamageExplanation.explain(
                new FailedException(PANIC), new DataDir(data), options(data), Catalog.bundled());
        assertTrue(
                e.getMessage()
                        .contains("`etcdutl snapshot restore SNAPSHOT.db --name m0 --initial-cluster"
                                + " m0=https://10.0.0.1:2380,m1=https://10.0.0.2:2380 --initial-advertise-peer-urls"
                                + " https://10.0.0.1:2380 --data-dir " + data + ".restored`"),
                e.getMessage());
        assertTrue(e.getMessage().contains("etcdctl member remove"), "two members: " + e.getMessage());
    }

    @Test
    void aFailureThatIsNotDamageStaysAsItWas(@TempDir Path data) throws Exception {
        RefusedException refused = new RefusedException("the transition 3.4 -> 3.7 skips a minor");
        assertSame(refused, DamageExplanation.explain(refused, new DataDir(data), options(data), Catalog.bundled()));
    }
}
