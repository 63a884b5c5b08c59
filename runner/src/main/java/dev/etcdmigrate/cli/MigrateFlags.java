package dev.etcdmigrate.cli;

import dev.etcdmigrate.config.EtcdCommandLine;
import dev.etcdmigrate.config.Peers;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * `migrate`, `plan` and `inspect`'s flags: the help table, their parsing, the Kubernetes etcd image's environment
 * variables as fallbacks (flags win), and the check against etcd's own flags after --. Read once into a
 * {@link RunConfig}; validation happens here, before anything is touched.
 */
public final class MigrateFlags {

    private MigrateFlags() {}

    public static final String DEFAULT_DATA_DIR = "/var/etcd/data";
    public static final String DEFAULT_BIN_DIR = "/usr/local/bin";
    public static final int DEFAULT_BACKUP_RETENTION = 3;
    public static final String DEFAULT_TERMINATION_LOG = "/dev/termination-log";
    /** Kubernetes' etcd restore guide's amount: above the writes a lost cluster took after its snapshot. */
    public static final long DEFAULT_RESTORE_BUMP = 1_000_000_000L;

    public static final List<Flag> FLAGS = List.of(
            Flag.value(
                    "target-version",
                    "TARGET_VERSION",
                    "VERSION",
                    "required",
                    "etcd version to end at, exactly one of the bundled versions (e.g. 3.6.16)."),
            Flag.value(
                    "target-storage",
                    "TARGET_STORAGE",
                    "etcd2|etcd3",
                    "etcd3",
                    "storage API to end at. etcd2 -> etcd3 converts the v2 keys and re-attaches TTLs as leases;"
                            + " etcd3 -> etcd2 rolls the keys back into the v2 store of a line that serves v2."),
            Flag.value(
                    "data-dir",
                    "DATA_DIRECTORY",
                    "DIR",
                    "etcd's --data-dir after -- (or $ETCD_DATA_DIR), else " + DEFAULT_DATA_DIR,
                    "etcd data directory; version.txt in it records the version and storage that last wrote it."
                            + " Created with mode 0700 when missing. When etcd's own --data-dir is given too, both must"
                            + " name the same directory (exit 2 otherwise). etcd's --wal-dir after -- is honoured."),
            Flag.value(
                    "bin-dir",
                    null,
                    "DIR",
                    DEFAULT_BIN_DIR,
                    "directory holding etcd-<v>, etcdctl-<v> and etcdutl-<v> for each bundled version."),
            Flag.value(
                    "catalog",
                    null,
                    "FILE",
                    "the catalog in the runner's jar",
                    "versions catalog (versions/catalog.yaml) describing the bundled releases."),
            Flag.value(
                    "bundled-versions",
                    "BUNDLED_VERSIONS",
                    "V1,V2,...",
                    "every catalog release",
                    "restrict the migration to these bundled versions (comma or space separated)."),
            Flag.value(
                    "name",
                    "ETCD_NAME",
                    "NAME",
                    "etcd's --name after --, else etcd-$ETCD_HOSTNAME, else etcd-$HOSTNAME",
                    "member name; used for the private etcd and when a snapshot is restored."),
            Flag.value(
                    "initial-cluster",
                    "INITIAL_CLUSTER",
                    "NAME=URL,...",
                    "etcd's --initial-cluster, else <name>=http://localhost:2380",
                    "the real cluster's --initial-cluster; a snapshot restore gives the restored member these peers."
                            + " With two or more members the data dir is one member of a running cluster (also with this"
                            + " member alone, as kubeadm init writes it, when raft's records in the data name more voters):"
                            + " rolling upgrades and downgrades only, and the private etcd rejoins the peers (see"
                            + " --listen-peer-urls)."),
            Flag.value(
                    "initial-advertise-peer-urls",
                    "INITIAL_ADVERTISE_PEER_URLS",
                    "URLS",
                    "etcd's --initial-advertise-peer-urls, else this member's URL in --initial-cluster",
                    "the member's advertised peer URLs, given to a snapshot restore and, in a multi-member cluster, to the"
                            + " private etcd."),
            Flag.value(
                    "listen-peer-urls",
                    "LISTEN_PEER_URLS",
                    "URLS",
                    "etcd's --listen-peer-urls, else --initial-advertise-peer-urls",
                    "multi-member clusters only: where the private etcd listens for its peers while it migrates (it also"
                            + " gets etcd's --peer-* TLS flags and ETCD_CREDS). A one-member cluster ignores it: its private"
                            + " etcd uses 127.0.0.1:--peer-port."),
            Flag.value(
                    "listen-client-urls",
                    "LISTEN_CLIENT_URLS",
                    "URLS",
                    "unused",
                    "accepted for compatibility with the Kubernetes etcd image; the private etcd never listens on it"
                            + " (it uses 127.0.0.1:--port). Give the real etcd its URLs after --."),
            Flag.value(
                    "port",
                    null,
                    "PORT",
                    PrivatePorts.defaultText(PrivatePorts.MAIN.client(), PrivatePorts.EVENTS.client()),
                    "client port of the private migration etcd, on 127.0.0.1 only."),
            Flag.value(
                    "peer-port",
                    null,
                    "PORT",
                    PrivatePorts.defaultText(PrivatePorts.MAIN.peer(), PrivatePorts.EVENTS.peer()),
                    "peer port of the private migration etcd of a one-member cluster, on 127.0.0.1 only."),
            Flag.value(
                    "etcd-server-extra-args",
                    "ETCD_CREDS",
                    "ARGS",
                    "none",
                    "extra flags for the private etcd, split on blanks (e.g. peer TLS files)."),
            Flag.value(
                    "etcd-data-prefix",
                    "ETCD_DATA_PREFIX",
                    "PREFIX",
                    "/registry",
                    "key prefix the Kubernetes API server writes under (used by etcd2 conversions)."),
            Flag.value(
                    "ttl-keys-directory",
                    "TTL_KEYS_DIRECTORY",
                    "PREFIX",
                    "<data prefix>/events",
                    "keys under it get a default lease when converted from etcd2 without TTL information."),
            Flag.value(
                    "initial-version",
                    "INITIAL_VERSION",
                    "VERSION",
                    "none",
                    "etcd version that last ran on a non-empty data dir without version.txt (the storage is"
                            + " inferred: member/snap/db means etcd3). Without it such a dir is refused."),
            Flag.value(
                    "start-timeout",
                    null,
                    "DURATION",
                    "2m",
                    "how long a private etcd may take until a write succeeds (e.g. 90s, 2m)."),
            Flag.value(
                    "stop-grace",
                    null,
                    "DURATION",
                    "30s",
                    "how long a private etcd may take to stop after SIGTERM before it is killed and the step fails."),
            Flag.value(
                    "lock-timeout",
                    null,
                    "DURATION",
                    "60s",
                    "how long to wait for another etcd-migrate working on the same data dir."),
            Flag.value(
                    "backup-dir",
                    "BACKUP_DIR",
                    "DIR",
                    "<data dir>/.etcd-migrate/backups",
                    "where the member dir is kept before each storage conversion, downgrade or member swap"
                            + " (owner-only: 0700 dirs, 0600 files). Outside the data dir, a backup is copied there"
                            + " and then removed from the data dir. Created with mode 0700 when missing."),
            Flag.value(
                    "backup-retention",
                    "BACKUP_RETENTION",
                    "COUNT",
                    String.valueOf(DEFAULT_BACKUP_RETENTION),
                    "how many of this data dir's backups to keep (at least 1); the oldest beyond it are deleted"
                            + " after each new backup."),
            Flag.value(
                    "termination-log",
                    null,
                    "FILE",
                    DEFAULT_TERMINATION_LOG,
                    "where a failed run writes its one-line reason, if that file exists (Kubernetes' termination message)."),
            Flag.value(
                    "restore-snapshot",
                    "RESTORE_SNAPSHOT",
                    "FILE",
                    "none",
                    "restore this member from the snapshot (etcdctl snapshot save's file, or a member's member/snap/db)"
                            + " before anything else, once per snapshot: the member's data is kept as a backup, every"
                            + " member restored from it forms a new cluster, then the run goes on to the target"
                            + " (docs/restore.md). Needs --restore-sha256."),
            Flag.value(
                    "restore-sha256",
                    "RESTORE_SHA256",
                    "HEX",
                    "none",
                    "the snapshot's SHA-256 as sha256sum prints it; the restore is refused when the file differs."),
            Flag.value(
                    "restore-bump-revision",
                    "RESTORE_BUMP_REVISION",
                    "COUNT",
                    String.valueOf(DEFAULT_RESTORE_BUMP),
                    "how far a restore raises the revision, the old ones marked compacted (watches from before the"
                            + " restore end with 'compacted', Kubernetes' informers relist); 0 keeps the snapshot's"
                            + " revisions."),
            Flag.toggle("no-exec", "init-container mode: exit 0 after migrating instead of exec'ing etcd."));

