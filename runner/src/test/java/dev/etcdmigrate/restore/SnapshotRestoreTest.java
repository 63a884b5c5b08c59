package dev.etcdmigrate.restore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.cli.MigrateFlags;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.RefusedException;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.RestoreEvent;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.BboltFixture;
import dev.etcdmigrate.step.EtcdOperations;
import dev.etcdmigrate.version.DataVersion;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The restore's script over a fake restore tool: once per hash, every state of the marker resumed, the refusals. */
class SnapshotRestoreTest {

    @TempDir
    Path dir;

    private final List<String> calls = new ArrayList<>();
    private final List<Event> events = new ArrayList<>();

    /** A fake of etcd's one restore call: writes a member dir into the staging dir, as the tool does. */
    private final EtcdOperations fake = (EtcdOperations) Proxy.newProxyInstance(
            EtcdOperations.class.getClassLoader(), new Class<?>[] {EtcdOperations.class}, (proxy, method, args) -> {
                if (!method.getName().equals("restoreNewCluster"))
                    throw new AssertionError("a restore asks etcd only to restore, not " + method.getName());
                Release release = (Release) args[0];
                Path into = (Path) args[2];
                calls.add(
                        "restore " + release.version() + " token " + args[3] + " bump " + args[4] + " hash " + args[5]);
                Files.createDirectories(into.resolve("member/snap"));
                Files.createDirectories(into.resolve("member/wal"));
                Files.writeString(into.resolve("member/snap/db"), "restored");
                return null;
            });

    private Path snapshot(String clusterVersion) throws Exception {
        Path file = dir.resolve("snapshot-" + clusterVersion + ".db");
        Files.write(
                file,
                BboltFixture.db(
                        Map.of("cluster", Map.of("clusterVersion", clusterVersion.getBytes(StandardCharsets.UTF_8)))));
        return file;
    }

    private static String sha(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }

    private Path data() {
        return dir.resolve("data");
    }

    private SnapshotRestore restore(Path snapshot, String sha, String... more) throws Exception {
        return restore("3.7.3", walk -> {}, snapshot, sha, more);
    }

    /** What a start's check of the walk after the restore is given: the version the restored data records. */
    private interface WalkCheck {
        void check(DataVersion restored) throws MigrateException;
    }

    /** A member of a three-member cluster (--initial-cluster), heading to {@code target}. */
    private SnapshotRestore member(String target, WalkCheck walk, Path snapshot, String sha, String... more)
            throws Exception {
        List<String> args = new ArrayList<>(List.of(
                "--initial-cluster",
                "m0=http://127.0.0.1:2380,m1=http://127.0.0.2:2380,m2=http://127.0.0.3:2380",
                "--initial-advertise-peer-urls",
                "http://127.0.0.1:2380"));
        args.addAll(List.of(more));
        return restore(target, walk, snapshot, sha, args.toArray(String[]::new));
    }

    private SnapshotRestore restore(String target, WalkCheck walk, Path snapshot, String sha, String... more)
            throws Exception {
        List<String> args = new ArrayList<>(RunnerArgs.flags(data(), target, "m0"));
        args.addAll(List.of("--restore-snapshot", snapshot.toString(), "--restore-sha256", sha));
        args.addAll(List.of(more));
        RunConfig options = MigrateFlags.read(ParsedArgs.parse(MigrateFlags.FLAGS, args, Map.of()));
        Log log = Log.silent();
        log.subscribe(events::add);
        return new SnapshotRestore(
                options,
                new DataDir(data()),
                Catalog.bundled(),
                new SnapshotRestore.Tools() {
                    @Override
                    public EtcdOperations operations() {
                        return fake;
                    }

                    @Override
                    public void requireTool(Release release) {}

                    @Override
                    public void checkWalk(DataVersion restored) throws MigrateException {
                        walk.check(restored);
                    }
                },
                log);
    }

    private void oldMember() throws Exception {
        Files.createDirectories(data().resolve("member/snap"));
        Files.writeString(data().resolve("member/snap/db"), "old data");
        Files.writeString(data().resolve("version.txt"), "3.5.35/etcd3");
    }

    private Path backup(String sha) {
        return data().resolve(".etcd-migrate/restore-backups/" + sha.substring(0, 12) + "/member");
    }

