package dev.etcdmigrate.event;

import static java.util.Map.entry;

import java.util.Map;

/**
 * The JSON "event" name of each event type, part of the operator contract: spelled out per type, so renaming a
 * record changes no name. A table, not a switch over the sealed types: such a switch is linked at its first use
 * by generating a class with a test per case, a few milliseconds of every start before its first line. The
 * names and fields are pinned by src/test/resources/dev/etcdmigrate/event/events.golden (EventContractTest, which
 * also fails on an event type without a name here).
 */
final class EventNames {

    private EventNames() {}

    private static final Map<Class<? extends Event>, String> BY_TYPE = Map.ofEntries(
            entry(Event.Note.class, "note"),
            // RunEvent
            entry(RunEvent.Exec.class, "exec"),
            entry(RunEvent.Failed.class, "failed"),
            entry(RunEvent.LockWaiting.class, "lock-waiting"),
            entry(RunEvent.Migrated.class, "migrated"),
            entry(RunEvent.NoExec.class, "no-exec"),
            entry(RunEvent.OwnerAdopted.class, "owner-adopted"),
            entry(RunEvent.Refused.class, "refused"),
            entry(RunEvent.RunStarted.class, "run-started"),
            entry(RunEvent.RunSummary.class, "run-summary"),
            // DecisionEvent
            entry(DecisionEvent.ClusterMember.class, "cluster-member"),
            entry(DecisionEvent.DataDetected.class, "data-detected"),
            entry(DecisionEvent.DataDirRead.class, "data-dir-read"),
            entry(DecisionEvent.FlagTranslated.class, "flag-translated"),
            entry(DecisionEvent.InterruptedStepFound.class, "interrupted-step-found"),
            entry(DecisionEvent.MembersFromData.class, "members-from-data"),
            entry(DecisionEvent.NewCluster.class, "new-cluster"),
            entry(DecisionEvent.PlanMade.class, "plan-made"),
            entry(DecisionEvent.Replanned.class, "replanned"),
            entry(DecisionEvent.StorageVersionUnread.class, "storage-version-unread"),
            entry(DecisionEvent.WalDirElsewhere.class, "wal-dir-elsewhere"),
            // StepEvent
            entry(StepEvent.CleanupDeferred.class, "cleanup-deferred"),
            entry(StepEvent.MemberSwapped.class, "member-swapped"),
            entry(StepEvent.Progress.class, "progress"),
            entry(StepEvent.Recovered.class, "recovered"),
            entry(StepEvent.StepFailed.class, "step-failed"),
            entry(StepEvent.StepFinished.class, "step-finished"),
            entry(StepEvent.StepStarted.class, "step-started"),
            entry(StepEvent.VersionRecorded.class, "version-recorded"),
            entry(StepEvent.WorkCopied.class, "work-copied"),
            entry(StepEvent.WorkDiscarded.class, "work-discarded"),
            // RestoreEvent
            entry(RestoreEvent.AlreadyRestored.class, "already-restored"),
            entry(RestoreEvent.RestoreBackupKept.class, "restore-backup-kept"),
            entry(RestoreEvent.RestorePlanned.class, "restore-planned"),
            entry(RestoreEvent.SnapshotChecked.class, "snapshot-checked"),
            entry(RestoreEvent.SnapshotRestored.class, "snapshot-restored"),
            // BackupEvent
            entry(BackupEvent.BackupDeleted.class, "backup-deleted"),
            entry(BackupEvent.BackupMade.class, "backup-made"),
            entry(BackupEvent.BackupMoved.class, "backup-moved"),
            entry(BackupEvent.SpaceChecked.class, "space-checked"),
            // EtcdEvent
            entry(EtcdEvent.AlarmDisarmed.class, "alarm-disarmed"),
            entry(EtcdEvent.ChildOutput.class, "child-output"),
            entry(EtcdEvent.EtcdAcceptedWrite.class, "etcd-accepted-write"),
            entry(EtcdEvent.EtcdReported.class, "etcd-reported"),
            entry(EtcdEvent.EtcdStarted.class, "etcd-started"),
            entry(EtcdEvent.EtcdStopped.class, "etcd-stopped"),
            entry(EtcdEvent.RejoinFailed.class, "rejoin-failed"),
            entry(EtcdEvent.ToolRan.class, "tool-ran"),
            // KeysEvent
            entry(KeysEvent.KeysDumped.class, "keys-dumped"),
            entry(KeysEvent.KeysLoaded.class, "keys-loaded"),
            entry(KeysEvent.KeyspaceMatched.class, "keyspace-matched"),
            entry(KeysEvent.V2ContentFound.class, "v2-content-found"),
            entry(KeysEvent.V2ContentRefused.class, "v2-content-refused"),
            entry(KeysEvent.V2StoreRead.class, "v2-store-read"),
            // ProvisionEvent
            entry(ProvisionEvent.ProvisionPins.class, "provision-pins"),
            entry(ProvisionEvent.ProvisionSource.class, "provision-source"),
            entry(ProvisionEvent.Provisioned.class, "provisioned"),
            // RolloutEvent
            entry(RolloutEvent.RolloutChainPlanned.class, "rollout-chain-planned"),
            entry(RolloutEvent.RolloutWaiting.class, "rollout-waiting"),
            entry(RolloutEvent.RestartRecordTaken.class, "restart-record-taken"),
            entry(RolloutEvent.RestartRecordReleased.class, "restart-record-released"),
            entry(RolloutEvent.RestartRecordTakenOver.class, "restart-record-taken-over"),
            entry(RolloutEvent.MemberServing.class, "member-serving"),
            entry(RolloutEvent.JoiningAtClusterLine.class, "joining-at-cluster-line"),
            entry(RolloutEvent.JoinedAtClusterLine.class, "joined-at-cluster-line"));

    static String of(Event event) {
        String name = BY_TYPE.get(event.getClass());
        if (name == null) throw new IllegalStateException(event.getClass().getName() + " has no event name");
        return name;
    }
}
