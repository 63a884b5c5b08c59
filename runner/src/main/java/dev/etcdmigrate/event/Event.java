package dev.etcdmigrate.event;

import java.util.List;

/**
 * What the runner did or decided, as data. Text logs, JSON logs and tests subscribe to these (see
 * {@code log.Log}); nothing here ever carries a key's value. Each event knows its kebab-case name
 * (the JSON "event" field) and the sentence an operator reads.
 */
public sealed interface Event {

    enum Level {
        INFO,
        WARN,
        ERROR
    }

    /** The sentence the text log prints; JSON logs carry it as "message" next to the fields. */
    String message();

    default Level level() {
        return Level.INFO;
    }

    /**
     * The JSON "event" name, part of the operator contract: spelled out per type, so renaming a record
     * changes no name (the switch is exhaustive: a new event does not compile without one). The names and
     * fields are pinned by src/test/resources/dev/etcdmigrate/event/events.golden (EventContractTest).
     */
    default String name() {
        return switch (this) {
            case Note e -> "note";
            case RunStarted e -> "run-started";
            case DataDirRead e -> "data-dir-read";
            case PlanMade e -> "plan-made";
            case StepStarted e -> "step-started";
            case StepFinished e -> "step-finished";
            case StepFailed e -> "step-failed";
            case VersionRecorded e -> "version-recorded";
            case EtcdStarted e -> "etcd-started";
            case EtcdAcceptedWrite e -> "etcd-accepted-write";
            case EtcdStopped e -> "etcd-stopped";
            case ToolRan e -> "tool-ran";
            case ChildOutput e -> "child-output";
            case BackupMade e -> "backup-made";
            case BackupDeleted e -> "backup-deleted";
            case Recovered e -> "recovered";
            case WorkCopied e -> "work-copied";
            case WorkDiscarded e -> "work-discarded";
            case Provisioned e -> "provisioned";
            case ProvisionSource e -> "provision-source";
            case ProvisionPins e -> "provision-pins";
            case RejoinFailed e -> "rejoin-failed";
            case OwnerAdopted e -> "owner-adopted";
            case MemberSwapped e -> "member-swapped";
            case LockWaiting e -> "lock-waiting";
            case SpaceChecked e -> "space-checked";
            case V2ContentFound e -> "v2-content-found";
            case V2ContentRefused e -> "v2-content-refused";
            case AlarmDisarmed e -> "alarm-disarmed";
            case V2StoreRead e -> "v2-store-read";
            case KeyspaceMatched e -> "keyspace-matched";
            case KeysDumped e -> "keys-dumped";
            case KeysLoaded e -> "keys-loaded";
            case EtcdReported e -> "etcd-reported";
            case Progress e -> "progress";
            case WalDirElsewhere e -> "wal-dir-elsewhere";
            case ClusterMember e -> "cluster-member";
            case RolloutChainPlanned e -> "rollout-chain-planned";
            case RolloutWaiting e -> "rollout-waiting";
            case RestartRecordTaken e -> "restart-record-taken";
            case RestartRecordReleased e -> "restart-record-released";
            case RestartRecordTakenOver e -> "restart-record-taken-over";
            case MemberServing e -> "member-serving";
            case BackupMoved e -> "backup-moved";
            case CleanupDeferred e -> "cleanup-deferred";
            case Replanned e -> "replanned";
            case InterruptedStepFound e -> "interrupted-step-found";
            case DataDetected e -> "data-detected";
            case StorageVersionUnread e -> "storage-version-unread";
            case NoExec e -> "no-exec";
            case Migrated e -> "migrated";
            case Exec e -> "exec";
            case Refused e -> "refused";
            case Failed e -> "failed";
        };
    }

    /** etcd's --wal-dir: every private etcd on the data dir gets the same external WAL. */
    record WalDirElsewhere(String walDir) implements Event {
        public String message() {
            return "the WAL lives in " + walDir + " (etcd's --wal-dir): every private etcd on the data dir gets it";
        }
    }

