package dev.etcdmigrate.restore;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.config.Peers;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.DataDirLock;
import dev.etcdmigrate.datadir.DiskSpace;
import dev.etcdmigrate.datadir.DurableMove;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.RefusedException;
import dev.etcdmigrate.event.RestoreEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.DamagedFileException;
import dev.etcdmigrate.ondisk.DbSnapshot;
import dev.etcdmigrate.plan.Planner;
import dev.etcdmigrate.plan.RefusedTransitionException;
import dev.etcdmigrate.step.EtcdOperations;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Restores this member from one snapshot, once per snapshot hash, before the run plans anything (docs/restore.md):
 * checks the snapshot while nothing is changed, then under the data dir's lock moves the member dir aside (kept,
 * never deleted), restores into a staging dir with the snapshot's own line's tool under the member's name, peer
 * URLs and a token derived from the hash (a new cluster ID), renames it into place, records the tool's release in
 * version.txt and marks the restore done. Every point resumes from the marker after a crash.
 */
public final class SnapshotRestore {

    /** What a restore needs of etcd: its one restore call; built only when a restore runs. */
    public interface Tools {
        EtcdOperations operations() throws IOException;

        /** The bundled restore tool of {@code release}, checked present before anything changes. */
        void requireTool(Release release) throws MigrateException;

        /**
         * Refuses (before anything changes) when the start after the restore could not walk the data the restore
         * leaves ({@code restored}) to the target: a refusal after the restore would leave the member restored and
         * stuck there. Nothing to refuse by default.
         */
        default void checkWalk(DataVersion restored) throws MigrateException {}
    }

    private final RunConfig options;
    private final RunConfig.Restore request;
    private final DataDir dataDir;
    private final Catalog catalog;
    private final Tools tools;
    private final Log log;

    public SnapshotRestore(RunConfig options, DataDir dataDir, Catalog catalog, Tools tools, Log log) {
        this.options = options;
        this.request = options.restore().orElseThrow();
        this.dataDir = dataDir;
        this.catalog = catalog;
        this.tools = tools;
        this.log = log;
    }

    static String token(String sha256) {
        return RestoreIdentity.token(sha256);
    }

    /** Restores unless this snapshot's restore is already done; then the run goes on as any start. */
    public void run() throws IOException, InterruptedException, MigrateException {
        Path markerFile = dataDir.own().restoreMarker();
        if (RestoreMarker.read(markerFile)
                .filter(m -> m.restoredFrom(request.sha256()))
                .isPresent()) {
            log.emit(new RestoreEvent.AlreadyRestored(dataDir.path().toString(), request.sha256()));
            return;
        }
        Checked checked = check(true);
        if (!dataDir.exists()) dataDir.createOwnerOnly();
        try (DataDirLock lock = DataDirLock.acquire(dataDir, options.lockTimeout(), log)) {
            // another runner may have restored while this one waited for the lock
            Optional<RestoreMarker> marker = RestoreMarker.read(markerFile);
            if (marker.filter(m -> m.restoredFrom(request.sha256())).isPresent()) {
                log.emit(new RestoreEvent.AlreadyRestored(dataDir.path().toString(), request.sha256()));
                return;
            }
            restoreLocked(checked, marker.filter(m -> m.sha256().equals(request.sha256())));
        }
    }

