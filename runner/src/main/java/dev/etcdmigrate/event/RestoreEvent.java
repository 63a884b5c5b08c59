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

    /**
     * What a restore would do, for {@code plan} (nothing changed): the snapshot's checks as {@link SnapshotChecked}
     * reports them, where the member's data would be kept ({@code backup}, empty: the data dir holds no member
     * data), the member it is restored as ({@code member}, {@code peerUrls}, {@code initialCluster}) under
     * {@code token}, the bump, {@code resumes} when an interrupted restore of this snapshot is finished, and the
     * version the restored data records ({@code restoredVersion}), the walk to the target's start.
     */
    record RestorePlanned(
            String snapshot,
            String sha256,
            String line,
            long revision,
            long bytes,
            List<String> members,
            String integrityHash,
            String restoreWith,
            String backup,
            String member,
            String peerUrls,
            String initialCluster,
            String token,
            long bumpRevision,
            boolean resumes,
            String restoredVersion)
            implements RestoreEvent {
        public RestorePlanned {
            members = List.copyOf(members);
        }

        public String message() {
            return "restore from snapshot " + snapshot + (resumes ? " (an interrupted restore, finished)" : "")
                    + ":\n  1. check it: sha256 " + sha256 + " (the one given), etcd's integrity hash " + integrityHash
                    + ", written by etcd " + line + ", revision " + revision + ", " + Bytes.mib(bytes) + ", members "
                    + members
                    + "\n  2. "
                    + (backup.isEmpty()
                            ? "no member data to keep"
                            : "keep the member's data as " + backup + " (moved, never deleted)")
                    + "\n  3. restore it with " + restoreWith + " as member " + member + " (peer URLs " + peerUrls
                    + ", initial cluster " + initialCluster + ") under cluster token " + token
                    + (bumpRevision > 0
                            ? ", revision raised by " + bumpRevision + ", the older ones marked compacted"
                            : ", the snapshot's revisions kept")
                    + "\n  4. record " + restoredVersion + " in version.txt, then walk to the target as planned below";
        }
    }
}
