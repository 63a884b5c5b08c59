package dev.etcdmigrate.decide;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.CatalogSource;
import dev.etcdmigrate.config.Peers;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.ondisk.ClusterVersion;
import dev.etcdmigrate.ondisk.Damage;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.ondisk.Evidence;
import dev.etcdmigrate.ondisk.OwnMember;
import dev.etcdmigrate.plan.Plan;
import dev.etcdmigrate.plan.RefusedTransitionException;
import dev.etcdmigrate.step.MinorUpgrade;
import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The one decision as a table, without etcd: (what was read, labels, flags, catalog, what is installed) ->
 * the version a start plans from and the plan it runs, or the refusal.
 */
class StartDecisionTest {

    private static final Catalog CATALOG = Catalog.bundled();
    private static final CatalogSource SOURCE = () -> CATALOG;
    private static final Predicate<EtcdVersion> ALL = v -> true;
    private static final Path DIR = Path.of("/data");

    /** What the data says: its storage and line (pinned when {@code pinned}), the floor at the line. */
    static DataDetection.Detection detected(StorageApi storage, String line, boolean pinned) {
        Optional<MinorLine> l = Optional.ofNullable(line).map(MinorLine::parse);
        return new DataDetection.Detection(
                DIR,
                Optional.empty(),
                Optional.ofNullable(storage),
                l,
                l,
                l.map(x -> List.of(new Evidence("member/snap/db", "a record", Optional.of(x))))
                        .orElse(List.of()),
                pinned ? l.map(x -> new ClusterVersion(x + ".0", "db")) : Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                Optional.empty(),
                List.of(),
                OptionalLong.empty(),
                OptionalLong.empty(),
                List.of(),
                0,
                Optional.empty(),
                0,
                0,
                storage == StorageApi.ETCD3,
                Optional.empty(),
                Optional.empty(),
                List.of());
    }

    static DataRead read(String versionTxt, DataDetection.Detection d, boolean stepsRan) {
        return new DataRead(
                DIR,
                true,
                Optional.ofNullable(versionTxt).map(DataVersion::parse),
                d == null || d.storage().isEmpty()
                        ? StorageApi.ETCD3
                        : d.storage().get(),
                Optional.ofNullable(d),
                stepsRan,
                "member/",
                Optional.empty(),
                DataRead.DamageFound.NONE,
                false,
                Optional.empty());
    }

    /** A cluster of {@code members} named it, m1, m2, ... */
    static Topology topology(int members) {
        List<String> entries = new java.util.ArrayList<>();
        for (int i = 0; i < members; i++) entries.add((i == 0 ? "it" : "m" + i) + "=http://m" + i + ":2380");
        Peers peers = new Peers("it", String.join(",", entries), "http://m0:2380", "http://m0:2380");
        return Topology.of(
                peers,
                new Topology.PeerTls(List.of(), Optional.empty(), Optional.empty(), Optional.empty()),
                new Topology.ClientTls("http://m0:2379", Optional.empty(), Optional.empty(), Optional.empty()));
    }

    static StartDecision.Flags flags(String target, String initial, int members) {
        return new StartDecision.Flags(
                DataVersion.parse(target),
                Optional.ofNullable(initial).map(EtcdVersion::parse),
                topology(members),
                false,
                DIR,
                Optional.empty(),
                Optional.of("it"));
    }

    static Optional<DataVersion> start(DataRead read, StartDecision.Flags flags) throws MigrateException {
        return StartDecision.start(read, flags, SOURCE).current();
    }