    /** The data dir is one member of a cluster: its private etcds rejoin the peers on the member's own peer URL. */
    record ClusterMember(int members, String initialCluster, String listenPeerUrls) implements Event {
        public String message() {
            return "this data dir is one of " + members + " members (" + initialCluster
                    + "): the private etcd rejoins its peers on " + listenPeerUrls + " while it migrates";
        }
    }

    /** A cluster member's plan crosses several minors: it walks them one restart (leg) at a time, serving between. */
    record RolloutChainPlanned(String member, String chain, int legs) implements Event {
        public String message() {
            return "member " + member + " walks " + chain + " in " + legs
                    + " restarts, serving as the real member between them until the cluster allows the next";
        }
    }

    /** The member serves and waits: the cluster does not allow its next restart yet ({@code members}: who it waits for). */
    record RolloutWaiting(String member, String leg, String why, List<String> members) implements Event {
        public String message() {
            return "member " + member + " waits before its restart " + leg + ": " + why;
        }
    }

    /** This runner holds the cluster's restart record: it may stop its member now (every other member serves). */
    record RestartRecordTaken(String holder, String from, String to, long revision) implements Event {
        public String message() {
            return "member " + holder + " holds the restart record (revision " + revision + ") and every other member"
                    + " serves: restarting it " + from + " -> " + to;
        }
    }

    /** The holder's member runs the new line and took a quorum write: the next member may restart. */
    record RestartRecordReleased(String holder, String to, long revision, boolean deleted) implements Event {
        public String message() {
            return deleted
                    ? "member " + holder + " runs " + to + " and released the restart record (revision " + revision
                            + ")"
                    : "member " + holder + " runs " + to + "; its restart record (revision " + revision
                            + ") was already released by another member's runner";
        }
    }

    /** Another runner's record whose member already answers at the line it names (its runner exec'd or crashed): deleted. */
    record RestartRecordTakenOver(String holder, String to, long revision) implements Event {
        public String message() {
            return "member " + holder + " answers at " + to + ", so its restart is over: its record (revision "
                    + revision + ") was deleted for it";
        }
    }

    /** Between two restarts the runner runs etcd as the real member (its arguments, URLs, environment), supervised. */
    record MemberServing(String version, long pid, String nextLeg) implements Event {
        public String message() {
            return "etcd " + version + " (pid " + pid + ") serves as the real member until the cluster allows "
                    + nextLeg;
        }
    }

    /** A backup left in the data dir by an earlier run goes to the backup dir now asked for. */
    record BackupMoved(String backup, String location) implements Event {
        public String message() {
            return "backup " + backup + " is still in the data dir; moving it to " + location;
        }
    }

    /** What a step left unfinished could not be removed now; the next start discards it. */
    record CleanupDeferred(String step, String reason) implements Event {
        public String message() {
            return "could not remove what " + step + " left unfinished (" + reason + "); the next start discards it";
        }

        public Level level() {
            return Level.WARN;
        }
    }

    /** Under the lock the data dir was found elsewhere than planned (another runner, or a finished recovery). */
    record Replanned(String planned, String now) implements Event {
        public String message() {
            return "the data dir is at " + now + " now, not " + planned + " as planned: planning again";
        }
    }

    /** The db's recorded storage version could not be read offline: the step's etcd judges the db. */
    record StorageVersionUnread(String db, String reason) implements Event {
        public String message() {
            return "could not read the storage version recorded in " + db + " (" + reason
                    + "): the step's etcd will judge the db";
        }

        public Level level() {
            return Level.WARN;
        }
    }

    /** --no-exec: the run ends after the migration instead of becoming etcd. */
    record NoExec(String dataDir, String version) implements Event {
        public String message() {
            return "--no-exec: exiting after the migration (" + dataDir + " at " + version + ")";
        }
    }

    /** A diary line with no fields of its own. */
    record Note(Level level, String message) implements Event {}