    /** Where the runner's settings and etcd's own must agree: the same paths, the same URL lists. */
    private static String canonicalPath(String path) {
        return Path.of(path).toAbsolutePath().normalize().toString();
    }

    private static String canonicalList(String list) {
        return String.join(
                ",",
                Arrays.stream(list.split(","))
                        .map(String::strip)
                        .filter(e -> !e.isEmpty())
                        .toList());
    }

    public static RunConfig read(ParsedArgs args) throws UsageException {
        Map<String, String> env = args.environment();
        String targetText = args.get("target-version")
                .orElseThrow(() -> new UsageException(
                        "no target: set --target-version or TARGET_VERSION to one of the bundled etcd versions"));
        EtcdVersion targetVersion = FlagValues.version(args, "target-version", targetText);
        StorageApi storage;
        try {
            storage = StorageApi.parse(args.get("target-storage").orElse("etcd3"));
        } catch (IllegalArgumentException e) {
            throw new UsageException(args.source("target-storage") + ": " + e.getMessage());
        }
        EtcdCommandLine etcd = EtcdCommandLine.read(args.passThrough(), env);
        Path dataDir = Path.of(agree(args, "data-dir", etcd, MigrateFlags::canonicalPath)
                        .orElse(DEFAULT_DATA_DIR))
                .toAbsolutePath()
                .normalize();
        PrivatePorts ports = PrivatePorts.forDataDir(dataDir);
        String name = agree(args, "name", etcd, n -> n)
                .or(() -> Optional.ofNullable(env.get("ETCD_HOSTNAME"))
                        .filter(h -> !h.isEmpty())
                        .map(h -> "etcd-" + h))
                .or(() -> Optional.ofNullable(env.get("HOSTNAME"))
                        .filter(h -> !h.isEmpty())
                        .map(h -> "etcd-" + h))
                .orElseThrow(
                        () -> new UsageException("no member name: set --name, ETCD_NAME, ETCD_HOSTNAME or HOSTNAME"));
        String initialCluster = agree(args, "initial-cluster", etcd, MigrateFlags::canonicalList)
                .orElse(name + "=http://localhost:2380");
        Optional<String> advertiseGiven = agree(args, "initial-advertise-peer-urls", etcd, MigrateFlags::canonicalList);
        String advertise = advertiseGiven.isPresent() ? advertiseGiven.get() : Peers.peerUrlOf(name, initialCluster);
        Optional<String> listenPeer = agree(args, "listen-peer-urls", etcd, MigrateFlags::canonicalList);
        EtcdCommandLine creds =
                EtcdCommandLine.ofWords(args.get("etcd-server-extra-args").orElse(""));
        String prefix = args.get("etcd-data-prefix").orElse("/registry");
        Topology topology = Topology.of(
                new Peers(name, initialCluster, advertise, listenPeer.orElse(advertise)),
                Topology.PeerTls.of(etcd, creds),
                Topology.ClientTls.of(etcd));
        return new RunConfig(
                new DataVersion(targetVersion, storage),
                dataDir,
                Path.of(args.get("bin-dir").orElse(DEFAULT_BIN_DIR))
                        .toAbsolutePath()
                        .normalize(),
                args.get("catalog").map(Path::of),
                bundledVersions(args),
                name,
                topology,
                FlagValues.port(args, "port", ports.client()),
                FlagValues.port(args, "peer-port", ports.peer()),
                creds,
                prefix,
                args.get("ttl-keys-directory").orElse(prefix + "/events"),
                args.get("initial-version").isPresent()
                        ? Optional.of(FlagValues.version(
                                args,
                                "initial-version",
                                args.get("initial-version").get()))
                        : Optional.empty(),
                FlagValues.duration(args, "start-timeout", Duration.ofMinutes(2)),
                FlagValues.duration(args, "stop-grace", Duration.ofSeconds(30)),
                FlagValues.duration(args, "lock-timeout", Duration.ofSeconds(60)),
                args.get("backup-dir").map(d -> Path.of(d).toAbsolutePath().normalize()),
                retention(args),
                args.isSet("no-exec"),
                etcd,
                walDir(etcd, dataDir),
                Path.of(args.get("termination-log").orElse(DEFAULT_TERMINATION_LOG)),
                restore(args));
    }

