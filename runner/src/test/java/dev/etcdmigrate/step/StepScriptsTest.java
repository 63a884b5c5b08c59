package dev.etcdmigrate.step;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Backups;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.MemberSwap;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.event.BackupEvent;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.KeysEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each step's script over a fake {@link EtcdOperations}: the exact sequence of etcd work it asks for, and
 * for every call in that sequence, a crash there followed by what the next start does (recovery, then the
 * step again unless recovery already reached its result) converges: version.txt at the step's result,
 * the old member dir kept as a backup where the step replaces it, nothing left in .etcd-migrate/ but the
 * bookkeeping. The same scripts against real etcd are the integration tests' business.
 */
class StepScriptsTest {

    private static final Catalog CATALOG = Catalog.bundled();
    private static final String ORIGINAL = "original db";

    @TempDir
    Path tmp;

    private static Release release(String version) {
        return CATALOG.release(EtcdVersion.parse(version)).orElseThrow();
    }

    private static DataVersion v3(String version) {
        return new DataVersion(EtcdVersion.parse(version), StorageApi.ETCD3);
    }

    /** 3.5 -> 3.6, with 3.5.35 to check for v2 content first. */
    private static MinorUpgrade upgradeTo36() {
        return new MinorUpgrade(
                EtcdVersion.parse("3.5.35"), release("3.6.16"), Optional.of(release("3.5.35")), Optional.empty());
    }

    private static OnlineDowngrade downgrade37To36() {
        return new OnlineDowngrade(EtcdVersion.parse("3.7.3"), release("3.7.3"), release("3.6.16"));
    }

