package dev.etcdmigrate.decide;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.config.Peers;
import dev.etcdmigrate.config.RunConfig;
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
 * as {@code config/EtcdCommandLine} read it). One text for the reason a run ends with and inspect's
 * {@code damage} section.
 */
public final class DamageExplanation {

    /** The facts: the damaged files (each "file (where): expected"), and the way back. */
    public record Facts(List<String> files, Optional<Path> backup, String wayBack) {}

    private DamageExplanation() {}

    /**
     * What the data dir shows: the readers' damage findings, and etcd's sign if one was given. {@code data}: what
     * the data records of its members (a full read), for the way back's restore command.
     */
    public static Optional<Facts> facts(
            DataDir dataDir,
            RunConfig options,
            List<Damage> found,
            Optional<EtcdDamageSigns.Sign> etcdSign,
            Optional<DataDetection.Detection> data) {
        List<String> files = described(dataDir, found, etcdSign);
        if (files.isEmpty()) return Optional.empty();
        Optional<Path> backup = newestBackup(dataDir, options);
        return Optional.of(new Facts(files, backup, wayBack(dataDir, options, backup, data)));
    }

    /** Each finding once, as "file (where): expected", then etcd's sign. */
    private static List<String> described(
            DataDir dataDir, List<Damage> found, Optional<EtcdDamageSigns.Sign> etcdSign) {
        List<String> files = new ArrayList<>();
        for (Damage d : found) {
            String described = d.relativeTo(dataDir.path()).describe();
            if (!files.contains(described)) files.add(described);
        }
        etcdSign.ifPresent(s -> files.add(s.file() + " (etcd said \"" + s.etcdSaid() + "\")"));
        return List.copyOf(files);
    }

    /** The same, with the newest backup already read ({@code inspect} lists them all): reads nothing. */
    public static Optional<Facts> facts(
            DataDir dataDir,
            RunConfig options,
            List<Damage> found,
            Optional<EtcdDamageSigns.Sign> etcdSign,
            Optional<DataDetection.Detection> data,
            Optional<Path> newestBackup) {
        List<String> files = described(dataDir, found, etcdSign);
        if (files.isEmpty()) return Optional.empty();
        return Optional.of(new Facts(files, newestBackup, wayBack(dataDir, options, newestBackup, data)));
    }

    /** This member as the data records it (and its cluster's members), where it does; else as the flags say. */
    record Member(String name, String peerUrls, String initialCluster, int size) {

        static Member of(RunConfig options, Optional<DataDetection.Detection> data) {
            Peers peers = options.topology().peers();
            Member flags = new Member(options.name(), peers.advertisePeerUrls(), peers.initialCluster(), peers.count());
            if (data.isEmpty() || data.get().memberId().isEmpty()) return flags;
            DataDetection.Detection d = data.get();
            Optional<dev.etcdmigrate.ondisk.Member> self = d.members().stream()
                    .filter(m -> m.id().equals(d.memberId().get()))
                    .findFirst();
            if (self.isEmpty()
                    || self.get().name().isEmpty()
                    || self.get().peerUrls().isEmpty()) return flags;
            List<String> cluster = new ArrayList<>();
            for (dev.etcdmigrate.ondisk.Member m : d.members()) {
                if (m.name().isEmpty() || m.peerUrls().isEmpty()) {
                    cluster = null; // a member the data cannot name: the flags' list, as etcd was given it
                    break;
                }
                for (String url : m.peerUrls()) cluster.add(m.name() + "=" + url);
            }
            return new Member(
                    self.get().name(),
                    String.join(",", self.get().peerUrls()),
                    cluster == null ? peers.initialCluster() : String.join(",", cluster),
                    Math.max(peers.count(), d.members().size()));
        }
    }

