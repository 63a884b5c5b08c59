package dev.etcdmigrate.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.event.BackupEvent;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.event.KeysEvent;
import dev.etcdmigrate.event.RolloutEvent;
import dev.etcdmigrate.event.RunEvent;
import dev.etcdmigrate.event.StepEvent;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The run's summary is counted from its events: no wording asserted, the fields are. */
class RunTallyTest {

    private final AtomicLong now = new AtomicLong(1_000);
    private final RunTally tally = new RunTally(now::get, 900);
    private final Log log = Log.silent().subscribe(tally);

    @Test
    void stepsBackupsKeysAndTheTimeAMemberServedBetweenLegs() {
        tally.clusterMember(true);
        log.emit(new DecisionEvent.PlanMade("3.4.23/etcd3", "3.6.16/etcd3", List.of(), ""));
        log.emit(new StepEvent.StepStarted(1, 2, "minor-upgrade", "3.4 -> 3.5"));
        log.emit(new BackupEvent.BackupMade("/b/old", "3.4.23", "copied"));
        log.emit(new BackupEvent.BackupMade("/b/new", "3.4.23", "copied"));
        log.emit(new BackupEvent.BackupDeleted("/b/old", 1));
        log.emit(new BackupEvent.BackupDeleted("/b/earlier-run", 1));
        log.emit(new StepEvent.StepFinished(1, 2, "minor-upgrade", 700, "3.5.35/etcd3"));
        now.set(2_000);
        log.emit(new RolloutEvent.MemberServing("3.5.35", 42, "3.5 -> 3.6"));
        now.set(5_000);
        log.emit(new EtcdEvent.EtcdStopped("3.5.35", true, 143));
        log.emit(new DecisionEvent.PlanMade("3.5.35/etcd3", "3.6.16/etcd3", List.of(), ""));
        log.emit(new KeysEvent.KeyspaceMatched("d", 200, "after migrate"));
        log.emit(new StepEvent.StepFailed(2, 2, "minor-upgrade", 300, "x", "3.5.35/etcd3"));
        now.set(6_000);

        RunEvent.RunSummary s = tally.summary("failed", 1);
        assertEquals("3.4.23/etcd3", s.from(), "where the data was when the run began");
        assertEquals(
                List.of(
                        new RunEvent.StepTime(1, 2, "minor-upgrade", 700, true, "3.5.35/etcd3"),
                        new RunEvent.StepTime(2, 2, "minor-upgrade", 300, false, "3.5.35/etcd3")),
                s.steps());
        assertEquals(List.of("/b/new"), s.backupsKept());
        assertEquals(1, s.backupsDeleted(), "an earlier run's backup deleted by retention");
        assertEquals(List.of(new RunEvent.KeyCount(200, "after migrate")), s.keysChecked());
        assertEquals(5_100, s.totalMillis());
        assertEquals(3_000, s.servedMillis());
        assertEquals(2_100, s.outOfServiceMillis());
        assertTrue(s.clusterMember());
    }

    @Test
    void aRestartAtTheTargetIsAtTargetAndAllOutOfService() {
        log.emit(new DecisionEvent.PlanMade("3.6.16/etcd3", "3.6.16/etcd3", List.of(), ""));
        assertEquals("at-target", tally.successOutcome());
        RunEvent.RunSummary s = tally.summary(tally.successOutcome(), 0);
        assertEquals(100, s.outOfServiceMillis());
        assertFalse(s.clusterMember());
        assertTrue(s.steps().isEmpty());
        assertFalse(s.message().contains("null"), s.message());
    }

    @Test
    void theProcessStartIsNotAfterNow() {
        RunEvent.RunSummary s = RunTally.sinceProcessStart().summary("at-target", 0);
        assertTrue(s.totalMillis() >= 0 && s.totalMillis() < 600_000, String.valueOf(s.totalMillis()));
    }

    @Test
    void theProcessStartIsItsAgeFromProcToTenMilliseconds() {
        // started 1,234.56 s after boot (123,456 ticks of 10 ms), and 1,300.25 s after boot is now
        String stat = "4242 (java (a b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 20 0 123456 0 0\n";
        assertEquals(
                1_000_000 - (1_300_250 - 1_234_560), RunTally.processStartMillis(1_000_000, stat, "1300.25 2.00\n"));
        assertEquals(1_000_000, RunTally.processStartMillis(1_000_000, "", ""), "unreadable: now");
        assertEquals(
                1_000_000, RunTally.processStartMillis(1_000_000, stat, "1000.00 2.00\n"), "a start after now: now");
    }

    @Test
    void theProcessStartOfThisJvmIsJustBeforeItsOwnRecordedStart() throws Exception {
        long jvm = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
        long now = System.currentTimeMillis();
        long start = RunTally.processStartMillis(
                now,
                java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/stat")),
                java.nio.file.Files.readString(java.nio.file.Path.of("/proc/uptime")));
        // the exec precedes the JVM's own start record by its early init, which a loaded machine stretches to
        // several hundred ms; a wrong field of /proc (the parent's start, the boot time) is off by far more
        assertTrue(start <= jvm + 20 && jvm - start < 2_000, "process start " + start + ", JVM start " + jvm);
    }
}