    /** Where a start begins, per row: version.txt; else --initial-version; else the data's line at patch 0. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(
            nullValues = "-",
            value = {
                "version.txt answers; the data is not read,  3.5.35/etcd3, -,      -,    -, 3.5.35/etcd3",
                "--initial-version agrees with the data,     -,            3.5.21, 3.5,  -, 3.5.21/etcd3",
                "--initial-version newer than the data,      -,            3.6.16, 3.5,  -, 3.6.16/etcd3",
                "the data pins its line: lowest patch,       -,            -,      3.5,  -, 3.5.0/etcd3",
                "etcd2 data pins 2.3,                        -,            -,      2.3,  etcd2, 2.3.0/etcd2",
            })
    void startsFrom(String name, String versionTxt, String initial, String line, String storage, String expected)
            throws Exception {
        StorageApi api = storage == null ? StorageApi.ETCD3 : StorageApi.parse(storage);
        var d = versionTxt != null ? null : detected(api, line, true);
        assertEquals(
                Optional.of(DataVersion.parse(expected)),
                start(read(versionTxt, d, false), flags("3.6.16/etcd3", initial, 1)),
                name);
    }

    @Test
    void anEmptyDirStartsFromNothingAndPlansAFreshDir() throws Exception {
        var read = new DataRead(
                DIR,
                false,
                Optional.empty(),
                StorageApi.ETCD2,
                Optional.empty(),
                false,
                "",
                Optional.empty(),
                DataRead.DamageFound.NONE,
                false,
                Optional.empty());
        var flags = flags("3.6.16/etcd3", null, 1);
        Optional<DataVersion> current = start(read, flags);
        assertEquals(Optional.empty(), current);
        assertTrue(StartDecision.plan(current, flags, SOURCE, ALL).fresh());
    }

    @Test
    void dataThatDoesNotPinItsLineWithoutALabelIsRefused() {
        var e = assertThrows(
                RefusedTransitionException.class,
                () -> start(
                        read(null, detected(StorageApi.ETCD3, "3.5", false), false), flags("3.6.16/etcd3", null, 1)));
        assertEquals(ExitStatus.REFUSED, e.status());
        // the way forward and the evidence: the flag that pins the line, the dir that holds data
        assertTrue(e.getMessage().contains("--initial-version"), e.getMessage());
        assertTrue(e.getMessage().contains("member/"), e.getMessage());
    }

    @Test
    void anInitialVersionOlderThanTheDataIsContradictedUnlessTheRunnersStepWasInterrupted() throws Exception {
        var data = detected(StorageApi.ETCD3, "3.6", true);
        var flags = flags("3.6.16/etcd3", "3.5.35", 1);
        assertThrows(DataDir.ContradictionException.class, () -> start(read(null, data, false), flags));
        StartDecision.Start resumed = StartDecision.start(read(null, data, true), flags, SOURCE);
        assertEquals(LabelJudgement.Verdict.INTERRUPTED_STEP, resumed.verdict());
        assertEquals(Optional.of(DataVersion.parse("3.5.35/etcd3")), resumed.current());
    }

    @Test
    void aLineWithoutTheV3ApiCannotHaveWrittenADb() {
        var e = assertThrows(
                RefusedTransitionException.class,
                () -> start(read(null, detected(null, null, false), false), flags("3.6.16/etcd3", "2.3.8", 1)));
        assertEquals(ExitStatus.REFUSED, e.status());
        // both facts named: the version given, and the db it cannot have written
        assertTrue(e.getMessage().contains("2.3.8") && e.getMessage().contains("member/snap/db"), e.getMessage());
    }

    /** The plan shaping a lone member gets, and the member count from --initial-cluster. */
    @Test
    void aLoneMembersLastUpgradeLeavesASnapshotAClusterMembersDoesNot() throws Exception {
        Optional<DataVersion> current = Optional.of(DataVersion.parse("3.5.35/etcd3"));
        Plan alone = StartDecision.plan(current, flags("3.6.16/etcd3", null, 1), SOURCE, ALL);
        Plan member = StartDecision.plan(current, flags("3.6.16/etcd3", null, 3), SOURCE, ALL);
        assertEquals(List.of("minor-upgrade"), kinds(alone));
        assertEquals(kinds(alone), kinds(member));
        assertTrue(((MinorUpgrade) alone.steps().getLast()).snapshotForNext(), alone.toString());
        assertTrue(!((MinorUpgrade) member.steps().getLast()).snapshotForNext(), member.toString());
    }

    /** Several minors are a chain of one-minor legs for a cluster member too; a snapshot downgrade is not. */
    @Test
    void aClusterMemberWalksSeveralMinorsButIsRefusedASnapshotDowngrade() throws Exception {
        Optional<DataVersion> current = Optional.of(DataVersion.parse("3.4.23/etcd3"));
        for (int members : new int[] {1, 3}) {
            assertEquals(
                    2,
                    StartDecision.plan(current, flags("3.6.16/etcd3", null, members), SOURCE, ALL).steps().stream()
                            .filter(s -> s instanceof MinorUpgrade)
                            .count());
        }
        var e = assertThrows(
                RefusedTransitionException.class,
                () -> StartDecision.plan(
                        Optional.of(DataVersion.parse("3.5.35/etcd3")), flags("3.4.23/etcd3", null, 3), SOURCE, ALL));
        assertTrue(e.getMessage().contains("3-member cluster"), e.getMessage());
    }