    /**
     * The way back: the runner's newest backup of this member (copy its member/ and version.txt in place
     * of the damaged ones), else a restore from an etcd snapshot with this member's name and peers as the data
     * records them (the flags' where it does not); in a cluster, also removing the member and adding it back empty.
     */
    static String wayBack(
            DataDir dataDir, RunConfig options, Optional<Path> backup, Optional<DataDetection.Detection> data) {
        Path data0 = dataDir.path();
        if (backup.isPresent()) {
            return "restore this member from the runner's newest backup " + backup.get() + ": with etcd stopped,"
                    + " move " + data0.resolve("member") + " aside, copy "
                    + backup.get().resolve("member") + " to "
                    + data0.resolve("member") + " and " + backup.get().resolve(DataDir.VERSION_FILE) + " to "
                    + dataDir.versionFile()
                    + (options.walDir().isPresent()
                            ? " (the backup holds the WAL in member/wal: copy it to "
                                    + options.walDir().get() + ")"
                            : "")
                    + ", then start again";
        }
        Member member = Member.of(options, data);
        String restored = data0 + ".restored";
        String command = "etcdutl snapshot restore SNAPSHOT.db --name " + member.name() + " --initial-cluster "
                + member.initialCluster() + " --initial-advertise-peer-urls " + member.peerUrls()
                + " --data-dir " + restored
                + options.walDir().map(w -> " --wal-dir " + w + ".restored").orElse("");
        return "the runner holds no backup of this member; restore it from an etcd snapshot (one saved earlier, or"
                + " `etcdctl snapshot save` from a healthy member): `" + command + "`, then, with etcd stopped, move "
                + data0.resolve("member") + " aside, move " + restored + "/member in its place, remove "
                + dataDir.versionFile() + " and start again"
                + (member.size() > 1
                        ? "; in a cluster, removing this member (etcdctl member remove) and adding it back with an"
                                + " empty data dir (etcdctl member add, --initial-cluster-state=existing) also works"
                        : "");
    }

    /**
     * The exception a run ends with, explained when the data is damaged: the readers' findings (read anew,
     * the whole report) or etcd's own words in the reason; unchanged otherwise. The status stays. A start's
     * refusal of damaged data already names the findings: only what changed and the way back are added.
     */
    public static MigrateException explain(MigrateException e, DataDir dataDir, RunConfig options, Catalog catalog) {
        if (e.status() == ExitStatus.USAGE && !(e.getCause() instanceof DamagedFileException)) return e;
        Optional<DataDetection.Detection> data = Optional.empty();
        if (catalog != null) {
            try {
                if (dataDir.exists() && dataDir.holdsData())
                    data = Optional.of(DataDetection.detect(dataDir.path(), options.walDir(), catalog, true));
            } catch (Exception readingFailed) {
                // the reason stands as it is
            }
        }
        if (e instanceof DamagedDataException refused) {
            Optional<Facts> facts = facts(dataDir, options, refused.damage(), Optional.empty(), data);
            return new RefusedException(e.getMessage() + "; nothing was changed. The way back: "
                    + facts.orElseThrow().wayBack());
        }
        Optional<EtcdDamageSigns.Sign> sign = Optional.empty();
        for (Throwable t = e; t != null && sign.isEmpty(); t = t.getCause()) sign = EtcdDamageSigns.in(t.getMessage());
        List<Damage> found = new ArrayList<>();
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof DamagedFileException d) found.add(d.damage());
        }
        if (found.isEmpty()) data.ifPresent(d -> found.addAll(d.damage()));
        Optional<Facts> facts = facts(dataDir, options, found, sign, data);
        if (facts.isEmpty()) return e;
        String changed = e.status() == ExitStatus.FAILED
                ? "version.txt names the last step that completed; the failed step's work dirs were discarded, and an"
                        + " etcd it ran on member/ itself may have changed it (the runner backs member/ up first)"
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

    private static Optional<Path> newestBackup(DataDir dataDir, RunConfig options) {
        try {
            Log quiet = Log.text(new PrintStream(OutputStream.nullOutputStream()));
            return new Backups(dataDir, options.backupDir(), options.backupRetention(), options.name(), quiet).newest();
        } catch (Exception e) {
            return Optional.empty();
        }
    }
}
