package dev.etcdmigrate.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class EtcdFlagsTest {

    @Test
    void readsEveryFormGoFlagParsingAccepts() {
        assertEquals(Optional.of("/a"), EtcdFlags.read(List.of("--data-dir", "/a"), Map.of()).get("data-dir"));
        assertEquals(Optional.of("/a"), EtcdFlags.read(List.of("--data-dir=/a"), Map.of()).get("data-dir"));
        assertEquals(Optional.of("/a"), EtcdFlags.read(List.of("-data-dir", "/a"), Map.of()).get("data-dir"));
        assertEquals(Optional.of("/a"), EtcdFlags.read(List.of("-data-dir=/a"), Map.of()).get("data-dir"));
        assertEquals(Optional.of("/b"), EtcdFlags.read(List.of("--data-dir=/a", "--data-dir", "/b"), Map.of()).get("data-dir"),
                "the last one wins");
        assertEquals(Optional.empty(), EtcdFlags.read(List.of("--", "--data-dir=/a"), Map.of()).get("data-dir"),
                "Go's flag parsing stops at --");
    }

    @Test
    void aFlagBeatsItsVariableAndTheVariableStandsInWithoutIt() {
        assertEquals(Optional.of("/flag"), EtcdFlags.read(List.of("--wal-dir=/flag"), Map.of("ETCD_WAL_DIR", "/env")).get("wal-dir"));
        EtcdFlags env = EtcdFlags.read(List.of(), Map.of("ETCD_WAL_DIR", "/env", "ETCD_NAME", ""));
        assertEquals(Optional.of("/env"), env.get("wal-dir"));
        assertTrue(env.source("wal-dir").contains("$ETCD_WAL_DIR"), env.source("wal-dir"));
        assertEquals(Optional.empty(), env.get("name"), "an empty variable is unset");
    }

    @Test
    void booleanPeerTlsFlagsNeverSwallowTheNextWord() {
        EtcdFlags f = EtcdFlags.read(List.of("--peer-client-cert-auth", "--peer-cert-file", "/c", "--peer-key-file=/k"), Map.of());
        assertEquals(List.of("--peer-cert-file=/c", "--peer-key-file=/k", "--peer-client-cert-auth=true"), f.peerTlsArgs());
    }
}
