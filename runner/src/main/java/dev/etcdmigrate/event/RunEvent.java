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

    /** The run's inputs as read: the data dir, the target, and the bin dir. */
    record RunStarted(String command, String dataDir, String target, String binDir) implements RunEvent {
        public String message() {
            return "etcd-migrate: data dir " + dataDir + ", target " + target + ", bin dir " + binDir;
        }
    }
}
