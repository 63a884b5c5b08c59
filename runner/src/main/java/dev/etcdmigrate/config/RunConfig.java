package dev.etcdmigrate.config;

import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Everything `migrate`, `plan` and `inspect` act on, validated before anything is touched: built once from the
 * flags and the Kubernetes etcd image's environment ({@code cli/MigrateFlags}), its {@link Topology} then settled
 * once from the data ({@code run/MembersFromData}).
 *
 * @param creds ETCD_CREDS (--etcd-server-extra-args), the private etcd's extra flags, read as etcd reads them
 * @param etcd etcd's own command line after --
 * @param walDir etcd's --wal-dir when it is not the default member/wal
 * @param restore a snapshot to restore the member from before anything else (docs/restore.md)
 */
public record RunConfig(
        DataVersion target,
        Path dataDir,
        Path binDir,
        Optional<Path> catalogFile,
        Optional<Set<EtcdVersion>> bundledVersions,
        String name,
        Topology topology,
        int clientPort,
        int peerPort,
        EtcdCommandLine creds,
        String dataPrefix,
        String ttlKeysDirectory,
        Optional<EtcdVersion> initialVersion,
        Duration startTimeout,
        Duration stopGrace,
        Duration lockTimeout,
        Optional<Path> backupDir,
        int backupRetention,
        boolean noExec,
        EtcdCommandLine etcd,
        Optional<Path> walDir,
        Path terminationLog,
        Optional<Restore> restore) {

    /**
     * A restore from one snapshot, the same on every member: the file, its SHA-256 as {@code sha256sum} prints it
     * (lower-case hex), and how far the restored revision is raised (0: the snapshot's revisions kept).
     */
    public record Restore(Path snapshot, String sha256, long bumpRevision) {}

    /** etcd's arguments after --, as given. */
    public List<String> etcdArgs() {
        return etcd.args();
    }

    /**
     * The arguments the target etcd is exec'd with: those after --, and --data-dir when neither they nor
     * ETCD_DATA_DIR name one (they name the same dir as the runner's, or the flags were refused).
     */
    public List<String> finalEtcdArgs() {
        return etcd.withDefault("data-dir", dataDir.toString());
    }

    /**
     * Whether etcd is told to join a running cluster ({@code --initial-cluster-state=existing}) as one of its members:
     * on a data dir without etcd data, the member takes its data from the cluster's leader at the cluster's line, not
     * a new cluster at the target's.
     */
    public boolean joinsRunningCluster() {
        return topology instanceof Topology.Member
                && etcd.get("initial-cluster-state").filter("existing"::equals).isPresent();
    }

    /** ETCD_CREDS as words, the private etcd's extra flags ({@link #creds()} is the same, read as etcd reads it). */
    public List<String> serverExtraArgs() {
        return creds.args();
    }

    /** The same run in another topology (the data's members, {@code run/MembersFromData}); etcd's own flags unchanged. */
    public RunConfig withTopology(Topology other) {
        return new RunConfig(
                target,
                dataDir,
                binDir,
                catalogFile,
                bundledVersions,
                name,
                other,
                clientPort,
                peerPort,
                creds,
                dataPrefix,
                ttlKeysDirectory,
                initialVersion,
                startTimeout,
                stopGrace,
                lockTimeout,
                backupDir,
                backupRetention,
                noExec,
                etcd,
                walDir,
                terminationLog,
                restore);
    }
}
