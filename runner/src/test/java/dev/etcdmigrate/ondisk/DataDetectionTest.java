package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release.DataRecord;
import dev.etcdmigrate.version.MinorLine;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The small decoders of DataDetection and the catalog facts it asks; real data dirs are DataDetectionIT's. */
class DataDetectionTest {

    @Test
    void anAlarmKeyIsEtcdsAlarmMember() throws Exception {
        // AlarmMember{MemberID = 0x8e9e05c52164694d, Alarm = NOSPACE (1)}: field 1 varint, field 2 varint
        byte[] key = {
            0x08,
            (byte) 0xcd,
            (byte) 0xd2,
            (byte) 0x91,
            (byte) 0x8b,
            (byte) 0xd2,
            (byte) 0xb8,
            (byte) 0x81,
            (byte) 0xcf,
            (byte) 0x8e,
            0x01,
            0x10,
            0x01
        };
        assertEquals(new Alarm("NOSPACE", "8e9e05c52164694d"), DataDetection.alarm(key));
        assertEquals(
                "CORRUPT",
                DataDetection.alarm(new byte[] {0x08, 0x01, 0x10, 0x02}).type());
    }

    @Test
    void aKeyValuesKeyIsItsFirstField() throws Exception {
        byte[] kv = {0x0a, 0x03, 'a', '/', 'b', 0x10, 0x05, 0x2a, 0x01, 'v'};
        assertArrayEquals("a/b".getBytes(StandardCharsets.US_ASCII), DataDetection.kvKey(kv));
        assertEquals(0, DataDetection.kvKey(new byte[0]).length);
    }

    @Test
    void aRecordedVersionGivesItsLine() {
        assertEquals(Optional.of(MinorLine.parse("3.5")), DataDetection.lineOf("3.5.0"));
        assertEquals(Optional.of(MinorLine.parse("2.2")), DataDetection.lineOf("2.2.0"));
        assertEquals(Optional.empty(), DataDetection.lineOf("not a version"));
    }

    @Test
    void theCatalogSaysWhichLineFirstWritesEachRecord() {
        Catalog catalog = Catalog.bundled();
        assertEquals(Optional.of(MinorLine.parse("3.5")), catalog.firstLineRecording(DataRecord.BACKEND_TERM));
        assertEquals(Optional.of(MinorLine.parse("3.5")), catalog.firstLineRecording(DataRecord.BACKEND_CONF_STATE));
        assertEquals(Optional.of(MinorLine.parse("3.6")), catalog.firstLineRecording(DataRecord.STORAGE_VERSION));
        assertEquals(
                Optional.of(MinorLine.parse("3.0")), catalog.firstLineRecording(DataRecord.BACKEND_CLUSTER_VERSION));
        assertEquals(
                catalog.releases().getFirst().minorLine(),
                catalog.firstLineRecording(DataRecord.V2_CLUSTER_VERSION).orElseThrow());
    }

    @Test
    void aDirWithoutEtcdDataHasNoLineAndNoFloor(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("notes.txt"), "x");
        DataDetection.Detection d = DataDetection.detect(dir, Optional.empty(), Catalog.bundled(), true);
        assertFalse(d.holdsEtcdData());
        assertFalse(d.pinned());
        assertEquals(Optional.empty(), d.line());
        assertEquals(Optional.empty(), d.floor());
        assertEquals(Optional.empty(), DataDetection.recordedFloor(dir));
    }

    @Test
    void aDbThatIsNotBboltIsSaidUnreadableAndPinsNothing(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("member/snap"));
        Files.writeString(dir.resolve("member/snap/db"), "not etcd's");
        DataDetection.Detection d = DataDetection.detect(dir, Optional.empty(), Catalog.bundled(), true);
        assertTrue(d.unreadable().isPresent(), d.evidenceText());
        assertFalse(d.pinned(), d.evidenceText());
        assertEquals(Optional.empty(), DataDetection.recordedFloor(dir));
    }

    /** A conf change's damaged JSON is named by its segment, not the WAL dir (a case DamageFuzzIT's mutants reach). */
    @Test
    void aConfChangeWithDamagedJsonIsDamageOfItsSegment(@TempDir Path dir) throws Exception {
        Path wal = Files.createDirectories(dir.resolve("member/wal"));
        java.io.ByteArrayOutputStream change = new java.io.ByteArrayOutputStream();
        change.writeBytes(
                new byte[] {0x10, 0, 0x18, 7, 0x22, 3, '{', 'x', ':'}); // ConfChange{Type 0, NodeID 7, Context "{x:"}
        java.io.ByteArrayOutputStream entry = new java.io.ByteArrayOutputStream();
        entry.writeBytes(
                new byte[] {0x08, 1, 0x10, 2, 0x18, 5, 0x22, (byte) change.size()}); // Entry{Type 1, Term 2, Index 5}
        entry.writeBytes(change.toByteArray());
        java.io.ByteArrayOutputStream record = new java.io.ByteArrayOutputStream();
        record.writeBytes(new byte[] {0x08, 2, 0x1a, (byte) entry.size()}); // Record{type 2 (entry), data}
        record.writeBytes(entry.toByteArray());
        byte[] frame = java.nio.ByteBuffer.allocate(8 + record.size())
                .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .putLong(record.size())
                .put(record.toByteArray())
                .array();
        Path segment = Files.write(wal.resolve("0000000000000000-0000000000000000.wal"), frame);
        DataDetection.Detection d = DataDetection.detect(dir, Optional.empty(), Catalog.bundled(), true);
        assertEquals(1, d.damage().size(), d.evidenceText());
        assertEquals(dir.relativize(segment), d.damage().getFirst().file());
        assertEquals("conf change at index 5", d.damage().getFirst().where());
    }
}
