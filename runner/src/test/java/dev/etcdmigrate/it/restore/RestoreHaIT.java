package dev.etcdmigrate.it.restore;

import dev.etcdmigrate.it.cluster.ClusterLab;
import dev.etcdmigrate.it.cluster.NetworkLab;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link RestoreIT}'s cluster cases on three hosts: each member in a network namespace of its own with its own
 * address ({@link NetworkLab}), its runner and every etcd it starts there; peer TLS and client TLS with client-cert
 * auth, so the writes, the snapshot, the reads and {@code status} all go through TLS with the clients' certificate
 * from another host. A snapshot of a live 3.5 cluster restored into 3.7 members one at a time (a member left on its
 * old data refused by the restored cluster and shown by {@code status}) and all at once, and every member's restore
 * SIGKILLed at seeded moments ({@code -Drestore.kill.seed} replays), each converging. Run with -Pha (needs root).
 */
class RestoreHaIT extends RestoreClusterCases {

    @Override
    ClusterLab.Layout layout() {
        return ClusterLab.Layout.SEPARATE_HOSTS;
    }

    @Override
    ClusterLab.Tls tls() {
        return ClusterLab.Tls.PEER_AND_CLIENT;
    }

    @Test
    void aLive35SnapshotRestoredInto37MembersOneAtATimeFencesTheOldData(@TempDir Path dir) throws Exception {
        oneAtATime(dir);
    }

    @Test
    void allMembersRestoredAtOnceReachTheTarget(@TempDir Path dir) throws Exception {
        allAtOnce(dir);
    }

    @Test
    void killsAtRandomMomentsOfEachMembersRestoreConverge(@TempDir Path dir) throws Exception {
        killsAtRandomMomentsOfEachMembersRestore(dir);
    }
}
