package dev.etcdmigrate.event;

import java.util.List;

/**
 * A run's start and end: what it was asked, whom it waited for or became, and how it ended (the
 * exit code's event: {@code Refused} 2 or 3, {@code Failed} 1).
 */
public sealed interface RunEvent extends Event {

    record Exec(String binary, List<String> argv) implements RunEvent {
        public Exec {
            argv = List.copyOf(argv);
        }

        public String message() {
            return "exec " + String.join(" ", argv);
        }
    }

    /** The run failed (exit 1); a step failure says which step and what version.txt says. */
    record Failed(int exitCode, String reason) implements RunEvent {
        public Level level() {
            return Level.ERROR;
        }

        public String message() {
            return reason;
        }
    }

    /** Another runner holds the data dir's lock: this one waits up to the timeout. */
    record LockWaiting(String lock, long timeoutSeconds) implements RunEvent {
        public String message() {
            return "waiting up to " + timeoutSeconds + " s for another etcd-migrate to release " + lock;
        }
    }

    /** The data dir is at the target; the lock is still held. */
    record Migrated(String dataDir, String version) implements RunEvent {
        public String message() {
            return "data dir " + dataDir + " is at " + version;
        }
    }

    /** --no-exec: the run ends after the migration instead of becoming etcd. */
    record NoExec(String dataDir, String version) implements RunEvent {
        public String message() {
            return "--no-exec: exiting after the migration (" + dataDir + " at " + version + ")";
        }
    }

    /** Started as root on a data dir another user owns, the runner now runs as that user (and so will etcd). */
    record OwnerAdopted(String dataDir, int uid, int gid) implements RunEvent {
        public String message() {
            return "data dir " + dataDir + " belongs to uid " + uid + " / gid " + gid
                    + ": running as that user, not root";
        }
    }

    /** The run ends without a change to the data: exit 2 (bad input) or 3 (refused transition or contradiction). */
    record Refused(int exitCode, String reason) implements RunEvent {
        public Level level() {
            return Level.ERROR;
        }

        public String message() {
            return reason;
        }
    }

    /**
     * The end of a migrate run, before its exec, no-exec, failure or refusal: what it did and what it cost.
     * {@code outcome}: migrated (steps ran), at-target (nothing to run), failed or refused. {@code outOfServiceMillis}:
     * from the runner's process start to now, less the time a member etcd served between legs of a cluster rollout
     * (for a single member: the runner's share of the downtime; the target etcd's own start follows).
     */
    record RunSummary(
            String outcome,
            int exitCode,
            String from,
            String to,
            long totalMillis,
            List<StepTime> steps,
            List<String> backupsKept,
            int backupsDeleted,
            List<KeyCount> keysChecked,
            boolean clusterMember,
            long servedMillis,
            long outOfServiceMillis)
            implements RunEvent {
        public RunSummary {
            steps = List.copyOf(steps);
            backupsKept = List.copyOf(backupsKept);
            keysChecked = List.copyOf(keysChecked);
        }

        public String message() {
            StringBuilder b = new StringBuilder("summary: ")
                    .append(outcome.replace('-', ' '))
                    .append(from.isEmpty() ? "" : " " + from + (to.isEmpty() || to.equals(from) ? "" : " -> " + to))
                    .append(" in ")
                    .append(totalMillis)
                    .append(" ms; ")
                    .append(clusterMember ? "this cluster member" : "etcd")
                    .append(" out of service for ")
                    .append(outOfServiceMillis)
                    .append(" ms of it")
                    .append(servedMillis > 0 ? " (it served " + servedMillis + " ms between legs)" : "")
                    .append(exitCode == 0 ? ", the target etcd's own start to follow" : "");
            for (StepTime step : steps) {
                b.append("\n  step ")
                        .append(step.index())
                        .append('/')
                        .append(step.total())
                        .append(' ')
                        .append(step.kind())
                        .append(step.completed() ? " to " + step.versionTxt() : "")
                        .append(": ")
                        .append(step.tookMillis())
                        .append(" ms")
                        .append(
                                step.completed()
                                        ? ""
                                        : " (did not complete; version.txt says " + step.versionTxt() + ")");
            }
            b.append("\n  backups kept: ")
                    .append(backupsKept.isEmpty() ? "none made by this run" : String.join(", ", backupsKept))
                    .append(backupsDeleted > 0 ? " (" + backupsDeleted + " older deleted by --backup-retention)" : "");
            b.append("\n  key counts checked: ");
            if (keysChecked.isEmpty()) {
                b.append("none (no step of this run compared keyspaces)");
            } else {
                for (int i = 0; i < keysChecked.size(); i++) {
                    KeyCount k = keysChecked.get(i);
                    b.append(i == 0 ? "" : ", ")
                            .append(k.keys())
                            .append(" keys ")
                            .append(k.when());
                }
            }
            return b.toString();
        }

        public Level level() {
            return exitCode == 0 ? Level.INFO : Level.WARN;
        }
    }

    /** One step of a run and how long it took; {@code completed} false for the step that failed; version.txt after it. */
    record StepTime(int index, int total, String kind, long tookMillis, boolean completed, String versionTxt) {}

    /** A keyspace compared key by key ({@code when}, e.g. "after migrate") and its key count. */
    record KeyCount(long keys, String when) {}

    /** The run's inputs as read: the data dir, the target, and the bin dir. */
    record RunStarted(String command, String dataDir, String target, String binDir) implements RunEvent {
        public String message() {
            return "etcd-migrate: data dir " + dataDir + ", target " + target + ", bin dir " + binDir;
        }
    }
}
