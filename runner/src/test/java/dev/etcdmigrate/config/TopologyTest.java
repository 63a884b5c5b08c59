package dev.etcdmigrate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.error.UsageException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** --initial-cluster taken apart in one place, and the topology it decides. */
class TopologyTest {

    private static final EtcdCommandLine NONE = EtcdCommandLine.ofWords("");

    private static Peers peers(String initialCluster) {
        return new Peers("a", initialCluster, "http://a:2380", "http://a:2380");
    }

    @Test
    void membersAreCountedByNameAndAMemberMayHaveSeveralUrls() throws UsageException {
        assertEquals(1, peers("a=http://a:2380,a=http://a2:2380").count());
        assertEquals(3, peers("a=http://a:2380,b=http://b:2380,c=http://c:2380").count());
        assertEquals(
                "http://a:2380,http://a2:2380",
                Peers.peerUrlOf("a", "a=http://a:2380,b=http://b:2380,a=http://a2:2380"));
        assertEquals(
                List.of("http://b:2380", "http://c:2380"),
                peers("a=http://a:2380,b=http://b:2380,c=http://c:2380").otherPeerUrls());
    }

    @Test
    void theAdvertisedClientUrlsOneByOne() {
        var tls = new Topology.ClientTls(
                " https://10.0.0.1:2379, ,https://m0.example:2379",
                Optional.empty(),
                Optional.empty(),
                Optional.empty());
        assertEquals(List.of("https://10.0.0.1:2379", "https://m0.example:2379"), tls.clientUrls());
    }

    @Test
    void aNameTheListLacksIsAUsageError() {
        var e = assertThrows(UsageException.class, () -> Peers.peerUrlOf("x", "a=http://a:2380"));
        assertTrue(e.getMessage().contains("'x'") && e.getMessage().contains("a=http://a:2380"), e.getMessage());
    }

    @Test
    void twoOrMoreMembersMakeAMemberWithItsTls() throws UsageException {
        EtcdCommandLine etcd = EtcdCommandLine.read(
                List.of("--peer-cert-file=/p.crt", "--cert-file=/c.crt", "--advertise-client-urls=https://a:2379"),
                Map.of());
        Topology.PeerTls peerTls = Topology.PeerTls.of(etcd, NONE);
        Topology.ClientTls clientTls = Topology.ClientTls.of(etcd);
        assertInstanceOf(Topology.Single.class, Topology.of(peers("a=http://a:2380"), peerTls, clientTls));
        var member = assertInstanceOf(
                Topology.Member.class, Topology.of(peers("a=http://a:2380,b=http://b:2380"), peerTls, clientTls));
        assertEquals(2, member.size());
        assertEquals(List.of("--peer-cert-file=/p.crt"), member.peerTls().args());
        assertEquals(Optional.of(Path.of("/c.crt")), member.clientTls().certFile());
        assertEquals("https://a:2379", member.clientTls().advertiseClientUrls());
    }

    @Test
    void credsGivingAnotherPeerFileThanEtcdIsRefused() throws UsageException {
        EtcdCommandLine etcd = EtcdCommandLine.read(List.of("--peer-cert-file=/p.crt"), Map.of());
        assertThrows(
                UsageException.class,
                () -> Topology.PeerTls.of(etcd, EtcdCommandLine.ofWords("--peer-cert-file=/other.crt")));
        assertEquals(
                List.of(),
                Topology.PeerTls.of(etcd, EtcdCommandLine.ofWords("--peer-cert-file=/p.crt"))
                        .args());
    }
}