    /** The run's inputs as read: the data dir, the target, and the bin dir. */
    record RunStarted(String command, String dataDir, String target, String binDir) implements Event {
        public String message() {
            return "etcd-migrate: data dir " + dataDir + ", target " + target + ", bin dir " + binDir;
        }
    }

    /** What the data dir holds, and how that was learnt (version.txt, or --initial-version plus inference). */
    record DataDirRead(String dataDir, String version, String how) implements Event {
        public String message() {
            return "data dir " + dataDir + ": " + (version.isEmpty() ? "no etcd data" : version) + " (" + how + ")";
        }
    }

    /**
     * What the data itself says wrote it (ondisk/DataDetection): the storage, the newest line that wrote
     * it, the oldest line that may run on it now (its cluster or storage version), and the evidence.
     * {@code use} says what the runner does with it (plans from it, checks a label against it).
     */
    record DataDetected(String dataDir, String storage, String line, String floor, List<String> evidence, String use)
            implements Event {
        public String message() {
            return "data dir " + dataDir + ": the data says "
                    + (line.isEmpty()
                            ? "nothing about which etcd wrote it"
                            : "etcd " + line + " wrote it (" + storage
                                    + (floor.isEmpty() || floor.equals(line) ? "" : ", cluster at " + floor) + ")")
                    + "; " + use + "; evidence: " + String.join("; ", evidence);
        }
    }

    /**
     * The one tolerated disagreement of a label with the data: the data one line ahead where this runner
     * ran steps before, i.e. an upgrade step interrupted after its etcd ran and before version.txt was
     * written. The plan resumes it.
     */
    record InterruptedStepFound(String dataDir, String label, String dataLine, List<String> evidence) implements Event {
        public String message() {
            return "data dir " + dataDir + ": the data is at etcd " + dataLine + ", one line above " + label
                    + ": an interrupted step to "
                    + dataLine
                    + " had started etcd there before version.txt was written; the plan resumes it (evidence: "
                    + String.join("; ", evidence) + ")";
        }
    }

    /** One planned step; {@code replacesMemberDir} steps keep the old member dir as a backup. */
    record PlannedStep(int index, String kind, String description, String result, long diskBytes, String keeps) {}

    /**
     * The plan: no steps means only version.txt may change (the no-op). A data dir without etcd data has
     * no current version; {@code fresh} then says what the dir is ("does not exist", "holds no etcd data").
     */
    record PlanMade(String current, String target, List<PlannedStep> steps, String fresh) implements Event {
        public PlanMade {
            steps = List.copyOf(steps);
        }

        public String message() {
            if (current.isEmpty()) {
                return "data dir " + fresh + ": it will be created with mode 0700 if missing and record " + target
                        + "; etcd " + target.split("/", 2)[0] + " initializes it";
            }
            StringBuilder b = new StringBuilder("plan " + current + " -> " + target + ": "
                    + (steps.isEmpty() ? "no etcd needs to run" : steps.size() + " step(s)"));
            for (PlannedStep s : steps) {
                b.append("\n  ")
                        .append(s.index())
                        .append(". ")
                        .append(s.description())
                        .append(" [then version.txt = ")
                        .append(s.result())
                        .append(s.diskBytes() > 0 ? "; needs about " + mib(s.diskBytes()) + " free" : "")
                        .append(s.keeps().equals("nothing") ? "" : "; keeps " + s.keeps())
                        .append(']');
            }
            if (steps.isEmpty() && !current.equals(target)) {
                b.append("\n  same minor line and storage: record ")
                        .append(target)
                        .append(" in version.txt");
            }
            return b.toString();
        }
    }

    private static String mib(long bytes) {
        return (bytes + (1 << 20) - 1) / (1 << 20) + " MiB";
    }

    record StepStarted(int index, int total, String kind, String description) implements Event {
        public String message() {
            return "step " + index + "/" + total + ": " + description;
        }
    }

