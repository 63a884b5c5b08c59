package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The reading half of {@link DataDetection}: the records found in the files etcd wrote, as read, with no
 * judgement of what line they prove ({@link DataDecision} decides). Damage a reader met is kept as
 * {@link Damage} beside the records read before it; an I/O error that is not damage (a permission) as text.
 *
 * @param walOption etcd's --wal-dir, when set
 * @param walDir where the WAL is looked for
 * @param memberDir whether {@code member/} exists
 * @param db what the backend records; {@link DbRead#NONE} without a db
 * @param snapshot the newest v2 snapshot's records, when one was read
 * @param wal the WAL's records, when the WAL was read
 * @param walSegments how many segments the WAL has
 * @param damage every damage met, in reading order
 */
public record DataRecords(
        Path dataDir,
        Optional<Path> walOption,
        Path walDir,
        boolean memberDir,
        boolean hasDb,
        boolean hasWal,
        DbRead db,
        Optional<Path> snapshotFile,
        Optional<SnapshotRead> snapshot,
        Optional<WalRead> wal,
        int walSegments,
        List<Damage> damage) {

    /**
     * Reads the data dir. {@code full}: everything (inspect: members, alarms, sizes, every source). Without it
     * only what decides the line and the storage, as a migration's start needs: the snapshot only when the db
     * records no cluster version (the db is applied at or after it) or v2 keys may decide the storage, the
     * WAL only when both are silent.
     */
    public static DataRecords read(Path dataDir, Optional<Path> walOption, boolean full) throws IOException {
        Path member = dataDir.resolve("member");
        Path wal = walOption.orElse(member.resolve("wal"));
        boolean hasWal = hasWal(wal);
        Path dbFile = member.resolve("snap").resolve("db");
        boolean memberDir = Files.isDirectory(member);
        boolean hasDb = memberDir && Files.isRegularFile(dbFile);
        List<Damage> damage = new ArrayList<>();
        DbRead db = hasDb ? DbRead.read(dbFile, full, damage, dataDir) : DbRead.NONE;
        // whether v2 keys decide the storage: a 3.x db without a v3 key may hold etcd2 data
        boolean v2Decides = hasDb && !db.v3Keys();
        Optional<Path> snapshotFile = V2SnapshotReader.newestSnapshot(member);
        Optional<SnapshotRead> snap = Optional.empty();
        if (snapshotFile.isPresent() && (full || db.clusterVersion().isEmpty() || v2Decides))
            snap = Optional.of(SnapshotRead.read(snapshotFile.get(), full || v2Decides, damage, dataDir));
        Optional<WalRead> walRecords = Optional.empty();
        int segments = 0;
        if (hasWal) {
            boolean snapSilent = snap.map(s -> s.clusterVersion().isEmpty()).orElse(true);
            long outside = snap.map(SnapshotRead::keysOutside).orElse(0L);
            if (full || (db.clusterVersion().isEmpty() && snapSilent) || (v2Decides && outside == 0)) {
                walRecords = Optional.of(WalRead.read(wal, damage, dataDir));
                segments = walRecords.get().summary().map(WalSummary::segments).orElse(-1);
            }
            if (segments < 0 || walRecords.isEmpty()) segments = countSegments(wal);
        }
        return new DataRecords(
                dataDir,
                walOption,
                wal,
                memberDir,
                hasDb,
                hasWal,
                db,
                snapshotFile,
                snap,
                walRecords,
                segments,
                damage.stream().distinct().toList()); // one finding once, however many reads met it
    }

    /**
     * The damage a start's own reading finds: what {@link #read} without {@code full} meets (the db's meta, cluster
     * and first key pages; the snapshot and the WAL where it reads them) and, when {@code everyDbPage}, every page of
     * the db's tree ({@link BboltFile#checkPages}): a start whose steps run etcd on the whole db, not a restart.
     * Inspect decides its targets from the same call, so it and a start agree on what was found.
     */
    public static List<Damage> damageFound(Path dataDir, Optional<Path> walOption, boolean everyDbPage)
            throws IOException {
        return damageFound(dataDir, walOption, everyDbPage, new DbPageCheck());
    }

    /** {@link #damageFound}, the db's pages checked by {@code pages} (which reuses its walk of an unchanged db). */
    public static List<Damage> damageFound(
            Path dataDir, Optional<Path> walOption, boolean everyDbPage, DbPageCheck pages) throws IOException {
        Path dir = dataDir.toAbsolutePath().normalize();
        List<Damage> found = new ArrayList<>(read(dir, walOption, false).damage());
        Path db = dir.resolve("member").resolve("snap").resolve("db");
        if (everyDbPage && found.isEmpty() && Files.isRegularFile(db) && Files.size(db) > 0) {
            try {
                pages.check(db);
            } catch (DamagedFileException e) {
                found.add(e.damage().relativeTo(dir));
            }
        }
        return found.stream().distinct().toList();
    }

    static boolean hasWal(Path dir) throws IOException {
        return Files.isDirectory(dir) && !WalIndex.segments(dir).isEmpty();
    }

    private static int countSegments(Path dir) throws IOException {
        return WalIndex.segments(dir).size();
    }
}
