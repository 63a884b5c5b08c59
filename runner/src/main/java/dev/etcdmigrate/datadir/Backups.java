package dev.etcdmigrate.datadir;

import dev.etcdmigrate.event.BackupEvent;
import dev.etcdmigrate.event.StepEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.log.ProgressMeter;
import dev.etcdmigrate.version.DataVersion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The member dirs kept before destructive steps: where they go, what they are called, how many stay.
 *
 * <p>A backup is a directory {@code <UTC stamp>-<member name>-<data dir hash>-<version>-<storage>} holding
 * {@code member/} and {@code version.txt} (what the data dir's version.txt must say when it is restored).
 * The member name and the first 8 hex digits of the SHA-256 of the data dir's absolute path make names from
 * different data dirs (another member on a shared volume, the events etcd of the same member) distinct,
 * so retention in a shared location only ever counts and deletes this data dir's backups. The stamp comes
 * first so that names sort by age.
 *
 * <p>A backup appears only complete: a copy is written to {@code <name>.partial}, fsynced and renamed; a
 * member dir swapped out is renamed into {@code .etcd-migrate/backups/} (same filesystem, atomic) and,
 * when the location is elsewhere, copied out the same way and then removed. {@link #recover} finishes or
 * discards what a crash left. Backups are taken only while no etcd runs on the data dir.
 */
public final class Backups {

    static final String PARTIAL = BackupNames.PARTIAL;
    static final String VERSION_FILE = "version.txt";

    private final DataDir dataDir;
    private final Path location;
    private final int retention;
    private final BackupNames names; // which backups are this data dir's, and new ones' names
    private final Log log;

    /** @param location where backups end up; empty means the data dir's own .etcd-migrate/backups */
    public Backups(DataDir dataDir, Optional<Path> location, int retention, String memberName, Log log) {
        this(dataDir, location, retention, memberName, log, Clock.systemUTC());
    }

    Backups(DataDir dataDir, Optional<Path> location, int retention, String memberName, Log log, Clock clock) {
        if (retention < 1) throw new IllegalArgumentException("retention must be at least 1, got " + retention);
        this.dataDir = dataDir;
        this.location = location.map(p -> p.toAbsolutePath().normalize()).orElse(dataDir.backupsDir());
        this.retention = retention;
        this.names = new BackupNames(dataDir, this.location, memberName, clock);
        this.log = log;
    }

    public Path location() {
        return location;
    }

    /**
     * Refuses, before anything is touched, a location the runner could not write or one inside the data
     * dir (etcd would see it as data, and a restore moving member/ aside could take it along).
     */
    public void refuseUnusableLocation() throws DataDir.UnusableDataDirException {
        if (!relocates()) return;
        if (location.startsWith(dataDir.path())) {
            throw new DataDir.UnusableDataDirException("backup dir " + location + " is inside the data dir "
                    + dataDir.path()
                    + "; leave --backup-dir / BACKUP_DIR unset for " + dataDir.backupsDir() + ", or choose a directory"
                    + " outside it (nothing was changed)");
        }
        Path existing = location;
        while (existing != null && !Files.exists(existing)) existing = existing.getParent();
        if (existing == null || !Files.isDirectory(existing) || !Files.isWritable(existing)) {
            throw new DataDir.UnusableDataDirException("backup dir " + location + " cannot be created or written"
                    + (existing == null
                            ? ""
                            : " (" + existing
                                    + (Files.isDirectory(existing) ? " is not writable" : " is not a directory") + ")")
                    + "; fix it or choose another with --backup-dir / BACKUP_DIR (nothing was changed)");
        }
    }

    /**
     * For a member swap: a new backup dir in .etcd-migrate/backups holding version.txt, for member/ to be
     * renamed into. Until member/ is in it, {@link #recover} treats it as debris.
     */
    Path startInDataDir(DataVersion replaced) throws IOException {
        Path dir = Permissions.ownerOnlyDir(dataDir.backupsDir()).resolve(newName(replaced));
        Permissions.ownerOnlyDir(dir);
        writeVersion(dir, replaced);
        Fsync.path(dir);
        Fsync.path(dataDir.backupsDir());
        return dir;
    }

    /**
     * After a swap: makes a backup started by {@link #startInDataDir} owner-only throughout, moves it to the
     * location when that is elsewhere, and applies retention; returns where it is now.
     */
    Path finish(Path inDataDir) throws IOException {
        Permissions.ownerOnlyTree(inDataDir);
        Path kept = relocates() ? relocate(inDataDir) : inDataDir;
        retain(kept);
        return kept;
    }

    /**
     * A durable owner-only copy of a member dir that stays in place (a step that runs etcd on it in place);
     * no etcd may run on it meanwhile. Returns the backup, after retention.
     */
    public Path copyOf(Path member, DataVersion version) throws IOException {
        return copyOf(member, java.util.Optional.empty(), version);
    }

    /** The same, with the member's WAL from etcd's --wal-dir outside it, kept as wal/ beside member/. */
    public Path copyOf(Path member, java.util.Optional<Path> walDir, DataVersion version) throws IOException {
        Path backup = ensureLocation().resolve(newName(version));
        Path partial = partialOf(backup);
        requireSpace(member, location);
        if (walDir.isPresent()) requireSpace(walDir.get(), location);
        Permissions.ownerOnlyDir(partial);
        boolean cloned;
        try (ProgressMeter progress = ProgressMeter.watching(
                log,
                "copying member/ to backup " + backup.getFileName(),
                "bytes",
                Trees.size(member) + (walDir.isPresent() ? Trees.size(walDir.get()) : 0),
                () -> Trees.size(partial))) {
            cloned = Trees.copyDurably(member, partial.resolve("member"));
            if (walDir.isPresent()) cloned &= Trees.copyDurably(walDir.get(), partial.resolve("wal"));
        }
        writeVersion(partial, version);
        Fsync.path(partial);
        Files.move(partial, backup, StandardCopyOption.ATOMIC_MOVE);
        Fsync.path(location);
        log.emit(new BackupEvent.BackupMade(backup.toString(), version.toString(), cloned ? "cloned" : "copied"));
        retain(backup);
        return backup;
    }

    /**
     * Before a step that backs {@code member} up with {@link #copyOf} and then starts etcd on the data
     * {@code etcdStarts} times: refuses unless both fit, with a margin ({@link DiskSpace}). Otherwise the
     * backup could fit and etcd run out of room afterwards, and the kept backup would leave the original
     * etcd no room to start again.
     */
    public void requireRoomForCopyAndStarts(Path member, int etcdStarts, String forWhat)
            throws DiskSpace.NotEnoughSpaceException, IOException {
        long copy = Trees.size(member);
        long etcd = DiskSpace.needed(0, etcdStarts);
        Path backupStore = location;
        while (!Files.exists(backupStore)) backupStore = backupStore.getParent();
        if (Files.getFileStore(backupStore).equals(Files.getFileStore(dataDir.path()))) {
            boolean clones = FileClone.supported(member.getParent());
            if (clones) {
                copy = 0; // a clone shares the member's blocks: what etcd then rewrites is within its own allowance
            }
            log.emit(new BackupEvent.SpaceChecked(forWhat, dataDir.path().toString(), copy + etcd, clones));
            DiskSpace.require(
                    dataDir.path(),
                    copy + etcd,
                    forWhat + " (a " + DiskSpace.mib(copy) + " backup of member/, then " + etcdStarts
                            + " etcd start(s) with " + DiskSpace.mib(DiskSpace.WAL_SEGMENT)
                            + " WAL segments, and a margin)");
        } else {
            log.emit(new BackupEvent.SpaceChecked(forWhat, backupStore.toString(), copy, false));
            DiskSpace.require(backupStore, copy, forWhat + " (a backup of member/)");
            DiskSpace.require(
                    dataDir.path(),
                    etcd,
                    forWhat + " (" + etcdStarts + " etcd start(s) with " + DiskSpace.mib(DiskSpace.WAL_SEGMENT)
                            + " WAL segments, and a margin)");
        }
    }

    /**
     * Finishes what a crashed run left: deletes partial copies (only this data dir's in a shared location)
     * and backup dirs that never received member/; when the location is elsewhere, moves every backup
     * still in .etcd-migrate/backups there, then applies retention.
     */
    public void recover() throws IOException {
        // a clone probe (FileClone.supported) whose delete a crash or power cut undid
        for (Path entry : BackupNames.list(dataDir.path())) {
            if (entry.getFileName().toString().startsWith(FileClone.PROBE_PREFIX) && Files.isRegularFile(entry)) {
                deleteLeftover(entry, "clone-probe", "deleting a file-clone probe a previous run left");
            }
        }
        Path own = dataDir.backupsDir();
        for (Path entry : BackupNames.list(own)) {
            String name = entry.getFileName().toString();
            if (name.endsWith(PARTIAL)) {
                deleteLeftover(entry, "partial-backup", "deleting an incomplete backup copy a previous run left");
            } else if (BackupName.parse(name).isPresent() && !Files.isDirectory(entry.resolve("member"))) {
                deleteLeftover(
                        entry,
                        "empty-backup-dir",
                        "deleting a backup dir a previous run left before moving member/ into it");
            }
        }
        if (!relocates()) {
            // a swap interrupted after its renames never got to finish(); modes are cheap to set again
            for (Path backup : BackupNames.list(own)) {
                if (names.mine(backup.getFileName().toString())) Permissions.ownerOnlyTree(backup);
            }
            return;
        }
        for (Path entry : BackupNames.list(location)) {
            String name = entry.getFileName().toString();
            if (name.endsWith(PARTIAL) && names.mine(name.substring(0, name.length() - PARTIAL.length()))) {
                deleteLeftover(entry, "partial-backup", "deleting an incomplete backup copy a previous run left");
            }
        }
        Path last = null;
        for (Path backup : BackupNames.sortedOldestFirst(BackupNames.list(own).stream()
                .filter(p -> BackupName.of(p).isPresent())
                .toList())) {
            log.emit(new BackupEvent.BackupMoved(backup.toString(), location.toString()));
            last = relocate(backup);
        }
        if (last != null) retain(last);
    }

    /** Deletes what a previous run left at {@code entry}, saying what it was ({@code why}, then the path). */
    private void deleteLeftover(Path entry, String what, String why) throws IOException {
        log.emit(new StepEvent.Recovered(what, entry.toString(), "deleted", why + ": " + entry));
        Trees.deleteRecursively(entry);
    }

    /** Copies a complete backup from .etcd-migrate/backups to the location, then removes the original. */
    private Path relocate(Path inDataDir) throws IOException {
        Path target = ensureLocation()
                .resolve(names.relocatedName(inDataDir.getFileName().toString()));
        if (!Files.exists(target)) { // it exists when a crash came after the rename: that copy is complete
            Path partial = partialOf(target);
            Trees.deleteRecursively(partial);
            requireSpace(inDataDir, location);
            try (ProgressMeter progress = ProgressMeter.watching(
                    log,
                    "moving backup " + inDataDir.getFileName() + " to " + location,
                    "bytes",
                    Trees.size(inDataDir),
                    () -> Trees.size(partial))) {
                Trees.copyDurably(inDataDir, partial);
            }
            Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
            Fsync.path(location);
        }
        Trees.deleteRecursively(inDataDir);
        Fsync.path(dataDir.backupsDir());
        log.emit(new StepEvent.Recovered(
                "backup", target.toString(), "moved", "moved backup " + inDataDir + " to " + target));
        try (Stream<Path> left = Files.list(dataDir.backupsDir())) {
            if (left.findAny().isEmpty()) Files.delete(dataDir.backupsDir());
        }
        return target;
    }

    /**
     * Deletes this data dir's oldest complete backups beyond the retention count, never {@code justMade}
     * (whatever its stamp says, should the clock have gone back).
     */
    void retain(Path justMade) throws IOException {
        List<Path> others = new ArrayList<>(complete());
        others.remove(justMade);
        int excess = others.size() - (retention - 1);
        for (int i = 0; i < excess; i++) {
            Path old = others.get(i);
            Trees.deleteRecursively(old);
            log.emit(new BackupEvent.BackupDeleted(old.toString(), retention));
        }
        if (excess > 0) Fsync.path(location);
    }

    private Path ensureLocation() throws IOException {
        if (!Files.isDirectory(location)) {
            Permissions.ownerOnlyDir(location);
        }
        return location;
    }

    private static Path partialOf(Path backup) {
        return backup.resolveSibling(backup.getFileName() + PARTIAL);
    }

    private static void writeVersion(Path backup, DataVersion version) throws IOException {
        AtomicFile.write(backup.resolve(VERSION_FILE), version.format());
    }

    /** A copy that would fill the disk fails before it starts, with the numbers. */
    private static void requireSpace(Path tree, Path into) throws IOException {
        long need = Trees.size(tree);
        long free = Files.getFileStore(into).getUsableSpace();
        if (free < need) {
            throw new IOException("not enough space for a backup in " + into + ": " + tree + " needs " + need
                    + " bytes, " + free + " are free; free space there or choose another --backup-dir / BACKUP_DIR");
        }
    }

    /** True when backups leave the data dir after the swap's rename. */
    boolean relocates() {
        return names.relocates();
    }

    /** This data dir's complete backups, oldest first ({@link BackupNames#complete}). */
    public List<Path> complete() throws IOException {
        return names.complete();
    }

    /** This data dir's newest complete backup, if any: the way back named for damaged data. Reads only. */
    public Optional<Path> newest() throws IOException {
        return names.newest();
    }

    String newName(DataVersion version) throws IOException {
        return names.newName(version);
    }
}
