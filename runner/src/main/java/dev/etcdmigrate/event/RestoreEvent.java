package dev.etcdmigrate.event;

import java.util.List;

/** A member restored from a snapshot (docs/restore.md): the checks, the kept data, the restore, a restart after it. */
public sealed interface RestoreEvent extends Event {

    /**
     * The snapshot passed every check before anything changed. {@code integrityHash}: "verified" (etcd's appended
     * hash matched the rest) or "absent" (a member's db copy carries none).
     */
    record SnapshotChecked(
            String snapshot,
            String sha256,
            String line,
            long revision,
            long bytes,
            List<String> members,
            String integrityHash,
            String restoreWith)
            implements RestoreEvent {
        public SnapshotChecked {
            members = List.copyOf(members);
        }

        public String message() {
            return "snapshot " + snapshot + " checked: sha256 " + sha256 + ", etcd's integrity hash " + integrityHash
                    + ", written by etcd " + line + ", revision " + revision + ", " + Bytes.mib(bytes)
                    + ", members " + members + "; restoring it with " + restoreWith;
        }
    }

    /** The member's data before the restore, moved aside, never deleted; {@code wayBack}: how to return to it. */
    record RestoreBackupKept(String path, String wayBack) implements RestoreEvent {
        public String message() {
            return "kept the member's data before the restore as " + path + " (never deleted); the way back: "
                    + wayBack;
        }
    }

    /** The snapshot is this member's data now; {@code bumpRevision} 0: the snapshot's revisions kept. */
    record SnapshotRestored(String dataDir, String sha256, String version, String token, long bumpRevision)
            implements RestoreEvent {
        public String message() {
            return "restored " + dataDir + " from snapshot " + sha256 + " with " + version + " (cluster token " + token
                    + (bumpRevision > 0
                            ? ", revision raised by " + bumpRevision + ", the older ones marked compacted)"
                            : ", the snapshot's revisions kept)");
        }
    }

    /** The data dir already holds this snapshot's restore: a restarted member starts it, no second restore. */
    record AlreadyRestored(String dataDir, String sha256) implements RestoreEvent {
        public String message() {
            return dataDir + " is already restored from snapshot " + sha256 + ": starting the restored data";
        }
    }
}
