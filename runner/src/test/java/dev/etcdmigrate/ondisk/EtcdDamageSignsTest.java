package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** etcd's own words on damaged files (as its fatal lines quote them) and the file each is about; other failures are not damage. */
class EtcdDamageSignsTest {

    @ParameterizedTest
    @CsvSource(
            delimiter = '#',
            value = {
                "panic: assertion failed: Page expected to be: 3, but self identifies as 0#member/snap/db",
                "{\"level\":\"panic\",\"msg\":\"failed to open database\",\"error\":\"invalid database\"}#member/snap/db",
                "panic: invalid page type: 0: 10#member/snap/db",
                "unexpected fault address 0x7f00 fatal error: fault [signal SIGBUS: bus error]#member/snap/db",
                "{\"level\":\"fatal\",\"msg\":\"failed to read WAL from disk\",\"error\":\"walpb: crc mismatch\"}#the WAL",
                "C | etcdserver: read wal error (wal: crc mismatch) and cannot be repaired#the WAL",
                "{\"level\":\"fatal\",\"msg\":\"failed to recover v2 store from snapshot\"}#a snapshot (member/snap/*.snap)",
                "C | etcdserver: recovering backend from snapshot error: snap: crc mismatch#a snapshot (member/snap/*.snap)",
                "C | etcdmain: listen tcp 127.0.0.1:2380: bind: address already in use#",
                "panic: invalid downgrade; server version is lower than determined cluster version#"
            })
    void namesTheFileEtcdsWordsAreAbout(String said, String file) {
        assertEquals(Optional.ofNullable(file), EtcdDamageSigns.in(said).map(EtcdDamageSigns.Sign::file));
    }
}