    private String marker() throws Exception {
        return Files.readString(data().resolve(".etcd-migrate/restore"));
    }

    @Test
    void restoresOnceKeepingTheMemberDir() throws Exception {
        oldMember();
        // a restart record the member held in the cluster the restore replaces
        Files.writeString(
                Files.createDirectories(data().resolve(".etcd-migrate")).resolve("restart-record"), "42");
        Path snapshot = snapshot("3.5.0");
        String sha = sha(snapshot);
        restore(snapshot, sha).run();
        assertEquals(
                List.of("restore 3.5.35 token etcd-restore-" + sha.substring(0, 16) + " bump 1000000000 hash false"),
                calls);
        assertEquals("restored", Files.readString(data().resolve("member/snap/db")));
        assertEquals("old data", Files.readString(backup(sha).resolve("snap/db")));
        assertEquals("3.5.35/etcd3", Files.readString(data().resolve("version.txt")));
        assertTrue(marker().contains("state=restored"), marker());
        assertTrue(
                marker().contains("backup=.etcd-migrate/restore-backups/" + sha.substring(0, 12) + "/member\n"),
                "relative to the data dir, wherever it is mounted: " + marker());
        assertFalse(Files.exists(data().resolve(".etcd-migrate/restore-staging")));
        assertFalse(Files.exists(data().resolve(".etcd-migrate/restart-record")), "the old cluster's record dropped");

        restore(snapshot, sha).run(); // a restarted pod: the restored data stays
        assertEquals(1, calls.size(), "no second restore");
        assertTrue(events.stream().anyMatch(e -> e instanceof RestoreEvent.AlreadyRestored), events.toString());
        assertEquals("restored", Files.readString(data().resolve("member/snap/db")));
    }

    @Test
    void aPreviewSaysWhatTheRestoreWouldDoAndChangesNothing() throws Exception {
        oldMember();
        Path snapshot = snapshot("3.5.0");
        String sha = sha(snapshot);
        Map<String, String> before = TreeDigest.of(data());
        RestoreEvent.RestorePlanned planned =
                restore(snapshot, sha).preview().orElseThrow().event();
        assertEquals(before, TreeDigest.of(data()), "nothing changed");
        assertEquals(List.of(), calls, "no restore ran");
        assertEquals(List.of(), events, "nothing reported as done");
        assertEquals(backup(sha).toString(), planned.backup());
        assertEquals("m0", planned.member());
        assertEquals("etcd-restore-" + sha.substring(0, 16), planned.token());
        assertEquals("3.5.35/etcd3", planned.restoredVersion());
        assertEquals(1_000_000_000L, planned.bumpRevision());
        assertFalse(planned.resumes());

        // an interrupted restore of the same snapshot is finished, not begun again
        new RestoreMarker(
                        sha,
                        RestoreMarker.State.RESTORING,
                        java.util.Optional.of(backup(sha)),
                        "etcd-restore-x",
                        java.util.Optional.empty())
                .write(Files.createDirectories(data().resolve(".etcd-migrate")).resolve("restore"));
        assertTrue(restore(snapshot, sha).preview().orElseThrow().event().resumes());

        restore(snapshot, sha).run();
        assertTrue(restore(snapshot, sha).preview().isEmpty(), "restored: a start restores nothing");
        // a new snapshot: the same refusal as a start's, nothing changed, for another file than the hash names
        Path other = snapshot("3.6.0");
        Map<String, String> restored = TreeDigest.of(data());
        assertThrows(
                RefusedException.class, () -> restore(other, "0".repeat(64)).preview());
        assertEquals(restored, TreeDigest.of(data()));
    }

    @Test
    void aNewHashIsANewRestore() throws Exception {
        oldMember();
        Path first = snapshot("3.5.0");
        restore(first, sha(first)).run();
        Path second = snapshot("3.6.0");
        restore(second, sha(second)).run();
        assertEquals(2, calls.size(), calls.toString());
        assertTrue(calls.get(1).startsWith("restore 3.6.16 "), calls.toString());
        assertEquals("restored", Files.readString(backup(sha(second)).resolve("snap/db")), "the first restore kept");
        assertEquals("old data", Files.readString(backup(sha(first)).resolve("snap/db")), "the data before both");
    }