    record StepFinished(int index, int total, String kind, long tookMillis, String versionTxt) implements Event {
        public String message() {
            return "step " + index + "/" + total + " done in " + tookMillis + " ms; version.txt = " + versionTxt;
        }
    }

    /** The run's Failed (or Refused) event that follows says why in full. */
    record StepFailed(int index, int total, String kind, long tookMillis, String reason, String versionTxt)
            implements Event {
        public Level level() {
            return Level.ERROR;
        }

        public String message() {
            return "step " + index + "/" + total + " did not complete after " + tookMillis
                    + " ms; version.txt still says " + versionTxt;
        }
    }

    /** version.txt was rewritten (atomically). */
    record VersionRecorded(String version) implements Event {
        public String message() {
            return "version.txt = " + version;
        }
    }

    record EtcdStarted(String version, String dataDir, String clientUrl, String peerUrl, boolean rejoining, long pid)
            implements Event {
        public String message() {
            return "starting etcd " + version + " on " + dataDir + " (client " + clientUrl + ", peer " + peerUrl
                    + (rejoining ? ", rejoining its cluster's peers" : "") + ")";
        }
    }

    record EtcdAcceptedWrite(String version, long afterMillis) implements Event {
        public String message() {
            return "etcd-" + version + " accepted a write after " + afterMillis + " ms";
        }
    }

    record EtcdStopped(String version, boolean clean, long exitCode) implements Event {
        public Level level() {
            return clean ? Level.INFO : Level.WARN;
        }

        public String message() {
            return "etcd-" + version + (clean ? " stopped cleanly" : " stopped with exit code " + exitCode);
        }
    }

    /** A one-shot tool (etcdctl, etcdutl) ran; its arguments name no key value. */
    record ToolRan(String tool, List<String> args, int exitCode, long tookMillis) implements Event {
        public ToolRan {
            args = List.copyOf(args);
        }

        public String message() {
            return tool + " " + String.join(" ", args) + ": exit " + exitCode + " after " + tookMillis + " ms";
        }
    }

    /** One line a child process printed; {@code source} is the program and version ("etcd-3.6.16"). */
    record ChildOutput(String source, String line, boolean important) implements Event {
        public String message() {
            return line;
        }
    }

    /**
     * {@code how}: "copied" or "cloned" (a copy before an in-place step; a clone shares the member's blocks), or
     * "kept" (the member dir a swap replaced).
     */
    record BackupMade(String path, String version, String how) implements Event {
        public String message() {
            return how.equals("kept")
                    ? "kept the " + version + " member dir as backup " + path
                    : how + " the " + version + " member dir to backup " + path;
        }
    }

    record BackupDeleted(String path, int retention) implements Event {
        public String message() {
            return "deleted backup " + path + " (--backup-retention " + retention + ")";
        }
    }

    /** What a start found a crashed run had left, and what it did about it ({@code action}: e.g. "discarded", "finished"). */
    record Recovered(String what, String path, String action, String sentence) implements Event {
        public String message() {
            return sentence;
        }
    }

    /** member/ was copied into a work dir: a step that must leave the original alone until its swap works there. */
    record WorkCopied(String from, String to, long bytes) implements Event {
        public String message() {
            return "copied " + from + " to " + to + "; the original stays untouched until the swap";
        }
    }

    /** A step that did not finish left half-made copies; they were removed (a complete staging stays). */
    record WorkDiscarded(int index, int total, String dataDir, List<String> removed) implements Event {
        public WorkDiscarded {
            removed = List.copyOf(removed);
        }

        public String message() {
            return "step " + index + "/" + total + " did not finish: removed what it left in " + dataDir + ": "
                    + String.join(", ", removed);
        }
    }

    /** A release's binaries in the bin dir: {@code how} "installed" from {@code from}, or "already" there. */
    record Provisioned(String version, String binDir, List<String> binaries, String how, String from) implements Event {
        public Provisioned {
            binaries = List.copyOf(binaries);
        }