    /**
     * What {@link #run} would do, for {@code plan}: the same checks (a failed one is the same refusal), nothing
     * changed and no lock taken. Empty when this snapshot's restore is done: a start restores nothing then.
     */
    public Optional<Preview> preview() throws IOException, MigrateException {
        Optional<RestoreMarker> marker = RestoreMarker.read(dataDir.own().restoreMarker());
        if (marker.filter(m -> m.restoredFrom(request.sha256())).isPresent()) return Optional.empty();
        Checked checked = check(false);
        Optional<RestoreMarker> begun = marker.filter(m -> m.sha256().equals(request.sha256()));
        Optional<Path> backup = begun.isPresent()
                ? begun.get().backup().map(dataDir.path()::resolve)
                : Files.isDirectory(dataDir.member()) ? Optional.of(backupOf(request.sha256())) : Optional.empty();
        DataVersion restored = new DataVersion(checked.release().etcdVersion(), StorageApi.ETCD3);
        Peers peers = options.topology().peers();
        return Optional.of(new Preview(
                new RestoreEvent.RestorePlanned(
                        request.snapshot().toString(),
                        checked.snapshot().sha256(),
                        checked.written(),
                        checked.snapshot().revision(),
                        checked.snapshot().bytes(),
                        checked.snapshot().members(),
                        checked.snapshot().hashAppended() ? "verified" : "absent",
                        checked.restoreWith(),
                        backup.map(Path::toString).orElse(""),
                        options.name(),
                        peers.advertisePeerUrls(),
                        peers.initialCluster(),
                        token(request.sha256()),
                        request.bumpRevision(),
                        begun.isPresent(),
                        restored.toString()),
                restored,
                checked.snapshot().bytes()));
    }

    /** A restore's plan: the event {@code plan} prints, the version the restored data records and its size. */
    public record Preview(RestoreEvent.RestorePlanned event, DataVersion restored, long bytes) {}

    /** Where the member's data before the restore from the snapshot {@code sha256} is kept. */
    private Path backupOf(String sha256) {
        return dataDir.own().restoreBackups().resolve(sha256.substring(0, 12)).resolve("member");
    }

    private record Checked(DbSnapshot snapshot, Release release, String written) {
        String restoreWith() {
            return release.line().tools().snapshotRestore().toolName() + " " + release.version();
        }
    }

    /** Every check before anything changes; a failed one refuses the restore (exit 3). */
    private Checked check(boolean report) throws IOException, MigrateException {
        if (options.walDir().isPresent()) {
            throw new RefusedException("a restore from a snapshot is not supported with etcd's --wal-dir outside the"
                    + " data dir (" + options.walDir().get() + "); nothing was changed");
        }
        Path file = request.snapshot();
        if (!Files.isRegularFile(file)) {
            throw new RefusedException(
                    "the snapshot to restore, " + file + ", is not a readable file; nothing was" + " changed");
        }
        DbSnapshot snapshot;
        try {
            snapshot = DbSnapshot.read(file);
        } catch (DamagedFileException e) {
            throw new RefusedException(
                    "the snapshot " + file + " is damaged: " + e.getMessage() + "; nothing was changed");
        } catch (NoSuchFileException e) {
            throw new RefusedException("the snapshot " + file + " is gone; nothing was changed");
        }
        if (!snapshot.sha256().equals(request.sha256())) {
            throw new RefusedException("the snapshot " + file + " has SHA-256 " + snapshot.sha256() + ", not the "
                    + request.sha256() + " given in RESTORE_SHA256: every member must restore the same file;"
                    + " nothing was changed");
        }
        String written = snapshot.writtenBy()
                .orElseThrow(() -> new RefusedException("the snapshot " + file
                        + " records neither a storage version nor a cluster version, so the line that wrote it (and"
                        + " the tool to restore it with) is unknown; nothing was changed"));
        MinorLine line = EtcdVersion.parse(written).line();
        Release release;
        try {
            release = new Planner(catalog)
                    .restoredBy(line, options.target().version().line(), options.topology() instanceof Topology.Member);
        } catch (RefusedTransitionException e) {
            throw new RefusedException("the snapshot " + file + " was written by etcd " + written + ": "
                    + e.getMessage() + "; nothing was changed");
        }
        String into = release.minorLine().equals(line) ? "" : " into etcd " + release.minorLine();
        if (request.bumpRevision() > 0 && !release.line().tools().restoreBumpsRevision()) {
            throw new RefusedException("the snapshot " + file + " was written by etcd " + written + ", and "
                    + release.line().tools().snapshotRestore().toolName() + " " + release.version() + ", which"
                    + " restores it" + into + ", cannot raise the revision (no --bump-revision): restored as it is,"
                    + " every revision would repeat ones clients saw before, and their watches and caches would not"
                    + " notice. Set RESTORE_BUMP_REVISION=0 to restore it with its revisions kept (only where no"
                    + " client caches from etcd, e.g. no Kubernetes API server, or every such client restarts after"
                    + " the restore); nothing was changed");
        }
        tools.requireTool(release);
        tools.checkWalk(new DataVersion(release.etcdVersion(), StorageApi.ETCD3));
        DiskSpace.require(
                Files.isDirectory(dataDir.path())
                        ? dataDir.path()
                        : dataDir.path().toAbsolutePath().getParent(),
                DiskSpace.needed(snapshot.bytes(), 1),
                "restoring the snapshot");
        Checked checked = new Checked(snapshot, release, written);
        if (!report) return checked;
        log.emit(new RestoreEvent.SnapshotChecked(
                file.toString(),
                snapshot.sha256(),
                written,
                snapshot.revision(),
                snapshot.bytes(),
                snapshot.members(),
                snapshot.hashAppended() ? "verified" : "absent",
                checked.restoreWith()));
        return checked;
    }

