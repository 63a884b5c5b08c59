package dev.etcdmigrate.event;

/**
 * What the runner did or decided, as data. Text logs, JSON logs and tests subscribe to these (see
 * {@code log.Log}); nothing here ever carries a key's value. Each event knows its kebab-case name
 * (the JSON "event" field) and the sentence an operator reads. The events live in a few files by
 * subject, each a sealed sub-interface listing its records in the order of the contract (events.golden).
 */
public sealed interface Event
        permits Event.Note,
                RunEvent,
                DecisionEvent,
                StepEvent,
                BackupEvent,
                EtcdEvent,
                KeysEvent,
                ProvisionEvent,
                RestoreEvent,
                RolloutEvent {

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
            // RunEvent
            case RunEvent.Exec e -> "exec";
            case RunEvent.Failed e -> "failed";
            case RunEvent.LockWaiting e -> "lock-waiting";
            case RunEvent.Migrated e -> "migrated";
            case RunEvent.NoExec e -> "no-exec";
            case RunEvent.OwnerAdopted e -> "owner-adopted";
            case RunEvent.Refused e -> "refused";
            case RunEvent.RunStarted e -> "run-started";
            case RunEvent.RunSummary e -> "run-summary";
            // DecisionEvent
            case DecisionEvent.ClusterMember e -> "cluster-member";
            case DecisionEvent.DataDetected e -> "data-detected";
            case DecisionEvent.DataDirRead e -> "data-dir-read";
            case DecisionEvent.FlagTranslated e -> "flag-translated";
            case DecisionEvent.InterruptedStepFound e -> "interrupted-step-found";
            case DecisionEvent.MembersFromData e -> "members-from-data";
            case DecisionEvent.NewCluster e -> "new-cluster";
            case DecisionEvent.PlanMade e -> "plan-made";
            case DecisionEvent.Replanned e -> "replanned";
            case DecisionEvent.StorageVersionUnread e -> "storage-version-unread";
            case DecisionEvent.WalDirElsewhere e -> "wal-dir-elsewhere";
            // StepEvent
            case StepEvent.CleanupDeferred e -> "cleanup-deferred";
            case StepEvent.MemberSwapped e -> "member-swapped";
            case StepEvent.Progress e -> "progress";
            case StepEvent.Recovered e -> "recovered";
            case StepEvent.StepFailed e -> "step-failed";
            case StepEvent.StepFinished e -> "step-finished";
            case StepEvent.StepStarted e -> "step-started";
            case StepEvent.VersionRecorded e -> "version-recorded";
            case StepEvent.WorkCopied e -> "work-copied";
            case StepEvent.WorkDiscarded e -> "work-discarded";
            // RestoreEvent
            case RestoreEvent.AlreadyRestored e -> "already-restored";
            case RestoreEvent.RestoreBackupKept e -> "restore-backup-kept";
            case RestoreEvent.RestorePlanned e -> "restore-planned";
            case RestoreEvent.SnapshotChecked e -> "snapshot-checked";
            case RestoreEvent.SnapshotRestored e -> "snapshot-restored";
            // BackupEvent
            case BackupEvent.BackupDeleted e -> "backup-deleted";
            case BackupEvent.BackupMade e -> "backup-made";
            case BackupEvent.BackupMoved e -> "backup-moved";
            case BackupEvent.SpaceChecked e -> "space-checked";
            // EtcdEvent
            case EtcdEvent.AlarmDisarmed e -> "alarm-disarmed";
            case EtcdEvent.ChildOutput e -> "child-output";
            case EtcdEvent.EtcdAcceptedWrite e -> "etcd-accepted-write";
            case EtcdEvent.EtcdReported e -> "etcd-reported";
            case EtcdEvent.EtcdStarted e -> "etcd-started";
            case EtcdEvent.EtcdStopped e -> "etcd-stopped";
            case EtcdEvent.RejoinFailed e -> "rejoin-failed";
            case EtcdEvent.ToolRan e -> "tool-ran";
            // KeysEvent
            case KeysEvent.KeysDumped e -> "keys-dumped";
            case KeysEvent.KeysLoaded e -> "keys-loaded";
            case KeysEvent.KeyspaceMatched e -> "keyspace-matched";
            case KeysEvent.V2ContentFound e -> "v2-content-found";
            case KeysEvent.V2ContentRefused e -> "v2-content-refused";
            case KeysEvent.V2StoreRead e -> "v2-store-read";
            // ProvisionEvent
            case ProvisionEvent.ProvisionPins e -> "provision-pins";
            case ProvisionEvent.ProvisionSource e -> "provision-source";
            case ProvisionEvent.Provisioned e -> "provisioned";
            // RolloutEvent
            case RolloutEvent.RolloutChainPlanned e -> "rollout-chain-planned";
            case RolloutEvent.RolloutWaiting e -> "rollout-waiting";
            case RolloutEvent.RestartRecordTaken e -> "restart-record-taken";
            case RolloutEvent.RestartRecordReleased e -> "restart-record-released";
            case RolloutEvent.RestartRecordTakenOver e -> "restart-record-taken-over";
            case RolloutEvent.MemberServing e -> "member-serving";
            case RolloutEvent.JoiningAtClusterLine e -> "joining-at-cluster-line";
            case RolloutEvent.JoinedAtClusterLine e -> "joined-at-cluster-line";
        };
    }

    /** A diary line with no fields of its own. */
    record Note(Level level, String message) implements Event {}
}