    /** A crash after the member dir was moved aside, before the restore was renamed into place. */
    @Test
    void resumesWithTheBackupMadeAndNoMemberDir() throws Exception {
        oldMember();
        Path snapshot = snapshot("3.5.0");
        String sha = sha(snapshot);
        new RestoreMarker(
                        sha,
                        RestoreMarker.State.RESTORING,
                        java.util.Optional.of(backup(sha)),
                        "etcd-restore-x",
                        java.util.Optional.empty())
                .write(Files.createDirectories(data().resolve(".etcd-migrate")).resolve("restore"));
        Files.createDirectories(backup(sha).getParent());
        Files.move(data().resolve("member"), backup(sha));
        Files.createDirectories(data().resolve(".etcd-migrate/restore-staging/member/snap")); // the tool's half
        restore(snapshot, sha).run();
        assertEquals(List.of("restore 3.5.35 token etcd-restore-x bump 1000000000 hash false"), calls);
        assertEquals("old data", Files.readString(backup(sha).resolve("snap/db")), "the backup untouched");
        assertEquals("restored", Files.readString(data().resolve("member/snap/db")));
        assertTrue(marker().contains("state=restored"));
    }

    /**
     * A crash after the restore was renamed into place, before the marker said so: nothing is restored again, and the
     * staging dir the rename emptied is removed.
     */
    @Test
    void resumesWithTheRestoreInPlace() throws Exception {
        oldMember();
        Path snapshot = snapshot("3.5.0");
        String sha = sha(snapshot);
        new RestoreMarker(
                        sha,
                        RestoreMarker.State.RESTORING,
                        java.util.Optional.of(backup(sha)),
                        "etcd-restore-x",
                        java.util.Optional.empty())
                .write(Files.createDirectories(data().resolve(".etcd-migrate")).resolve("restore"));
        Files.createDirectories(backup(sha).getParent());
        Files.move(data().resolve("member"), backup(sha));
        Files.createDirectories(data().resolve("member/snap"));
        Files.writeString(data().resolve("member/snap/db"), "the complete restore");
        Files.createDirectories(data().resolve(".etcd-migrate/restore-staging")); // emptied by the rename, not deleted
        restore(snapshot, sha).run();
        assertEquals(List.of(), calls, "the restore in place is complete");
        assertFalse(Files.exists(data().resolve(".etcd-migrate/restore-staging")), "the emptied staging removed");
        assertEquals("the complete restore", Files.readString(data().resolve("member/snap/db")));
        assertEquals("3.5.35/etcd3", Files.readString(data().resolve("version.txt")));
        assertTrue(marker().contains("state=restored"));
    }

    /** A crash right after the marker was written: member/ is still the old data and is moved aside first. */
    @Test
    void resumesBeforeTheMemberDirWasMoved() throws Exception {
        oldMember();
        Path snapshot = snapshot("3.5.0");
        String sha = sha(snapshot);
        new RestoreMarker(
                        sha,
                        RestoreMarker.State.RESTORING,
                        java.util.Optional.of(backup(sha)),
                        "etcd-restore-x",
                        java.util.Optional.empty())
                .write(Files.createDirectories(data().resolve(".etcd-migrate")).resolve("restore"));
        restore(snapshot, sha).run();
        assertEquals(1, calls.size());
        assertEquals("old data", Files.readString(backup(sha).resolve("snap/db")));
        assertEquals("restored", Files.readString(data().resolve("member/snap/db")));
    }

    @Test
    void anotherFileThanTheHashNamesIsRefusedAndNothingChanges() throws Exception {
        oldMember();
        Path snapshot = snapshot("3.5.0");
        String other = "0".repeat(64);
        RefusedException refused = assertThrows(
                RefusedException.class, () -> restore(snapshot, other).run());
        assertTrue(refused.getMessage().contains(sha(snapshot)), refused.getMessage());
        assertEquals(List.of(), calls);
        assertEquals("old data", Files.readString(data().resolve("member/snap/db")));
        assertFalse(Files.exists(data().resolve(".etcd-migrate/restore")));
    }

