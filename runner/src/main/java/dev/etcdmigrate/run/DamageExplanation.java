package dev.etcdmigrate.run;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.cli.MigrateOptions;
import dev.etcdmigrate.datadir.Backups;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.RefusedException;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.Damage;
import dev.etcdmigrate.ondisk.DamagedFileException;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.ondisk.EtcdDamageSigns;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Damaged data, explained: which file (from the runner's own reading, {@link Damage}, or from what etcd
 * said at start, {@link EtcdDamageSigns}), what was changed, and the way back: this member's newest backup
 * by the runner, else an etcd snapshot restore for this member's name and peers (from etcd's command line
 * as {@code cli/EtcdCommandLine} read it). One text for the reason a run ends with and inspect's
 * {@code damage} section.
 */
final class DamageExplanation {

    /** The facts: the damaged files (each "file (where): expected"), and the way back. */
    record Facts(List<String> files, Optional<Path> backup, String wayBack) {}

    private DamageExplanation() {}

    /** What the data dir shows: the readers' damage findings, and etcd's sign if one was given. */
    static Optional<Facts> facts(
            DataDir dataDir, MigrateOptions options, List<Damage> found, Optional<EtcdDamageSigns.Sign> etcdSign) {
        List<String> files = new ArrayList<>();
        for (Damage d : found) files.add(d.relativeTo(dataDir.path()).describe());
        etcdSign.ifPresent(s -> files.add(s.file() + " (etcd said \"" + s.etcdSaid() + "\")"));
        if (files.isEmpty()) return Optional.empty();
        Optional<Path> backup = newestBackup(dataDir, options);
        return Optional.of(new Facts(List.copyOf(files), backup, wayBack(dataDir, options, backup)));
    }

    /**
     * The way back: the runner's newest backup of this member (copy its member/ and version.txt in place
     * of the damaged ones), else a restore from an etcd snapshot with this member's name and peers; in a
     * cluster, also removing the member and adding it back empty.
     */
    static String wayBack(DataDir dataDir, MigrateOptions options, Optional<Path> backup) {
        Path data = dataDir.path();
        if (backup.isPresent()) {
            return "restore this member from the runner's newest backup " + backup.get() + ": with etcd stopped,"
                    + " move " + data.resolve("member") + " aside, copy "
                    + backup.get().resolve("member") + " to "
                    + data.resolve("member") + " and " + backup.get().resolve(DataDir.VERSION_FILE) + " to "
                    + dataDir.versionFile()
                    + (options.walDir().isPresent()
                            ? " (the backup holds the WAL in member/wal: copy it to "
                                    + options.walDir().get() + ")"
                            : "")
                    + ", then start again";
        }
        String restored = data + ".restored";
        String command = "etcdutl snapshot restore SNAPSHOT.db --name " + options.name() + " --initial-cluster "
                + options.initialCluster() + " --initial-advertise-peer-urls " + options.initialAdvertisePeerUrls()
                + " --data-dir " + restored
                + options.walDir().map(w -> " --wal-dir " + w + ".restored").orElse("");
        return "the runner holds no backup of this member; restore it from an etcd snapshot (one saved earlier, or"
                + " `etcdctl snapshot save` from a healthy member): `" + command + "`, then, with etcd stopped, move "
                + data.resolve("member") + " aside, move " + restored + "/member in its place, remove "
                + dataDir.versionFile() + " and start again"
                + (options.members() > 1
                        ? "; in a cluster, removing this member (etcdctl member remove) and adding it back with an"
                                + " empty data dir (etcdctl member add, --initial-cluster-state=existing) also works"
                        : "");
    }

    /**
     * The exception a run ends with, explained when the data is damaged: the readers' findings (read anew,
     * the whole report) or etcd's own words in the reason; unchanged otherwise. The status stays.
     */
    static MigrateException explain(MigrateException e, DataDir dataDir, MigrateOptions options, Catalog catalog) {
        if (e.status() == ExitStatus.USAGE && !(e.getCause() instanceof DamagedFileException)) return e;
        Optional<EtcdDamageSigns.Sign> sign = Optional.empty();
        for (Throwable t = e; t != null && sign.isEmpty(); t = t.getCause()) sign = EtcdDamageSigns.in(t.getMessage());
        List<Damage> found = new ArrayList<>();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof DamagedFileException d) found.add(d.damage());
        }
        if (found.isEmpty() && catalog != null) {
            try {
                if (dataDir.exists() && dataDir.holdsData())
                    found.addAll(DataDetection.detect(dataDir.path(), options.walDir(), catalog, true)
                            .damage());
            } catch (Exception readingFailed) {
                // the reason stands as it is
            }
        }
        Optional<Facts> facts = facts(dataDir, options, found, sign);
        if (facts.isEmpty()) return e;
        String changed = e.status() == ExitStatus.FAILED
                ? "the failed step's work was discarded and version.txt names the last step that completed"
                : "nothing was changed";
        String text = e.getMessage() + ". The data is damaged: "
                + String.join("; ", facts.get().files()) + "; " + changed + ". The way back: "
                + facts.get().wayBack();
        return switch (e.status()) {
            case FAILED -> new FailedException(text, e);
            case REFUSED -> new RefusedException(text);
            default -> new UsageException(text);
        };
    }

    private static Optional<Path> newestBackup(DataDir dataDir, MigrateOptions options) {
        try {
            Log quiet = Log.text(new PrintStream(OutputStream.nullOutputStream()));
            return new Backups(dataDir, options.backupDir(), options.backupRetention(), options.name(), quiet).newest();
        } catch (Exception e) {
            return Optional.empty();
        }
    }
}
