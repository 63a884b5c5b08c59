package dev.etcdmigrate.restore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The IDs etcd gives the members and the cluster of a restore, against etcd's own numbers: its membership tests'
 * member IDs, and what etcdutl 3.7.3's {@code snapshot restore} logged for three members under a restore token.
 */
class RestoreIdentityTest {

    @Test
    void memberIdsAreEtcdsOwn() {
        // etcd's TestMemberTime: members without a start time, an empty token
        assertEquals(
                Long.parseUnsignedLong("14544069596553697298"),
                RestoreIdentity.memberId(List.of("http://10.0.0.8:2379"), ""));
        assertEquals(
                Long.parseUnsignedLong("16552244735972308939"),
                RestoreIdentity.memberId(List.of("http://10.0.0.2:2379", "http://10.0.0.1:2379"), ""),
                "the peer URLs' order does not matter");
    }

    @Test
    void aRestoresIdsAreTheOnesEtcdutlWrites() {
        String sha = "0123456789abcdef" + "0".repeat(48);
        String token = RestoreIdentity.token(sha);
        assertEquals("etcd-restore-0123456789abcdef", token);
        long m0 = RestoreIdentity.memberId(List.of("https://10.0.0.1:2380"), token);
        long m1 = RestoreIdentity.memberId(List.of("https://10.0.0.2:2380"), token);
        long m2 = RestoreIdentity.memberId(List.of("https://10.0.0.3:2380"), token);
        assertEquals("b7cbbf80aa3a7b17", RestoreIdentity.hex(m0));
        assertEquals("475b420a13b3ee6f", RestoreIdentity.hex(m1));
        assertEquals("57659dca421686af", RestoreIdentity.hex(m2));
        // sorted as unsigned numbers: m0's ID has the top bit set and sorts last
        assertEquals("cd8be8eb4cb14057", RestoreIdentity.hex(RestoreIdentity.clusterId(List.of(m0, m1, m2))));
        assertEquals("cd8be8eb4cb14057", RestoreIdentity.hex(RestoreIdentity.clusterId(List.of(m2, m0, m1))));
    }

    @Test
    void anotherSnapshotIsAnotherCluster() {
        String token = RestoreIdentity.token("fedcba9876543210" + "0".repeat(48));
        long m0 = RestoreIdentity.memberId(List.of("https://10.0.0.1:2380"), token);
        assertNotEquals("b7cbbf80aa3a7b17", RestoreIdentity.hex(m0));
    }
}