    private void restoreLocked(Checked checked, Optional<RestoreMarker> begun)
            throws IOException, InterruptedException, MigrateException {
        Path member = dataDir.member();
        RestoreMarker marker;
        if (begun.isPresent()) {
            marker = begun.get();
        } else {
            // relative to the data dir: a resumed restore may see it mounted elsewhere (a static pod, docker run)
            Optional<Path> backup = Files.isDirectory(member)
                    ? Optional.of(dataDir.path().relativize(backupOf(request.sha256())))
                    : Optional.empty();
            marker = new RestoreMarker(
                    request.sha256(), RestoreMarker.State.RESTORING, backup, token(request.sha256()), Optional.empty());
            marker.write(dataDir.own().restoreMarker());
        }
        // member/ is the earlier data until it is moved aside; once the backup exists, a member/ beside it is the
        // complete restore (renamed into place in one step), and without a backup to make the same holds
        Optional<Path> kept = marker.backup().map(dataDir.path()::resolve);
        if (kept.isPresent() && !Files.exists(kept.get()) && Files.isDirectory(member)) {
            Path backup = kept.get();
            // the dirs on the way to the backup are durable before member/ moves into them, or a power cut could
            // keep the move and lose the way to it: ownerOnlyDir syncs what it creates, and the sync of the tree
            // covers dirs a run a crash interrupted created but never synced
            Permissions.ownerOnlyDir(dataDir.own().restoreBackups());
            Permissions.ownerOnlyDir(backup.getParent());
            Trees.syncTree(dataDir.own().restoreBackups());
            DurableMove.move(member, backup);
            log.emit(new RestoreEvent.RestoreBackupKept(
                    backup.toString(),
                    "stop this member, move " + member + " aside and " + backup + " back to " + member + ", then"
                            + " remove RESTORE_SNAPSHOT (every member the same way: the kept data is the cluster as it"
                            + " was before the restore)"));
        }
        Path staging = dataDir.own().restoreStaging();
        if (!Files.isDirectory(member)) {
            Trees.deleteRecursively(staging); // a restore a crash interrupted: its tool starts from an empty dir
            tools.operations()
                    .restoreNewCluster(
                            checked.release(),
                            request.snapshot(),
                            staging,
                            marker.token(),
                            request.bumpRevision(),
                            checked.snapshot().hashAppended());
            Permissions.ownerOnlyTree(staging);
            Trees.syncTree(staging);
            DurableMove.move(staging.resolve("member"), member);
        }
        // also when a crash came between the rename into member/ and this delete: the rerun finds member/ in place
        Trees.deleteDurably(staging);
        // a restart record this member held names a revision of the cluster the restore replaced: the restored
        // cluster has no such record, and no rollout of it may try to release one
        Trees.deleteDurably(dataDir.own().restartRecord());
        dataDir.writeVersion(new DataVersion(checked.release().etcdVersion(), StorageApi.ETCD3));
        marker.restored(checked.release().version()).write(dataDir.own().restoreMarker());
        log.emit(new RestoreEvent.SnapshotRestored(
                dataDir.path().toString(),
                request.sha256(),
                checked.release().version(),
                marker.token(),
                request.bumpRevision()));
    }
}
