package dev.etcdmigrate.datadir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The runner's corner of a data dir, {@code .etcd-migrate/}: the one place its layout is spelled out.
 * <ul>
 *   <li>{@code lock}: held from before planning until exec (see {@link DataDirLock});
 *   <li>{@code binaries}: what bundled binaries answered at earlier starts (see BinaryCheck);
 *   <li>{@code etcd-output.log}: every line the private etcds and tools printed in the last run with steps;
 *   <li>{@code backups/}: member dirs kept before destructive steps (default location, see {@link Backups});
 *   <li>{@code staging/}: a member dir being built, swapped in by {@link MemberSwap};
 *   <li>{@code restart-record}: the revision of the cluster's restart record while this member's runner holds it
 *       (a cluster rollout across minors, docs/ha.md), so a restarted runner finds and releases it;
 *   <li>{@code restore}: the marker of a restore from a snapshot (its hash and state, docs/restore.md);
 *   <li>{@code restore-backups/}: the member dirs a restore replaced, one per snapshot hash, never deleted;
 *   <li>{@code snapshot/} and any other entry: a step's work dir, discarded when the step did not finish.
 * </ul>
 */
public record OwnDir(Path path) {

    static final String NAME = ".etcd-migrate";
    private static final String LOCK = "lock";
    private static final String BINARIES = "binaries";
    private static final String ETCD_OUTPUT = "etcd-output.log";
    private static final String BACKUPS = "backups";
    private static final String STAGING = "staging";
    private static final String SNAPSHOT = "snapshot";
    private static final String RESTART_RECORD = "restart-record";
    private static final String RESTORE = "restore";
    private static final String RESTORE_BACKUPS = "restore-backups";
    private static final String RESTORE_STAGING = "restore-staging";
    /** Kept between runs; everything else is a step's work. */
    private static final Set<String> KEPT =
            Set.of(LOCK, BINARIES, ETCD_OUTPUT, BACKUPS, STAGING, RESTART_RECORD, RESTORE, RESTORE_BACKUPS);
    /** What a run that changed nothing may leave: its own bookkeeping. */
    private static final Set<String> BOOKKEEPING = Set.of(LOCK, BINARIES, ETCD_OUTPUT);

    static OwnDir of(Path dataDir) {
        return new OwnDir(dataDir.resolve(NAME));
    }

    public Path lock() {
        return path.resolve(LOCK);
    }

    public Path binaryChecks() {
        return path.resolve(BINARIES);
    }

    public Path etcdOutput() {
        return path.resolve(ETCD_OUTPUT);
    }

    public Path restartRecord() {
        return path.resolve(RESTART_RECORD);
    }

    /** The restore marker (docs/restore.md). */
    public Path restoreMarker() {
        return path.resolve(RESTORE);
    }

    /** Where a restore keeps the member dirs it replaced, one dir per snapshot hash. */
    public Path restoreBackups() {
        return path.resolve(RESTORE_BACKUPS);
    }

    /** Where a restore builds the new member dir, renamed into place once complete. */
    public Path restoreStaging() {
        return path.resolve(RESTORE_STAGING);
    }

    public Path backups() {
        return path.resolve(BACKUPS);
    }

    public Path staging() {
        return path.resolve(STAGING);
    }

    /** Where a snapshot downgrade keeps the snapshot between save and restore. */
    public Path snapshotWork() {
        return path.resolve(SNAPSHOT);
    }

    public boolean exists() {
        return Files.exists(path);
    }

    /** A fresh owner-only directory for a step's work, removed first if a crash left one. */
    public Path freshWorkDir(Path work) throws IOException {
        Trees.deleteRecursively(work);
        Permissions.ownerOnlyDir(path);
        return Permissions.ownerOnlyDir(work);
    }

    /** What steps made besides what is kept between runs (which MemberSwap and Backups manage). */
    public List<Path> workDirs() throws IOException {
        if (!Files.isDirectory(path)) return List.of();
        try (Stream<Path> entries = Files.list(path)) {
            return entries.filter(p -> !KEPT.contains(p.getFileName().toString()))
                    .sorted()
                    .toList();
        }
    }

    /** True when it holds only the runner's bookkeeping (lock, remembered checks, the last etcd output). */
    public boolean holdsOnlyBookkeeping() throws IOException {
        if (!Files.isDirectory(path)) return false;
        try (Stream<Path> entries = Files.list(path)) {
            return entries.allMatch(p -> BOOKKEEPING.contains(p.getFileName().toString()));
        }
    }
}
