package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WalIndexTest {

    @Test
    void theHighestEntryIndexAcrossSegmentsPaddingAndAPreallocatedTail(@TempDir Path wal) throws Exception {
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        frame(first, record(1, new byte[] {8, 1}), 0); // a metadata record: no entry
        frame(first, record(2, entry(1, 7)), 3);
        frame(first, record(2, entry(1, 300)), 0);
        Files.write(wal.resolve("0000000000000000-0000000000000000.wal"), first.toByteArray());
        ByteArrayOutputStream second = new ByteArrayOutputStream();
        frame(second, record(2, entry(2, 301)), 5);
        frame(second, record(4, new byte[] {8, 9}), 0); // a CRC record
        second.write(new byte[4096]); // etcd preallocates segments with zeros
        Files.write(wal.resolve("0000000000000001-000000000000012d.wal"), second.toByteArray());
        assertEquals(OptionalLong.of(301), WalIndex.lastIndex(wal));
    }

    @Test
    void readingAfterAnIndexSkipsTheSegmentsBeforeIt(@TempDir Path wal) throws Exception {
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        frame(first, record(1, new byte[] {8, 1}), 0); // metadata: member id 1, in the first segment only here
        frame(first, record(2, entry(1, 7)), 3);
        frame(first, record(2, entry(1, 300)), 0);
        Files.write(wal.resolve("0000000000000000-0000000000000000.wal"), first.toByteArray());
        ByteArrayOutputStream second = new ByteArrayOutputStream();
        frame(second, record(2, entry(2, 301)), 5);
        Files.write(wal.resolve("0000000000000001-000000000000012d.wal"), second.toByteArray());
        WalSummary tail = WalRecords.readAfter(wal, 300);
        assertEquals(OptionalLong.of(301), tail.lastIndex());
        assertEquals(301, tail.firstSegmentIndex());
        assertEquals(OptionalLong.empty(), tail.memberId(), "the first segment was not read");
        assertEquals(OptionalLong.of(1), WalRecords.read(wal).memberId());
        assertEquals(OptionalLong.of(1), WalRecords.readAfter(wal, 299).memberId(), "entry 300 is in the first");
    }

    @Test
    void aTornTailIsIgnoredAndAnEmptyDirHasNoIndex(@TempDir Path wal) throws Exception {
        assertEquals(OptionalLong.empty(), WalIndex.lastIndex(wal));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        frame(out, record(2, entry(1, 5)), 0);
        byte[] torn = new byte[out.size() + 12];
        System.arraycopy(out.toByteArray(), 0, torn, 0, out.size());
        ByteBuffer.wrap(torn, out.size(), 8)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putLong(100); // a frame whose record never came
        Files.write(wal.resolve("0000000000000000-0000000000000000.wal"), torn);
        assertEquals(OptionalLong.of(5), WalIndex.lastIndex(wal));
    }

    @Test
    void pruningKeepsTheSnapshotItsSegmentAndLaterOnes(@TempDir Path member) throws Exception {
        Path snap = Files.createDirectories(member.resolve("snap"));
        Path wal = Files.createDirectories(member.resolve("wal"));
        for (String name :
                new String[] {"0000000000000001-0000000000000010.snap", "0000000000000002-0000000000000200.snap", "db"
                }) {
            Files.write(snap.resolve(name), new byte[] {1});
        }
        for (String name : new String[] {
            "0000000000000000-0000000000000000.wal",
            "0000000000000001-0000000000000100.wal",
            "0000000000000002-0000000000000180.wal",
            "0000000000000003-0000000000000300.wal"
        }) {
            Files.write(wal.resolve(name), new byte[] {1});
        }
        WalIndex.pruneBefore(member, snap.resolve("0000000000000002-0000000000000200.snap"));
        try (var s = Files.list(snap);
                var w = Files.list(wal)) {
            assertEquals(
                    java.util.Set.of("0000000000000002-0000000000000200.snap", "db"),
                    s.map(p -> p.getFileName().toString()).collect(java.util.stream.Collectors.toSet()));
            assertEquals(
                    java.util.Set.of("0000000000000002-0000000000000180.wal", "0000000000000003-0000000000000300.wal"),
                    w.map(p -> p.getFileName().toString()).collect(java.util.stream.Collectors.toSet()));
        }
    }

    @Test
    void theSnapshotIndexIsInTheFileName() {
        assertEquals(0x493e2, WalIndex.snapshotIndex(Path.of("0000000000000002-00000000000493e2.snap")));
    }

    /** raft's start check, read offline: a hard state committing entries the WAL no longer holds (a lost tail). */
    @Test
    void aHardStateCommittingPastTheLastEntryIsDamage(@TempDir Path wal) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        frame(out, record(2, entry(1, 5)), 0);
        frame(out, record(3, new byte[] {8, 1, 0x18, 5}), 0); // HardState{Term 1, Commit 5}: held
        Path segment = wal.resolve("0000000000000000-0000000000000000.wal");
        Files.write(segment, out.toByteArray());
        assertEquals(OptionalLong.of(5), WalRecords.read(wal).lastIndex());
        frame(out, record(3, new byte[] {8, 1, 0x18, 9}), 0); // commits 9: entries 6-9 are gone
        Files.write(segment, out.toByteArray());
        DamagedFileException e =
                org.junit.jupiter.api.Assertions.assertThrows(DamagedFileException.class, () -> WalRecords.read(wal));
        assertEquals(segment, e.damage().file());
        // the two figures that disagree: the last entry held, the index the hard state commits
        org.junit.jupiter.api.Assertions.assertTrue(
                e.damage().where().contains("5") && e.damage().expected().contains("index 9"), e.getMessage());
    }

    /** Every byte of a segment set to two values in turn: WalRecords answers or names the damage, nothing else. */
    @Test
    void everySingleByteMutationIsAnAnswerOrAFinding(@TempDir Path wal) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        frame(out, record(1, new byte[] {8, 1, 16, 2}), 0);
        frame(out, record(2, entry(1, 7)), 3);
        frame(out, record(2, entry(1, 8)), 0);
        byte[] whole = out.toByteArray();
        Path segment = wal.resolve("0000000000000000-0000000000000000.wal");
        int findings = 0;
        for (int i = 0; i < whole.length; i++) {
            for (byte value : new byte[] {(byte) 0xFF, (byte) (whole[i] ^ 0x04)}) {
                byte[] b = whole.clone();
                b[i] = value;
                Files.write(segment, b);
                try {
                    WalRecords.read(wal);
                } catch (DamagedFileException expected) {
                    assertEquals(segment, expected.damage().file());
                    findings++;
                } catch (RuntimeException e) {
                    org.junit.jupiter.api.Assertions.fail("byte " + i + " set to " + value + ": " + e, e);
                }
            }
        }
        org.junit.jupiter.api.Assertions.assertTrue(findings > 0);
    }

    @Test
    void aRecordThatDoesNotDecodeIsDamageAtItsFrame(@TempDir Path wal) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        frame(out, record(2, entry(1, 7)), 0);
        int second = out.size();
        frame(out, new byte[] {(byte) 0x0a, (byte) 0x7f, 1}, 0); // field 1 as bytes of 127: past its record
        Files.write(wal.resolve("0000000000000000-0000000000000000.wal"), out.toByteArray());
        DamagedFileException e =
                org.junit.jupiter.api.Assertions.assertThrows(DamagedFileException.class, () -> WalRecords.read(wal));
        assertEquals("WAL frame at offset " + second, e.damage().where());
    }

    private static byte[] entry(long term, long index) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(2 << 3);
        varint(out, term);
        out.write(3 << 3);
        varint(out, index);
        out.write((4 << 3) | 2);
        varint(out, 3);
        out.writeBytes(new byte[] {'a', 'b', 'c'});
        return out.toByteArray();
    }

    private static byte[] record(long type, byte[] data) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(1 << 3);
        varint(out, type);
        out.write(2 << 3);
        varint(out, 12345);
        out.write((3 << 3) | 2);
        varint(out, data.length);
        out.writeBytes(data);
        return out.toByteArray();
    }

    private static void frame(ByteArrayOutputStream out, byte[] record, int padding) {
        long length = record.length;
        if (padding > 0) length |= (0x80L | padding) << 56;
        out.writeBytes(ByteBuffer.allocate(8)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putLong(length)
                .array());
        out.writeBytes(record);
        out.writeBytes(new byte[padding]);
    }

    private static void varint(ByteArrayOutputStream out, long v) {
        while ((v & ~0x7fL) != 0) {
            out.write((int) ((v & 0x7f) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }
}