    @Test
    void aRestartNeedsOnlyTheTargetInstalled() throws Exception {
        Optional<DataVersion> current = Optional.of(DataVersion.parse("3.6.16/etcd3"));
        Predicate<EtcdVersion> onlyTarget = v -> v.equals(EtcdVersion.parse("3.6.16"));
        CatalogSource unread = () -> {
            throw new AssertionError("a restart reads no catalog");
        };
        assertEquals(
                List.of(),
                StartDecision.plan(current, flags("3.6.16/etcd3", null, 1), unread, onlyTarget)
                        .steps());
    }

    @Test
    void aStepThatSwapsTheMemberDirIsRefusedWithAWalElsewhere() throws Exception {
        Optional<DataVersion> current = Optional.of(DataVersion.parse("3.5.35/etcd3"));
        var down = flags("3.4.23/etcd3", null, 1);
        assertEquals(List.of("snapshot-downgrade"), kinds(StartDecision.plan(current, down, SOURCE, ALL)));
        var walElsewhere = new StartDecision.Flags(
                down.target(),
                Optional.empty(),
                topology(1),
                false,
                DIR,
                Optional.of(Path.of("/wal")),
                Optional.of("it"));
        var e = assertThrows(
                RefusedTransitionException.class, () -> StartDecision.plan(current, walElsewhere, SOURCE, ALL));
        assertTrue(e.getMessage().contains("mv /wal/* /data/member/wal/"), e.getMessage());
        // an upgrade keeps the member dir: the WAL stays where --wal-dir says
        assertEquals(
                List.of("minor-upgrade"),
                kinds(StartDecision.plan(
                        current, walElsewhere.withTarget(DataVersion.parse("3.6.16/etcd3")), SOURCE, ALL)));
    }

    private static List<String> kinds(Plan plan) {
        return plan.steps().stream().map(Step::kind).toList();
    }

    /**
     * A --name the data does not record: the data records this member as 'm0' (WAL member id, db bucket members) and
     * etcd would run with --name it: refused naming both, with a version.txt and without; the same name, or no name to
     * check (inspect without --name), goes on.
     */
    @Test
    void anotherMembersDataIsRefusedNamingBoth() throws MigrateException {
        OwnMember m0 = new OwnMember("8e9e05c52164694d", "m0", List.of("http://10.0.0.1:2380"), "member/snap/db");
        for (String versionTxt : new String[] {"3.5.35/etcd3", null}) {
            DataRead base = read(versionTxt, detected(StorageApi.ETCD3, "3.5", true), false);
            DataRead read = new DataRead(
                    base.dataDir(),
                    base.holdsData(),
                    base.versionTxt(),
                    base.inferredStorage(),
                    base.detection(),
                    false,
                    base.content(),
                    Optional.of(m0),
                    DataRead.DamageFound.NONE,
                    false,
                    Optional.empty());
            MigrateException e = assertThrows(
                    DataDir.ContradictionException.class, () -> start(read, flags("3.6.16/etcd3", null, 1)));
            assertTrue(e.getMessage().contains("'it'") && e.getMessage().contains("'m0'"), e.getMessage());
            assertTrue(e.getMessage().contains("8e9e05c52164694d"), e.getMessage());
            assertEquals(3, e.status().code());
            assertTrue(start(read, flags("3.6.16/etcd3", null, 1).withoutName()).isPresent());
            StartDecision.Flags named = new StartDecision.Flags(
                    DataVersion.parse("3.6.16/etcd3"),
                    Optional.empty(),
                    topology(1),
                    false,
                    DIR,
                    Optional.empty(),
                    Optional.of("m0"));
            assertTrue(start(read, named).isPresent());
        }
    }

    /** The same read with the db's auth flag and the damage a start's every-page read found. */
    private static DataRead with(DataRead r, boolean auth, List<Damage> everyPage) {
        return copy(
                r, new DataRead.DamageFound(Optional.of(everyPage), Optional.of(List.of())), auth, r.downgradeJob());
    }

    /** The same read with what the db says besides: the damage found, the auth flag and a downgrade job. */
    private static DataRead copy(
            DataRead r, DataRead.DamageFound damage, boolean auth, Optional<MinorLine> downgradeJob) {
        return new DataRead(
                r.dataDir(),
                r.holdsData(),
                r.versionTxt(),
                r.inferredStorage(),
                r.detection(),
                r.stepsRanHere(),
                r.content(),
                r.member(),
                damage,
                auth,
                downgradeJob);
    }

