package dev.etcdmigrate.run;

import dev.etcdmigrate.cli.MigrateOptions;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.ondisk.BackendStorageVersion;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.plan.RefusedTransitionException;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the data dir holds, as far as the runner can prove it: the version that wrote it (version.txt, or
 * --initial-version with the storage inferred), cross-checked against the member dir and, from 3.6 on,
 * against the storage version the backend records. Reads only.
 */
final class DataDirState {

    private static final Pattern STORAGE_VERSION = Pattern.compile("(\\d+\\.\\d+\\.\\d+)");

    private final DataDir dataDir;
    private final MigrateOptions options;
    private final Log log;

    DataDirState(DataDir dataDir, MigrateOptions options, Log log) {
        this.dataDir = dataDir;
        this.options = options;
        this.log = log;
    }

    /** What wrote the data dir: empty for a missing or empty dir; an inference is reported when {@code report}. */
    Optional<DataVersion> current(boolean report) throws IOException, MigrateException {
        if (!dataDir.exists() || !dataDir.holdsData()) {
            return Optional.empty();
        }
        Optional<DataVersion> recorded = dataDir.readVersion();
        if (recorded.isPresent()) {
            return recorded;
        }
        EtcdVersion initial = options.initialVersion().orElseThrow(() -> new RefusedTransitionException("data dir "
                + dataDir.path() + " holds data (" + safeContent() + ") but no version.txt, so the runner cannot tell which"
                + " etcd wrote it. Set --initial-version / INITIAL_VERSION to the etcd version that last ran on it (its"
                + " storage is inferred: member/snap/db means etcd3). The Kubernetes etcd image assumed 2.2.1/etcd2 for"
                + " such dirs; pass --initial-version=2.2.1 only if that is what wrote it."));
        DataVersion inferred = new DataVersion(initial, dataDir.inferStorage());
        if (initial.major() < 3 && inferred.storage() == StorageApi.ETCD3) {
            throw new RefusedTransitionException("--initial-version " + initial + " cannot have written etcd3 data, but "
                    + dataDir.path() + " has member/snap/db");
        }
        if (report) log.emit(new Event.DataDirRead(dataDir.path().toString(), inferred.toString(), "no version.txt: taking " + inferred
                + " (version from --initial-version/INITIAL_VERSION, storage inferred from " + (inferred.storage() == StorageApi.ETCD3
                        ? "member/snap/db" : "the absence of member/snap/db") + ")"));
        return Optional.of(inferred);
    }

    /** The member dir's layout and WAL location against what version.txt and etcd's flags say. */
    void crossCheck(DataVersion recorded) throws IOException, MigrateException {
        dataDir.checkAgainst(recorded, options.walDir());
    }

    /**
     * From 3.6 on, the backend records the storage version etcd last set: data that a newer line wrote
     * than version.txt says is refused rather than "upgraded" by older binaries. Read offline from the db's
     * meta bucket (a few pages, where `etcdutl snapshot status` hashed the whole db first); a db an etcd
     * holds open is refused, as etcdutl's wait on its lock showed before.
     */
    void checkRecordedStorageVersion(DataVersion recorded) throws IOException, MigrateException {
        Path db = dataDir.member().resolve("snap").resolve("db");
        if (recorded.storage() != StorageApi.ETCD3 || !Files.isRegularFile(db)) return;
        OptionalLong holder = BackendStorageVersion.lockHolder(db);
        if (holder.isPresent()) {
            throw new DataDir.UnusableDataDirException(db + " is held open by process " + holder.getAsLong()
                    + ": is an etcd still running on this data dir? Stop it first (nothing was changed)");
        }
        Optional<String> recordedStorage;
        try {
            recordedStorage = BackendStorageVersion.read(db);
        } catch (BackendStorageVersion.UnreadableBackendException e) {
            // not a db this reader understands: etcd itself judges it when the first step starts it (as when
            // etcdutl failed on it), and a damaged db fails that step with etcd's own fatal line
            log.emit(new Event.StorageVersionUnread(db.toString(), String.valueOf(e.getMessage())));
            return;
        }
        Matcher m = STORAGE_VERSION.matcher(recordedStorage.orElse(""));
        if (!m.find()) return; // lines before 3.6 record none
        EtcdVersion storage = EtcdVersion.parse(m.group(1));
        // one minor above is what an upgrade step interrupted after its etcd ran leaves behind (version.txt is
        // written after the step): resumable. Further above, no run of this tool can have written it.
        MinorLine resumable = new MinorLine(recorded.version().major(), recorded.version().minor() + 1);
        if (resumable.isOlderThan(storage.line())) {
            throw new DataDir.ContradictionException("version.txt says " + recorded + " but " + db + " records storage version "
                    + storage + ", which only etcd " + storage.line() + " or newer writes: the data is newer than version.txt"
                    + " claims. Write the version that really ran last into version.txt");
        }
        if (recorded.version().line().isOlderThan(storage.line())) {
            log.emit(new Event.InterruptedStepFound(db.toString(), storage.toString(), storage.line().toString()));
        }
    }

    private String safeContent() {
        try {
            return dataDir.describeContent();
        } catch (IOException e) {
            return "unreadable: " + e.getMessage();
        }
    }
}