        public String message() {
            return how.equals("already")
                    ? "etcd " + version + ": already provisioned in " + binDir + " (" + from + ")"
                    : "etcd " + version + ": installed " + String.join(", ", binaries) + " from " + from;
        }
    }

    /**
     * A release's inputs and binaries matched their pins ({@code hashes} compared), or, with {@code recorded},
     * were written as the new pins of {@code platform}.
     */
    record ProvisionPins(String version, String platform, int hashes, boolean recorded) implements Event {
        public String message() {
            return recorded
                    ? "etcd " + version + " (" + platform + "): recorded " + hashes + " pins"
                    : "etcd " + version + " (" + platform + "): " + hashes + " hashes matched their pins";
        }
    }

    /** A source was asked for a release: {@code outcome} "trying" or "skipped" (with the reason). */
    record ProvisionSource(String version, String from, String outcome, String reason) implements Event {
        public String message() {
            return "etcd " + version + ": "
                    + (outcome.equals("trying") ? "trying " + from : from + " skipped: " + reason);
        }
    }

    /**
     * A private etcd rejoining its cluster cannot get in: {@code kind} of what etcd logged (e.g. address-not-local,
     * tls-unknown-ca, peers-refuse), whether that alone decides, how long it had no leader, and etcd's line.
     */
    record RejoinFailed(String version, String kind, boolean definitive, long leaderlessSeconds, String etcdLine)
            implements Event {
        public Level level() {
            return Level.ERROR;
        }

        public String message() {
            return "etcd " + version + " cannot rejoin its cluster (" + kind
                    + (definitive ? "" : ", no leader for " + leaderlessSeconds + " s") + "): " + etcdLine;
        }
    }

    /** Started as root on a data dir another user owns, the runner now runs as that user (and so will etcd). */
    record OwnerAdopted(String dataDir, int uid, int gid) implements Event {
        public String message() {
            return "data dir " + dataDir + " belongs to uid " + uid + " / gid " + gid
                    + ": running as that user, not root";
        }
    }

    /** A staged member dir replaced member/; version.txt says {@code version}. */
    record MemberSwapped(String dataDir, String version) implements Event {
        public String message() {
            return "moved the " + version + " member dir into " + dataDir + "; version.txt says " + version;
        }
    }

    /** Another runner holds the data dir's lock: this one waits up to the timeout. */
    record LockWaiting(String lock, long timeoutSeconds) implements Event {
        public String message() {
            return "waiting up to " + timeoutSeconds + " s for another etcd-migrate to release " + lock;
        }
    }

    /** Disk room for a backup copy and etcd starts; {@code clones}: the file system clones files, the copy costs no blocks. */
    record SpaceChecked(String forWhat, String dir, long neededBytes, boolean clones) implements Event {
        public String message() {
            return (clones
                            ? "the file system of " + dir
                                    + " clones files: the backup of member/ costs no data blocks; "
                            : "")
                    + forWhat + " needs about " + mib(neededBytes) + " free in " + dir;
        }
    }

    /** {@code etcdutl check v2store} found v2 content; {@code remains}: after a fresh snapshot it is still there (real v2 keys). */
    record V2ContentFound(String checker, String finding, boolean remains) implements Event {
        public String message() {
            return remains
                    ? "etcdutl " + checker + " still finds v2 content after a fresh snapshot: " + finding
                    : "etcdutl " + checker + " found v2 content (" + finding + "); etcd " + checker
                            + " runs once with --snapshot-count=1 so a fresh snapshot follows old v2 WAL entries";
        }
    }

    /**
     * The next line's etcd, started first (see {@code MinorUpgrade}), refused the data for v2 content at start with
     * {@code refusal} (one of its line's catalog lines); the data is as the previous line left it, and the
     * previous line's {@code etcdutl check v2store} decides what the content is.
     */
    record V2ContentRefused(String etcd, String refusal, String checker) implements Event {
        public String message() {
            return "etcd " + etcd + " refused the data at start for v2 content (\"" + refusal
                    + "\"); the data is still etcd " + checker + " data, and etcdutl " + checker
                    + " check v2store decides what the content is";
        }
    }