    @Test
    void a34SnapshotIsRefusedWithABumpAndRestoredWithItsRevisionsKept() throws Exception {
        Path snapshot = snapshot("3.4.0");
        String sha = sha(snapshot);
        RefusedException refused = assertThrows(
                RefusedException.class, () -> restore(snapshot, sha).run());
        assertTrue(refused.getMessage().contains("--bump-revision"), refused.getMessage());
        assertFalse(Files.exists(data().resolve("member")));

        restore(snapshot, sha, "--restore-bump-revision", "0").run();
        assertEquals(
                List.of("restore 3.4.23 token etcd-restore-" + sha.substring(0, 16) + " bump 0 hash false"), calls);
        assertEquals("3.4.23/etcd3", Files.readString(data().resolve("version.txt")));
    }

    /**
     * A member of a cluster whose target is the line the snapshot's line goes down to by a snapshot restore (catalog):
     * that older line's tool restores it, so the cluster needs no downgrade step a member cannot take; its tool has
     * no revision bump, so the default bump is refused and 0 restores with the snapshot's revisions.
     */
    @Test
    void aMemberHeadingToTheOlderLineIsRestoredByThatLinesTool() throws Exception {
        oldMember();
        Path snapshot = snapshot("3.5.0");
        String sha = sha(snapshot);
        List<DataVersion> walked = new ArrayList<>();
        RefusedException refused = assertThrows(
                RefusedException.class,
                () -> member("3.4.23", walked::add, snapshot, sha).run());
        assertTrue(
                refused.getMessage().contains("etcdctl 3.4.23, which restores it into etcd 3.4"), refused.getMessage());
        assertTrue(refused.getMessage().contains("RESTORE_BUMP_REVISION=0"), refused.getMessage());
        assertEquals(List.of(), calls);
        assertFalse(Files.exists(data().resolve(".etcd-migrate/restore")), "nothing begun");

        RestoreEvent.RestorePlanned planned = member(
                        "3.4.23", walked::add, snapshot, sha, "--restore-bump-revision", "0")
                .preview()
                .orElseThrow()
                .event();
        assertEquals("etcdctl 3.4.23", planned.restoreWith());
        assertEquals("3.4.23/etcd3", planned.restoredVersion());

        member("3.4.23", walked::add, snapshot, sha, "--restore-bump-revision", "0")
                .run();
        assertEquals(
                List.of("restore 3.4.23 token etcd-restore-" + sha.substring(0, 16) + " bump 0 hash false"), calls);
        assertEquals("3.4.23/etcd3", Files.readString(data().resolve("version.txt")));
        assertTrue(marker().contains("version=3.4.23\n"), marker());
        assertTrue(RestoreMarker.read(data().resolve(".etcd-migrate/restore"))
                .orElseThrow()
                .restoredAs("3.4.23"));
        assertEquals(DataVersion.parse("3.4.23/etcd3"), walked.getLast(), "the walk checked from the restored data");

        // the same snapshot for a lone etcd: its own line's tool, with the bump, and the walk down after it
        calls.clear();
        Files.writeString(data().resolve("version.txt"), "3.5.35/etcd3");
        Path again = snapshot("3.5.1"); // another hash: a new restore
        restore("3.4.23", walked::add, again, sha(again)).run();
        assertEquals(
                List.of("restore 3.5.35 token etcd-restore-" + sha(again).substring(0, 16)
                        + " bump 1000000000 hash false"),
                calls);
    }

    /** A walk the start after the restore would refuse is refused before the restore changes anything. */
    @Test
    void aWalkTheStartWouldRefuseRefusesTheRestoreFirst() throws Exception {
        oldMember();
        Path snapshot = snapshot("3.5.0");
        String sha = sha(snapshot);
        Map<String, String> before = TreeDigest.of(data());
        RefusedException refused = assertThrows(
                RefusedException.class,
                () -> member(
                                "3.3.27",
                                walk -> {
                                    throw new RefusedException("refused for a member: " + walk);
                                },
                                snapshot,
                                sha)
                        .run());
        assertEquals("refused for a member: 3.5.35/etcd3", refused.getMessage());
        assertEquals(List.of(), calls);
        assertEquals(before, TreeDigest.of(data()), "nothing changed");
    }
}
