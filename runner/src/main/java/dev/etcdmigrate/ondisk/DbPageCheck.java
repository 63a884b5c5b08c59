package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Every page of a db checked ({@link BboltFile#checkPages}), its finding kept with the file's identity and change
 * time: a start reads its data before it takes the data dir's lock and again under it, and the second read of the
 * same, unchanged file reuses the first one's walk. A file replaced (another inode), resized or written since (its
 * change time, which every write and rename moves) is checked again. A file changed less than {@link #SETTLED_MILLIS}
 * before it was checked is not kept: the kernel stamps change times at a coarse tick, so a write in the same tick as
 * the one before could leave the same time.
 */
public final class DbPageCheck {

    /** The run's own: the walk started ahead and the decision's reads share it. */
    private static final DbPageCheck RUN = new DbPageCheck();

    /** The attributes a write, a truncation or a replacement of the file changes. */
    private static final String IDENTITY = "unix:dev,ino,size,lastModifiedTime,ctime";

    /** Far above the kernel's timestamp tick (at most 10 ms). */
    static final long SETTLED_MILLIS = 50;

    private final LongSupplier clock;
    private Path checked;
    private Map<String, Object> identity;
    private Optional<DamagedFileException> found = Optional.empty();

    public DbPageCheck() {
        this(System::currentTimeMillis);
    }

    DbPageCheck(LongSupplier clock) {
        this.clock = clock;
    }

    /** The run's check: every reader of this process shares its finding. */
    public static DbPageCheck ofThisRun() {
        return RUN;
    }

    /**
     * Starts {@link #check} of {@code db} now, on a thread of its own, so that the walk runs beside the run's other
     * reads; a later {@link #check} waits for it and reuses its finding if the file has not changed since. Its
     * failures are not reported here: the later check meets them again.
     */
    public void startAhead(Path db) {
        Thread.ofVirtual().name("db-check").start(() -> {
            try {
                check(db);
            } catch (IOException | RuntimeException e) {
                // the decision's own check reads the file again and reports it
            }
        });
    }

    /** Checks the db (a healthy one returns; damage is the {@link DamagedFileException}), or reuses the last finding. */
    public synchronized void check(Path db) throws IOException {
        Path file = db.toAbsolutePath().normalize();
        // read before the walk: a write during it moves the change time past what is kept, so the next read walks again
        Map<String, Object> now = Files.readAttributes(file, IDENTITY, LinkOption.NOFOLLOW_LINKS);
        if (!file.equals(checked) || !now.equals(identity)) {
            checked = null;
            long changed = Math.max(
                    ((FileTime) now.get("ctime")).toMillis(), ((FileTime) now.get("lastModifiedTime")).toMillis());
            boolean settled = clock.getAsLong() - changed >= SETTLED_MILLIS;
            try (BboltFile bbolt = BboltFile.open(file)) {
                bbolt.checkPages();
                found = Optional.empty();
            } catch (DamagedFileException e) {
                found = Optional.of(e);
            }
            if (settled) {
                checked = file;
                identity = now;
            }
        }
        if (found.isPresent()) throw found.get();
    }
}
