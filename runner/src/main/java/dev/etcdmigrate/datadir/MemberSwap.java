package dev.etcdmigrate.datadir;

import dev.etcdmigrate.event.BackupEvent;
import dev.etcdmigrate.event.StepEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.log.ProgressMeter;
import dev.etcdmigrate.version.DataVersion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Optional;

/**
 * Replaces the data dir's member/ with one built in .etcd-migrate/staging/, keeping the old one as a
 * backup, so that a crash at any moment leaves a complete member/ in place or a staged one that the
 * next start finishes moving in ({@link #recover}).
 *
 * <p>Staging protocol: a tool writes staging/data/member; {@link #markComplete} records the version it is
 * at in staging/complete (fsynced); {@link #swap} renames member/ to a backup, staging/data/member to
 * member/, writes version.txt, and only then removes staging/. The backup is then finished by
 * {@link Backups} (owner-only modes, moved to its location, retention).
 */
public final class MemberSwap {

    private static final String COMPLETE = "complete";

    private final DataDir dataDir;
    private final Backups backups;
    private final Log log;

    public MemberSwap(DataDir dataDir, Backups backups, Log log) {
        this.dataDir = dataDir;
        this.backups = backups;
        this.log = log;
    }

    /** A fresh staging dir; returns the data dir a restore tool must create (it holds the staged member/). */
    public Path prepare() throws IOException {
        return dataDir.own().freshWorkDir(dataDir.staging()).resolve("data");
    }

    /**
     * A copy of member/ in staging/work/member, for a step that must leave the original alone until the
     * swap; returns that work data dir. An interrupted staging (no marker) is discarded as a whole.
     */
    public Path copyMemberToWork() throws IOException {
        Permissions.ownerOnlyDir(dataDir.staging());
        Path work = Permissions.ownerOnlyDir(dataDir.staging().resolve("work"));
        long bytes = Trees.size(dataDir.member());
        try (ProgressMeter progress = ProgressMeter.watching(
                log, "copying member/ to " + dataDir.path().relativize(work), "bytes", bytes, () -> Trees.size(work))) {
            Trees.copy(dataDir.member(), work.resolve("member"));
        }
        log.emit(new StepEvent.WorkCopied(dataDir.member().toString(), work.toString(), bytes));
        return work;
    }

    public Path stagedDataDir() {
        return dataDir.staging().resolve("data");
    }

    public Path stagedMember() {
        return stagedDataDir().resolve("member");
    }

    public void markComplete(DataVersion staged) throws IOException {
        if (!Files.isDirectory(stagedMember())) {
            throw new IOException("nothing staged at " + stagedMember());
        }
        // the marker lets recovery swap the staged member in: it must not outlive what it vouches for
        Trees.syncTree(stagedMember());
        Fsync.path(dataDir.staging());
        AtomicFile.write(
                dataDir.staging().resolve(COMPLETE), staged.format()); // the marker is either absent or complete
    }

    /** Moves the staged member in; returns where the old member/ went (its backup), or null without one. */
    public Path swap(DataVersion replaced, DataVersion staged) throws IOException {
        Path backup = null;
        if (Files.exists(dataDir.member())) {
            // a rename on the data dir's filesystem: atomic, so a crash leaves member/ here or in the backup
            backup = backups.startInDataDir(replaced);
            Files.move(dataDir.member(), backup.resolve("member"), StandardCopyOption.ATOMIC_MOVE);
            Fsync.path(backup);
            log.emit(new BackupEvent.BackupMade(backup.toString(), replaced.toString(), "kept"));
        }
        if (Files.exists(stagedMember())) {
            Files.move(stagedMember(), dataDir.member(), StandardCopyOption.ATOMIC_MOVE);
        }
        Fsync.path(dataDir.path());
        dataDir.writeVersion(staged);
        log.emit(new StepEvent.MemberSwapped(dataDir.path().toString(), staged.toString()));
        Trees.deleteRecursively(dataDir.staging());
        return backup == null ? null : backups.finish(backup);
    }

    /**
     * Finishes or discards what a crashed run left in staging/: a complete staging is moved in (its
     * version is returned), an incomplete one is deleted.
     */
    public Optional<DataVersion> recover() throws IOException, DataDir.MalformedVersionFileException {
        Path staging = dataDir.staging();
        if (!Files.isDirectory(staging)) {
            return Optional.empty();
        }
        Path marker = staging.resolve(COMPLETE);
        if (!Files.isRegularFile(marker)) {
            log.emit(new StepEvent.Recovered(
                    "staging",
                    staging.toString(),
                    "discarded",
                    "discarding an incomplete staging dir a previous run left: " + staging));
            Trees.deleteRecursively(dataDir.staging());
            return Optional.empty();
        }
        DataVersion staged;
        try {
            staged = DataVersion.parse(Files.readString(marker, StandardCharsets.UTF_8));
        } catch (IllegalArgumentException | IOException e) {
            // member/ is touched only after a complete marker exists: an unreadable one means the swap never began
            log.emit(new StepEvent.Recovered(
                    "staging",
                    staging.toString(),
                    "discarded",
                    "discarding a staging dir whose completion marker is unreadable (" + e.getMessage() + "): "
                            + staging));
            Trees.deleteRecursively(dataDir.staging());
            return Optional.empty();
        }
        log.emit(new StepEvent.Recovered(
                "staging",
                staging.toString(),
                "finished",
                "a previous run was interrupted while swapping in a " + staged + " member dir; finishing the swap"));
        DataVersion replaced = dataDir.readVersion().orElse(staged);
        if (Files.exists(stagedMember())) {
            swap(replaced, staged);
        } else {
            // both renames happened; only version.txt and the cleanup may be missing
            dataDir.writeVersion(staged);
            Trees.deleteRecursively(dataDir.staging());
        }
        return Optional.of(staged);
    }

    /**
     * After a failed step: a staging dir without the completion marker is deleted (half-made copies only
     * fill the disk); a complete one stays for {@link #recover} to finish. Returns whether one was deleted.
     */
    public boolean discardIncomplete() throws IOException {
        if (!Files.isDirectory(dataDir.staging())
                || Files.isRegularFile(dataDir.staging().resolve(COMPLETE))) {
            return false;
        }
        Trees.deleteRecursively(dataDir.staging());
        return true;
    }
}