    private static Optional<RunConfig.Restore> restore(ParsedArgs args) throws UsageException {
        Optional<String> snapshot = args.get("restore-snapshot").filter(s -> !s.isBlank());
        Optional<String> sha = args.get("restore-sha256").filter(s -> !s.isBlank());
        if (snapshot.isEmpty()) {
            if (sha.isPresent())
                throw new UsageException(args.source("restore-sha256")
                        + " is given without --restore-snapshot (RESTORE_SNAPSHOT): nothing to restore");
            return Optional.empty();
        }
        if (sha.isEmpty())
            throw new UsageException(args.source("restore-snapshot")
                    + " needs the file's SHA-256 in --restore-sha256 (RESTORE_SHA256), as sha256sum prints it,"
                    + " so that every member restores the same snapshot (nothing was changed)");
        String hex = sha.get().strip().toLowerCase(java.util.Locale.ROOT);
        if (!hex.matches("[0-9a-f]{64}"))
            throw new UsageException(
                    args.source("restore-sha256") + " must be 64 hex digits (a SHA-256), got '" + sha.get() + "'");
        long bump = DEFAULT_RESTORE_BUMP;
        Optional<String> bumpText = args.get("restore-bump-revision");
        if (bumpText.isPresent()) {
            try {
                bump = Long.parseLong(bumpText.get().strip());
            } catch (NumberFormatException e) {
                bump = -1;
            }
            if (bump < 0)
                throw new UsageException(args.source("restore-bump-revision")
                        + " must be a whole number of revisions, 0 or more, got '" + bumpText.get() + "'");
        }
        return Optional.of(
                new RunConfig.Restore(Path.of(snapshot.get()).toAbsolutePath().normalize(), hex, bump));
    }