    /** A NOSPACE alarm of this member, found on arrival, was disarmed (the private etcd's quota leaves the db room). */
    record AlarmDisarmed(String type, String memberId, long dbBytes, long quotaBytes, long neededQuotaBytes)
            implements Event {
        public Level level() {
            return Level.WARN;
        }

        public String message() {
            return "the data carried a " + type
                    + " alarm of this member (raised before this run, when its db reached the quota it"
                    + " ran with): the db is " + mib(dbBytes) + " and this migration's etcd runs with a quota of "
                    + mib(quotaBytes)
                    + ", so it was disarmed. Give the target etcd --quota-backend-bytes of at least " + neededQuotaBytes
                    + " or it raises the alarm again";
        }
    }

    /** An etcd2 conversion read the v2 store: live keys (hidden and to-be-leased among them), expired ones dropped. */
    record V2StoreRead(long keys, long hidden, long leased, long expired, String digest) implements Event {
        public String message() {
            return "v2 store: " + keys + " live keys (" + hidden + " hidden, " + leased + " to lease), " + expired
                    + " with an expired TTL (not carried over); digest " + digest;
        }
    }

    /** A keyspace was compared with what it must hold ({@code when}: e.g. "after migrate", "after the restore") and matched. */
    record KeyspaceMatched(String digest, long keys, String when) implements Event {
        public String message() {
            return "the keyspace matches (digest " + digest + ", " + keys + " keys) " + when;
        }
    }

    /** A rollback to etcd2 dumped the v3 keys; revisions are not carried into v2. */
    record KeysDumped(long keys, long leased, long expired) implements Event {
        public String message() {
            return "dumped " + keys + " keys (" + leased + " with a lease TTL, " + expired
                    + " whose lease ran out left behind); revisions are not carried into v2";
        }
    }

    /** Keys written into a store: a conversion's lease re-attachment, or a rollback's load through /v2/keys. */
    record KeysLoaded(String into, long keys, long millis) implements Event {
        public String message() {
            return "loaded " + keys + " keys " + into + " in " + millis + " ms (" + keys * 1000 / Math.max(1, millis)
                    + " keys/s)";
        }
    }

    /** A private etcd reported a cluster-wide state a step waits for ({@code what}: cluster-version, storage-version, downgrade). */
    record EtcdReported(String version, String what, String value) implements Event {
        public String message() {
            return "etcd " + version + " reports " + what + " " + value;
        }
    }

    /** Long work's progress at a steady interval: done of total (0 = unknown) units, a rate, an estimate. */
    record Progress(String work, String unit, long done, long total, long perSecond, long etaSeconds) implements Event {
        public String message() {
            return work + ": " + done + (total > 0 ? " of " + total : "") + " " + unit + ", " + perSecond + " " + unit
                    + "/s" + (etaSeconds >= 0 ? ", about " + etaSeconds + " s left" : "");
        }
    }

    /** The data dir is at the target; the lock is still held. */
    record Migrated(String dataDir, String version) implements Event {
        public String message() {
            return "data dir " + dataDir + " is at " + version;
        }
    }

    record Exec(String binary, List<String> argv) implements Event {
        public Exec {
            argv = List.copyOf(argv);
        }

        public String message() {
            return "exec " + String.join(" ", argv);
        }
    }

    /** The run ends without a change to the data: exit 2 (bad input) or 3 (refused transition or contradiction). */
    record Refused(int exitCode, String reason) implements Event {
        public Level level() {
            return Level.ERROR;
        }

        public String message() {
            return reason;
        }
    }

    /** The run failed (exit 1); a step failure says which step and what version.txt says. */
    record Failed(int exitCode, String reason) implements Event {
        public Level level() {
            return Level.ERROR;
        }

        public String message() {
            return reason;
        }
    }
}