    private static EtcdOperations.DumpedKey dumped(String key, String value, long leaseTtl) {
        return new EtcdOperations.DumpedKey(
                key.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8), leaseTtl);
    }

    /** A data dir written by {@code at}: member/ with a db (etcd3) or only a WAL and snap dir (etcd2), and version.txt. */
    private DataDir seed(String name, DataVersion at) throws IOException {
        Path data = Files.createDirectories(tmp.resolve(name));
        Files.createDirectories(data.resolve("member/wal"));
        Files.writeString(data.resolve("member/wal/0000000000000000-0000000000000000.wal"), "wal");
        Files.createDirectories(data.resolve("member/snap"));
        if (at.storage() == StorageApi.ETCD3) {
            Files.writeString(data.resolve("member/snap/db"), ORIGINAL);
        }
        DataDir dataDir = new DataDir(data);
        dataDir.writeVersion(at);
        return dataDir;
    }

    private final List<Event> events = new ArrayList<>();

    private StepContext context(DataDir dataDir, FakeEtcd etcd) {
        Log log = Log.silent().subscribe(events::add);
        Backups backups = new Backups(dataDir, Optional.empty(), 5, "m1", log);
        return new StepContext(
                etcd,
                dataDir,
                Optional.empty(),
                backups,
                log,
                new StepContext.Conversion("/registry/events", Duration.ofHours(1)));
    }

    /** The calls of an uninterrupted run on a fresh data dir. */
    private List<String> cleanRun(Step step, DataVersion from, Consumer<FakeEtcd> setup)
            throws IOException, InterruptedException, MigrateException {
        DataDir dataDir = seed("clean", from);
        FakeEtcd etcd = new FakeEtcd(dataDir.path(), new FakeEtcd.Cluster());
        setup.accept(etcd);
        step.run(context(dataDir, etcd));
        dataDir.writeVersion(step.result());
        assertConverged(step, from, dataDir);
        return etcd.calls;
    }

    /**
     * For each call of a clean run: a fresh data dir, a crash at that call, then the next start (recovery,
     * and the step again from the start if version.txt does not name its result yet); it must converge.
     */
    private void crashAtEveryCall(Step step, DataVersion from, Consumer<FakeEtcd> setup)
            throws IOException, InterruptedException, MigrateException {
        int calls = cleanRun(step, from, setup).size();
        for (int at = 1; at <= calls; at++) {
            DataDir dataDir = seed("crash-" + at, from);
            FakeEtcd.Cluster cluster = new FakeEtcd.Cluster();
            FakeEtcd crashing = new FakeEtcd(dataDir.path(), cluster).crashingAt(at);
            setup.accept(crashing);
            String where = "crash at call " + at;
            assertThrows(FakeEtcd.Crash.class, () -> step.run(context(dataDir, crashing)), where);
            assertEquals(
                    from,
                    dataDir.readVersion().orElseThrow(),
                    where + ": version.txt names no step that did not complete");
            if (from.storage() == StorageApi.ETCD3) {
                assertEquals(
                        ORIGINAL,
                        Files.readString(dataDir.member().resolve("snap/db")),
                        where + ": member/ untouched in place");
            }
            StepContext next = context(dataDir, new FakeEtcd(dataDir.path(), cluster));
            new MemberSwap(dataDir, next.backups(), next.log()).recover();
            next.backups().recover();
            FakeEtcd again = (FakeEtcd) next.etcd();
            setup.accept(again);
            step.run(next);
            dataDir.writeVersion(step.result());
            assertConverged(step, from, dataDir);
        }
    }

    private static void assertConverged(Step step, DataVersion from, DataDir dataDir)
            throws IOException, InterruptedException, MigrateException {
        assertEquals(step.result(), dataDir.readVersion().orElseThrow());
        assertTrue(Files.isDirectory(dataDir.member()), "member/ in place");
        assertEquals(List.of(), dataDir.own().workDirs(), "no work dir left");
        assertFalse(Files.exists(dataDir.staging()), "no staging left");
        Path db = dataDir.member().resolve("snap/db");
        if (step.replacesMemberDir()) {
            assertFalse(Files.exists(db) && ORIGINAL.equals(Files.readString(db)), "the member dir was replaced");
            if (from.storage() == StorageApi.ETCD3) {
                assertTrue(backupsHolding(dataDir, ORIGINAL) >= 1, "the old member dir is kept as a backup");
            }
        } else if (from.storage() == StorageApi.ETCD3) {
            assertEquals(ORIGINAL, Files.readString(db), "etcd worked on the data in place");
        }
    }

    private static long backupsHolding(DataDir dataDir, String db) throws IOException {
        if (!Files.isDirectory(dataDir.backupsDir())) return 0;
        try (Stream<Path> backups = Files.list(dataDir.backupsDir())) {
            return backups.filter(b -> {
                        try {
                            return db.equals(Files.readString(b.resolve("member/snap/db")));
                        } catch (IOException e) {
                            return false;
                        }
                    })
                    .count();
        }
    }

    private static final Consumer<FakeEtcd> NOTHING = e -> {};

    // ---- PatchFloor

    @Test
    void aPatchFloorRunsTheNewerPatchOnceOnTheData() throws IOException, InterruptedException, MigrateException {
        Step step = new PatchFloor(EtcdVersion.parse("3.5.21"), release("3.5.35"), EtcdVersion.parse("3.5.32"));
        assertEquals(List.of("run 3.5.35 ."), cleanRun(step, v3("3.5.21"), NOTHING));
        assertEquals(
                List.of("run 3.5.35 . snapshot-count=1"),
                cleanRun(((PatchFloor) step).withSnapshotForNext(), v3("3.5.21"), NOTHING)
                        .subList(0, 1));
        crashAtEveryCall(step, v3("3.5.21"), NOTHING);
    }

    // ---- MinorUpgrade

    @Test
    void aPlainMinorUpgradeStartsTheNextLineUntilAWrite() throws IOException, InterruptedException, MigrateException {
        Step step =
                new MinorUpgrade(EtcdVersion.parse("3.4.23"), release("3.5.35"), Optional.empty(), Optional.empty());
        assertEquals(List.of("run 3.5.35 ."), cleanRun(step, v3("3.4.23"), NOTHING));
        crashAtEveryCall(step, v3("3.4.23"), NOTHING);
    }

    @Test
    void anUpgradeTo36ChecksForV2ContentFirstAndSnapshotsPastOldWalEntries()
            throws IOException, InterruptedException, MigrateException {
        Step step = upgradeTo36();
        assertEquals(List.of("check v2store 3.5.35 .", "run 3.6.16 ."), cleanRun(step, v3("3.5.35"), NOTHING));
        Consumer<FakeEtcd> oldWalEntries =
                e -> e.v2Findings.add(Optional.of("detected custom v2 content in WAL records"));
        assertEquals(
                List.of(
                        "check v2store 3.5.35 .",
                        "run 3.5.35 . snapshot-count=1",
                        "check v2store 3.5.35 .",
                        "run 3.6.16 ."),
                cleanRun(step, v3("3.5.35"), oldWalEntries));
        crashAtEveryCall(step, v3("3.5.35"), oldWalEntries);
        assertTrue(events.stream().anyMatch(e -> e instanceof KeysEvent.V2ContentFound f && !f.remains()));
    }

    @Test
    void realV2KeysStopTheUpgradeWithTheDataStillAtThePreviousLine()
            throws IOException, InterruptedException, MigrateException {
        Step step = upgradeTo36();
        DataDir dataDir = seed("v2keys", v3("3.5.35"));
        FakeEtcd etcd = new FakeEtcd(dataDir.path(), new FakeEtcd.Cluster());
        etcd.v2Findings.add(Optional.of("detected custom v2 content in v2store"));
        etcd.v2Findings.add(Optional.of("detected custom v2 content in v2store"));
        assertThrows(StepFailedException.class, () -> step.run(context(dataDir, etcd)));
        assertEquals(
                List.of("check v2store 3.5.35 .", "run 3.5.35 . snapshot-count=1", "check v2store 3.5.35 ."),
                etcd.calls,
                "3.6 never ran on it");
        assertTrue(events.stream().anyMatch(e -> e instanceof KeysEvent.V2ContentFound f && f.remains()));
    }

    @Test
    void aJudgedUpgradeTo36StartsItFirstAndChecksOnlyAfterARefusal()
            throws IOException, InterruptedException, MigrateException {
        MinorUpgrade step = upgradeTo36().withV2JudgedAtStart();
        assertEquals(
                List.of("run judging v2 3.6.16 ."), cleanRun(step, v3("3.5.35"), NOTHING), "accepted: no check at all");
        assertEquals(
                List.of("run judging v2 3.6.16 . snapshot-count=1"),
                cleanRun(step.withSnapshotForNext(), v3("3.5.35"), NOTHING).subList(0, 1));
        crashAtEveryCall(step, v3("3.5.35"), NOTHING);

        // refused, and the check finds only old WAL entries: the check-first flow, then 3.6 once more
        Consumer<FakeEtcd> refusedForOldEntries = e -> {
            e.v2Refusals.add(Optional.of("detected disallowed v2 WAL"));
            e.v2Findings.add(Optional.of("detected custom v2 content in WAL records"));
        };
        assertEquals(
                List.of(
                        "run judging v2 3.6.16 .",
                        "check v2store 3.5.35 .",
                        "run 3.5.35 . snapshot-count=1",
                        "check v2store 3.5.35 .",
                        "run 3.6.16 ."),
                cleanRun(step, v3("3.5.35"), refusedForOldEntries));
        crashAtEveryCall(step, v3("3.5.35"), refusedForOldEntries);
        assertTrue(events.stream()
                .anyMatch(e -> e instanceof KeysEvent.V2ContentRefused r
                        && r.refusal().equals("detected disallowed v2 WAL")
                        && r.checker().equals("3.5.35")));
    }

    @Test
    void aJudgedUpgradeTo36StopsOnRealV2KeysWithTheDataStillAtThePreviousLine()
            throws IOException, InterruptedException, MigrateException {
        Step step = upgradeTo36().withV2JudgedAtStart();
        DataDir dataDir = seed("v2keys-judged", v3("3.5.35"));
        FakeEtcd etcd = new FakeEtcd(dataDir.path(), new FakeEtcd.Cluster());
        etcd.v2Refusals.add(Optional.of("detected disallowed custom content in v2store"));
        etcd.v2Findings.add(Optional.of("detected custom v2 content in v2store"));
        etcd.v2Findings.add(Optional.of("detected custom v2 content in v2store"));
        assertThrows(StepFailedException.class, () -> step.run(context(dataDir, etcd)));
        assertEquals(
                List.of(
                        "run judging v2 3.6.16 .",
                        "check v2store 3.5.35 .",
                        "run 3.5.35 . snapshot-count=1",
                        "check v2store 3.5.35 ."),
                etcd.calls,
                "3.6 ran once, and refused");
        assertTrue(events.stream().anyMatch(e -> e instanceof KeysEvent.V2ContentFound f && f.remains()));
    }

    @Test
    void onlyAStepThatCanBeJudgedIsJudged() {
        MinorUpgrade plain =
                new MinorUpgrade(EtcdVersion.parse("3.4.23"), release("3.5.35"), Optional.empty(), Optional.empty());
        assertFalse(plain.canJudgeV2AtStart());
        assertThrows(IllegalArgumentException.class, plain::withV2JudgedAtStart);
        MinorUpgrade to37 = new MinorUpgrade(
                EtcdVersion.parse("3.6.16"), release("3.7.3"), Optional.empty(), Optional.of(release("3.6.16")));
        assertFalse(to37.canJudgeV2AtStart(), "3.7 names no v2 refusals in the catalog");
        assertTrue(upgradeTo36().canJudgeV2AtStart());
    }

    @Test
    void anUpgradeTo37LetsThePreviousLineSnapshotFirstOrSnapshotsForTheNextLine()
            throws IOException, InterruptedException, MigrateException {
        Step first = new MinorUpgrade(
                EtcdVersion.parse("3.6.16"), release("3.7.3"), Optional.empty(), Optional.of(release("3.6.16")));
        assertEquals(List.of("run 3.6.16 . snapshot-count=1", "run 3.7.3 ."), cleanRun(first, v3("3.6.16"), NOTHING));
        crashAtEveryCall(first, v3("3.6.16"), NOTHING);
        Step leaves = new MinorUpgrade(
                        EtcdVersion.parse("3.5.35"), release("3.6.16"), Optional.empty(), Optional.empty())
                .withSnapshotForNext();
        assertEquals(List.of("run 3.6.16 . snapshot-count=1"), cleanRun(leaves, v3("3.5.35"), NOTHING));
    }

    @Test
    void etcd2DataIsUpgradedWithV2Probes() throws IOException, InterruptedException, MigrateException {
        Step step = MinorUpgrade.ofEtcd2(EtcdVersion.parse("2.3.8"), release("3.0.17"));
        DataVersion from = new DataVersion(EtcdVersion.parse("2.3.8"), StorageApi.ETCD2);
        assertEquals(List.of("run 3.0.17 . v2"), cleanRun(step, from, NOTHING));
        crashAtEveryCall(step, from, NOTHING);
    }

    // ---- OnlineDowngrade

    @Test
    void anOnlineDowngradeBacksUpThenEnablesAndWaitsThenStartsTheOlderLine()
            throws IOException, InterruptedException, MigrateException {
        Step step = downgrade37To36();
        assertEquals(
                List.of(
                        "start 3.7.3 .",
                        "downgrade status 3.7.3",
                        "cluster version 3.7.3",
                        "downgrade enable 3.7.3 3.6",
                        "await cluster version 3.6",
                        "await storage version 3.6",
                        "stop 3.7.3",
                        "start 3.6.16 . snapshot-count=1 quick-downgrade-check",
                        "await downgrade finished 3.6.16",
                        "write 3.6.16",
                        "stop 3.6.16"),
                cleanRun(step, v3("3.7.3"), NOTHING));
        assertTrue(
                events.stream()
                        .anyMatch(e ->
                                e instanceof BackupEvent.BackupMade b && b.how().equals("copied")),
                "a backup first");
        // a crash after `downgrade enable` leaves it enabled in the data: the rerun continues it instead of enabling
        // again
        crashAtEveryCall(step, v3("3.7.3"), NOTHING);
    }

    @Test
    void aRerunAfterTheDowngradeWasEnabledContinuesIt() throws IOException, InterruptedException, MigrateException {
        Step step = downgrade37To36();
        DataDir dataDir = seed("continue", v3("3.7.3"));
        FakeEtcd.Cluster cluster = new FakeEtcd.Cluster();
        cluster.downgradeEnabled = Optional.of(new MinorLine(3, 6));
        cluster.clusterVersion = Optional.of(new MinorLine(3, 6));
        FakeEtcd etcd = new FakeEtcd(dataDir.path(), cluster);
        step.run(context(dataDir, etcd));
        assertFalse(etcd.calls.stream().anyMatch(c -> c.startsWith("downgrade enable")), etcd.calls.toString());
    }

    /**
     * Members edited at once: two runners read "no downgrade", both enable, etcd refuses the second ("a downgrade job
     * in progress"). The job is the one this member wants, so it goes on (the 3.7 -> 3.5 all-at-once edit under three
     * kubelets failed here and crash-looped before).
     */
    @Test
    void aDowngradeEnabledByAnotherMemberMeanwhileIsContinued()
            throws IOException, InterruptedException, MigrateException {
        Step step = downgrade37To36();
        DataDir dataDir = seed("race", v3("3.7.3"));
        FakeEtcd.Cluster cluster = new FakeEtcd.Cluster();
        cluster.raceToEnable = true;
        FakeEtcd etcd = new FakeEtcd(dataDir.path(), cluster);
        step.run(context(dataDir, etcd));
        assertEquals(
                List.of(
                        "start 3.7.3 .",
                        "downgrade status 3.7.3",
                        "cluster version 3.7.3",
                        "downgrade enable 3.7.3 3.6",
                        "downgrade status 3.7.3",
                        "await cluster version 3.6",
                        "await storage version 3.6",
                        "stop 3.7.3"),
                etcd.calls.subList(0, 8));
    }

    /**
     * A case of HaRolloutIT's kill trials: a member killed while it served at 3.6 waiting for the 3.6
     * job to end reruns its 3.6 -> 3.5 leg at once; it waits for that job's end instead of refusing it.
     */
    @Test
    void thePreviousMinorsJobStillRunningIsAwaitedThenTheNextEnabled()
            throws IOException, InterruptedException, MigrateException {
        Step step = new OnlineDowngrade(EtcdVersion.parse("3.6.16"), release("3.6.16"), release("3.5.35"));
        DataDir dataDir = seed("previous", v3("3.6.16"));
        FakeEtcd.Cluster cluster = new FakeEtcd.Cluster();
        cluster.downgradeEnabled = Optional.of(new MinorLine(3, 6));
        cluster.clusterVersion = Optional.of(new MinorLine(3, 6));
        FakeEtcd etcd = new FakeEtcd(dataDir.path(), cluster);
        etcd.rejoins = true;
        step.run(context(dataDir, etcd));
        assertEquals(
                List.of(
                        "start 3.6.16 .",
                        "downgrade status 3.6.16",
                        "await downgrade finished 3.6.16",
                        "downgrade status 3.6.16",
                        "cluster version 3.6.16",
                        "downgrade enable 3.6.16 3.5"),
                etcd.calls.subList(0, 6));
    }

    @Test
    void aDowngradeToAnotherLineInProgressIsNotTouched() throws IOException, InterruptedException, MigrateException {
        Step step = downgrade37To36();
        DataDir dataDir = seed("other", v3("3.7.3"));
        FakeEtcd.Cluster cluster = new FakeEtcd.Cluster();
        cluster.downgradeEnabled = Optional.of(new MinorLine(3, 5));
        FakeEtcd etcd = new FakeEtcd(dataDir.path(), cluster);
        assertThrows(StepFailedException.class, () -> step.run(context(dataDir, etcd)));
        assertEquals(List.of("start 3.7.3 .", "downgrade status 3.7.3"), etcd.calls);
    }

    @Test
    void aClusterMemberDoesNotWaitForTheDowngradeJobToEnd() throws IOException, InterruptedException, MigrateException {
        Step step = downgrade37To36();
        List<String> calls = cleanRun(step, v3("3.7.3"), e -> e.rejoins = true);
        assertFalse(calls.stream().anyMatch(c -> c.startsWith("await downgrade finished")), calls.toString());
    }

    // ---- SnapshotDowngrade

    @Test
    void aSnapshotDowngradeSavesRestoresProvesAndSwaps() throws IOException, InterruptedException, MigrateException {
        Step step = new SnapshotDowngrade(EtcdVersion.parse("3.5.35"), release("3.5.35"), release("3.4.23"));
        assertEquals(
                List.of(
                        "start 3.5.35 .",
                        "snapshot save 3.5.35 .etcd-migrate/snapshot/snapshot.db",
                        "stop 3.5.35",
                        "restore 3.4.23 .etcd-migrate/snapshot/snapshot.db into .etcd-migrate/staging/data",
                        "run 3.4.23 .etcd-migrate/staging/data"),
                cleanRun(step, v3("3.5.35"), NOTHING));
        crashAtEveryCall(step, v3("3.5.35"), NOTHING);
    }

    // ---- ConvertToV3

    private static final String V2_STORE = """
            {"Root":{"Path":"/","CreatedIndex":0,"ModifiedIndex":0,"ExpireTime":"0001-01-01T00:00:00Z","Value":"","Children":{
              "1":{"Path":"/1","CreatedIndex":2,"ModifiedIndex":2,"ExpireTime":"0001-01-01T00:00:00Z","Value":"","Children":{
                "a":{"Path":"/1/a","CreatedIndex":5,"ModifiedIndex":6,"ExpireTime":"0001-01-01T00:00:00Z","Value":"x","Children":null},
                "_h":{"Path":"/1/_h","CreatedIndex":8,"ModifiedIndex":8,"ExpireTime":"0001-01-01T00:00:00Z","Value":"hidden","Children":null}}}}},
             "WatcherHub":{"EventHistory":{"Queue":{"Events":[]}}},"CurrentIndex":9,"CurrentVersion":2}
            """;

    @Test
    void anEtcd2ConversionWorksOnACopyChecksTwiceAndSwaps() throws IOException, InterruptedException, MigrateException {
        Step step = new ConvertToV3(EtcdVersion.parse("3.4.23"), release("3.4.23"));
        DataVersion from = new DataVersion(EtcdVersion.parse("3.4.23"), StorageApi.ETCD2);
        Consumer<FakeEtcd> store = e -> e.v2StoreJson = V2_STORE;
        assertEquals(
                List.of(
                        "run 3.4.23 .etcd-migrate/staging/work snapshot-count=1 v2",
                        "migrate 3.4.23 .etcd-migrate/staging/work",
                        "start 3.4.23 .etcd-migrate/staging/work",
                        "apply fixes 3.4.23",
                        "digest v3 3.4.23",
                        "stop 3.4.23",
                        "restore 3.4.23 .etcd-migrate/staging/converted.db into .etcd-migrate/staging/data from-db",
                        "start 3.4.23 .etcd-migrate/staging/data",
                        "digest v3 3.4.23",
                        "stop 3.4.23"),
                cleanRun(step, from, store));
        assertEquals(
                2,
                events.stream()
                        .filter(e -> e instanceof KeysEvent.KeyspaceMatched)
                        .count());
        crashAtEveryCall(step, from, store);
    }

    // ---- RollbackToV2

    @Test
    void aRollbackDumpsACopyLoadsAFreshV2StoreChecksItAndSwaps()
            throws IOException, InterruptedException, MigrateException {
        Step step = new RollbackToV2(EtcdVersion.parse("3.4.23"), release("3.4.23"), release("3.4.23"));
        Consumer<FakeEtcd> keys = e -> {
            e.v3Keys.add(dumped("/registry/a", "x", 0));
            e.v3Keys.add(dumped("/registry/b", "y", 30));
        };
        assertEquals(
                List.of(
                        "start 3.4.23 .etcd-migrate/staging/work",
                        "dump v3 3.4.23",
                        "stop 3.4.23",
                        "start new member 3.4.23 .etcd-migrate/staging/data snapshot-count=100000000 v2",
                        "load v2 3.4.23",
                        "list v2 3.4.23",
                        "stop 3.4.23"),
                cleanRun(step, v3("3.4.23"), keys));
        assertTrue(events.stream()
                .anyMatch(e -> e instanceof KeysEvent.KeysDumped d && d.keys() == 2 && d.leased() == 1));
        crashAtEveryCall(step, v3("3.4.23"), keys);
    }

    @Test
    void keysEtcd2CannotHoldAreRefusedWithTheDataDirAsItWas()
            throws IOException, InterruptedException, MigrateException {
        Step step = new RollbackToV2(EtcdVersion.parse("3.4.23"), release("3.4.23"), release("3.4.23"));
        DataDir dataDir = seed("offenders", v3("3.4.23"));
        FakeEtcd etcd = new FakeEtcd(dataDir.path(), new FakeEtcd.Cluster());
        etcd.v3Keys.add(dumped("/registry/pods/ns-1", "x", 0));
        etcd.v3Keys.add(dumped("/registry/pods/ns-1/p", "y", 0));
        StepRefusedException refused = assertThrows(StepRefusedException.class, () -> step.run(context(dataDir, etcd)));
        assertTrue(refused.getMessage().contains("/registry/pods/ns-1"), refused.getMessage());
        assertEquals(3, refused.exitCode());
        assertEquals(List.of("start 3.4.23 .etcd-migrate/staging/work", "dump v3 3.4.23", "stop 3.4.23"), etcd.calls);
        assertFalse(Files.exists(dataDir.staging()));
        assertEquals(ORIGINAL, Files.readString(dataDir.member().resolve("snap/db")));
        Trees.deleteRecursively(dataDir.path());
    }
}