    /**
     * One call decides start, plan, legs and refusals from one read, so that they cannot disagree; the auth refusal
     * holds only for a plan with steps, and is kept apart so that a start meets it among its checks (after the others).
     */
    @Test
    void oneCallDecidesStartPlanLegsAndRefusals() throws Exception {
        var base = read("3.5.35/etcd3", null, false);
        var decided = StartDecision.decide(with(base, false, List.of()), flags("3.7.3/etcd3", null, 3), SOURCE, ALL);
        assertEquals(
                Optional.of(DataVersion.parse("3.5.35/etcd3")),
                decided.startOrThrow().current());
        assertEquals(2, decided.legs().size(), "3.5 -> 3.7 as a cluster member: one restart per minor");
        assertEquals(Optional.empty(), decided.refusal());
        assertEquals(
                List.of(),
                StartDecision.decide(base, flags("3.7.3/etcd3", null, 1), SOURCE, ALL)
                        .legs());

        var auth = StartDecision.decide(with(base, true, List.of()), flags("3.6.16/etcd3", null, 1), SOURCE, ALL);
        assertTrue(auth.plan().isPresent() && auth.refused().isEmpty(), "the plan stands; auth is met later");
        assertEquals(Optional.of(StartDecision.AUTH_REFUSAL), auth.refusal());
        assertEquals(
                3,
                assertThrows(MigrateException.class, auth::refuseAuth).status().code());
        var restart = StartDecision.decide(with(base, true, List.of()), flags("3.5.35/etcd3", null, 1), SOURCE, ALL);
        assertEquals(Optional.empty(), restart.refusal(), "a restart runs no step: auth does not matter");

        Damage torn = new Damage(DIR.resolve("member/snap/db"), "page 7", "a page that identifies as 7");
        var damaged =
                StartDecision.decide(with(base, true, List.of(torn)), flags("3.6.16/etcd3", null, 1), SOURCE, ALL);
        assertTrue(damaged.start().isEmpty() && damaged.plan().isEmpty());
        assertTrue(damaged.refused().orElseThrow() instanceof DamagedDataException);
        assertThrows(DamagedDataException.class, damaged::startOrThrow);
        assertTrue(damaged.refusal().orElseThrow().contains("page 7"), "the start's refusal before auth's");
    }

    private static DataRead withJob(DataRead r, String jobLine) {
        return copy(r, r.damage(), r.authEnabled(), Optional.of(MinorLine.parse(jobLine)));
    }

    /**
     * A single member whose data records a downgrade job that has not ended: steps to a line above the job's target
     * are refused before anything changes (its etcd would stay at the job's cluster version for good); finishing the
     * downgrade, a restart without steps, and a cluster member (whose rollout asks the cluster) go on.
     */
    @Test
    void stepsAboveAnUnendedDowngradeJobAreRefusedOnASingleMember() throws Exception {
        var atThreeSix = withJob(read("3.6.16/etcd3", null, false), "3.5");
        var up = StartDecision.decide(atThreeSix, flags("3.7.3/etcd3", null, 1), SOURCE, ALL);
        assertTrue(up.plan().isEmpty(), "no plan above the job's target");
        assertTrue(up.refused().orElseThrow() instanceof RefusedTransitionException);
        assertEquals(
                3,
                assertThrows(MigrateException.class, up::planOrThrow).status().code());

        var down = StartDecision.decide(atThreeSix, flags("3.5.35/etcd3", null, 1), SOURCE, ALL);
        assertEquals(Optional.empty(), down.refusal(), "the downgrade the job is for");
        assertFalse(down.planOrThrow().steps().isEmpty());
        var further = StartDecision.decide(atThreeSix, flags("3.4.23/etcd3", null, 1), SOURCE, ALL);
        assertEquals(Optional.empty(), further.refusal(), "through the job's target and on down");
        var restart = StartDecision.decide(atThreeSix, flags("3.6.16/etcd3", null, 1), SOURCE, ALL);
        assertEquals(Optional.empty(), restart.refusal(), "no step runs: etcd itself goes on with the job");

        var atTheTarget = withJob(read("3.5.35/etcd3", null, false), "3.5");
        assertTrue(
                StartDecision.decide(atTheTarget, flags("3.6.16/etcd3", null, 1), SOURCE, ALL)
                                .refused()
                                .orElseThrow()
                        instanceof RefusedTransitionException,
                "a job at the data's own line, never ended");
        assertEquals(
                Optional.empty(),
                StartDecision.decide(atTheTarget, flags("3.6.16/etcd3", null, 3), SOURCE, ALL)
                        .refusal(),
                "a cluster member: the rollout's gate asks the cluster");
    }
}