    /**
     * The runner's setting where it has one, else etcd's; both given and different is a usage error:
     * the runner would migrate one thing and etcd serve another (an empty data dir, a new member).
     */
    private static Optional<String> agree(
            ParsedArgs args, String flag, EtcdCommandLine etcd, java.util.function.UnaryOperator<String> canonical)
            throws UsageException {
        Optional<String> ours = args.get(flag);
        Optional<String> theirs = etcd.get(flag);
        if (ours.isPresent()
                && theirs.isPresent()
                && !canonical.apply(ours.get()).equals(canonical.apply(theirs.get()))) {
            throw new UsageException(args.source(flag) + " is '" + ours.get() + "' but " + etcd.source(flag) + " is '"
                    + theirs.get() + "': the runner would migrate one and etcd would serve the other. Give it once, or"
                    + " the same in both places (nothing was changed)");
        }
        return ours.or(() -> theirs);
    }

    /** etcd's --wal-dir when it is not the default member/wal: every private etcd, backup and check must follow it. */
    private static Optional<Path> walDir(EtcdCommandLine etcd, Path dataDir) {
        return etcd.get("wal-dir")
                .filter(w -> !w.isEmpty())
                .map(w -> Path.of(w).toAbsolutePath().normalize())
                .filter(w -> !w.equals(dataDir.resolve("member").resolve("wal")));
    }

    private static Optional<Set<EtcdVersion>> bundledVersions(ParsedArgs args) throws UsageException {
        Optional<String> text = args.get("bundled-versions");
        if (text.isEmpty()) return Optional.empty();
        Set<EtcdVersion> versions = new LinkedHashSet<>();
        for (String v : Arrays.stream(text.get().split("[,\\s]+"))
                .filter(s -> !s.isEmpty())
                .toList()) {
            versions.add(FlagValues.version(args, "bundled-versions", v));
        }
        if (versions.isEmpty()) throw new UsageException(args.source("bundled-versions") + " lists no version");
        return Optional.of(versions);
    }

    private static int retention(ParsedArgs args) throws UsageException {
        Optional<String> text = args.get("backup-retention");
        if (text.isEmpty()) return DEFAULT_BACKUP_RETENTION;
        try {
            int count = Integer.parseInt(text.get().trim());
            if (count >= 1) return count;
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new UsageException(
                args.source("backup-retention") + " must be a whole number of backups to keep, at least 1"
                        + " (the backup a step just took is always kept), got '" + text.get() + "'");
    }
}
