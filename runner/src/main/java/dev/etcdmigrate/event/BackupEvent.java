package dev.etcdmigrate.event;

/**
 * Backups of the member dir and the disk room they need.
 */
public sealed interface BackupEvent extends Event {

    record BackupDeleted(String path, int retention) implements BackupEvent {
        public String message() {
            return "deleted backup " + path + " (--backup-retention " + retention + ")";
        }
    }

    /**
     * {@code how}: "copied" or "cloned" (a copy before an in-place step; a clone shares the member's blocks), or
     * "kept" (the member dir a swap replaced).
     */
    record BackupMade(String path, String version, String how) implements BackupEvent {
        public String message() {
            return how.equals("kept")
                    ? "kept the " + version + " member dir as backup " + path
                    : how + " the " + version + " member dir to backup " + path;
        }
    }

    /** A backup left in the data dir by an earlier run goes to the backup dir now asked for. */
    record BackupMoved(String backup, String location) implements BackupEvent {
        public String message() {
            return "backup " + backup + " is still in the data dir; moving it to " + location;
        }
    }

    /** Disk room for a backup copy and etcd starts; {@code clones}: the file system clones files, the copy costs no blocks. */
    record SpaceChecked(String forWhat, String dir, long neededBytes, boolean clones) implements BackupEvent {
        public String message() {
            return (clones
                            ? "the file system of " + dir
                                    + " clones files: the backup of member/ costs no data blocks; "
                            : "")
                    + forWhat + " needs about " + Bytes.mib(neededBytes) + " free in " + dir;
        }
    }
}
