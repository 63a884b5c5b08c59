package dev.etcdmigrate.log;

import dev.etcdmigrate.event.BackupEvent;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.EventListener;
import dev.etcdmigrate.event.KeysEvent;
import dev.etcdmigrate.event.RolloutEvent;
import dev.etcdmigrate.event.RunEvent;
import dev.etcdmigrate.event.StepEvent;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.LongSupplier;

/**
 * Counts a run's events into its {@link RunEvent.RunSummary}: the plan's ends, each step's time, the backups made and
 * still kept, the keyspaces compared, and the time a member etcd served between legs (which is not out of service).
 */
public final class RunTally implements EventListener {

    private final LongSupplier clockMillis;
    private final long startMillis;
    private boolean clusterMember;
    private String from = "";
    private String to = "";
    private final List<RunEvent.StepTime> steps = new ArrayList<>();
    private final Set<String> backups = new LinkedHashSet<>();
    private int backupsDeleted;
    private final List<RunEvent.KeyCount> keys = new ArrayList<>();
    private long servedMillis;
    private long servingSince = -1;

    /** @param startMillis when the run began (the runner's process start), on {@code clockMillis}' scale */
    public RunTally(LongSupplier clockMillis, long startMillis) {
        this.clockMillis = clockMillis;
        this.startMillis = startMillis;
    }

    /** The data dir is one member of a multi-member cluster (known once its members are read). */
    public synchronized RunTally clusterMember(boolean member) {
        this.clusterMember = member;
        return this;
    }

    /** Counted from the runner's process start (the JVM's start is part of the downtime), on the wall clock. */
    public static RunTally sinceProcessStart() {
        long now = System.currentTimeMillis();
        return new RunTally(
                System::currentTimeMillis,
                processStartMillis(now, procFile("/proc/self/stat"), procFile("/proc/uptime")));
    }

    /** Linux's USER_HZ: the unit of /proc/PID/stat's times, 100 on every architecture it exports to userspace. */
    private static final int USER_HZ = 100;

    /**
     * When this process started, from its age: the seconds since boot ({@code /proc/uptime}, to 10 ms) less its
     * start ({@code /proc/self/stat}'s 22nd field, in ticks since boot). Not {@code ProcessHandle.Info.startInstant},
     * which adds the ticks to the boot time in whole seconds ({@code btime}) and is up to a second early: a summary
     * would say 1,434 ms of a 680 ms run. {@code now} where either file is missing or unreadable.
     */
    static long processStartMillis(long now, String stat, String uptime) {
        try {
            // the command name in parentheses may hold spaces: the fields are counted after its closing one
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long startTicks = Long.parseLong(fields[22 - 3]);
            double upSeconds = Double.parseDouble(uptime.substring(0, uptime.indexOf(' ')));
            long ageMillis = Math.round(upSeconds * 1000) - startTicks * 1000 / USER_HZ;
            return ageMillis < 0 ? now : now - ageMillis;
        } catch (RuntimeException unreadable) {
            return now;
        }
    }

    private static String procFile(String path) {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of(path));
        } catch (java.io.IOException | RuntimeException e) {
            return "";
        }
    }

    // instanceof, not a pattern switch: a type switch links an invokedynamic bootstrap at first use, which every
    // start (the no-op too) would pay
    @Override
    public synchronized void on(Event event) {
        if (event instanceof DecisionEvent.PlanMade plan) {
            if (from.isEmpty()) from = plan.current(); // the first plan: where the data was
            to = plan.target();
        } else if (event instanceof StepEvent.StepFinished s) {
            steps.add(new RunEvent.StepTime(s.index(), s.total(), s.kind(), s.tookMillis(), true, s.versionTxt()));
        } else if (event instanceof StepEvent.StepFailed s) {
            steps.add(new RunEvent.StepTime(s.index(), s.total(), s.kind(), s.tookMillis(), false, s.versionTxt()));
        } else if (event instanceof BackupEvent.BackupMade b) {
            backups.add(b.path());
        } else if (event instanceof BackupEvent.BackupDeleted b) {
            if (!backups.remove(b.path())) backupsDeleted++;
        } else if (event instanceof KeysEvent.KeyspaceMatched k) {
            keys.add(new RunEvent.KeyCount(k.keys(), k.when()));
        } else if (event instanceof RolloutEvent.MemberServing) {
            servingSince = clockMillis.getAsLong();
        } else if (event instanceof EtcdEvent.EtcdStopped) {
            endServing();
        }
    }

    private void endServing() {
        if (servingSince >= 0) {
            servedMillis += clockMillis.getAsLong() - servingSince;
            servingSince = -1;
        }
    }

    /** The summary as of now ({@code outcome}: migrated, at-target, failed, refused). */
    public synchronized RunEvent.RunSummary summary(String outcome, int exitCode) {
        endServing();
        long total = Math.max(0, clockMillis.getAsLong() - startMillis);
        return new RunEvent.RunSummary(
                outcome,
                exitCode,
                from,
                to,
                total,
                steps,
                List.copyOf(backups),
                backupsDeleted,
                keys,
                clusterMember,
                servedMillis,
                Math.max(0, total - servedMillis));
    }

    /** migrated when a step ran, else at-target. */
    public synchronized String successOutcome() {
        return steps.isEmpty() ? "at-target" : "migrated";
    }
}
