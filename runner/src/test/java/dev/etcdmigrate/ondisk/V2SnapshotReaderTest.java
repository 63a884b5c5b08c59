package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.etcdmigrate.v2.V2SnapshotFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The reader on snapshot files laid out like etcd's (checked against real 3.4 and 2.2 files by the ITs). */
class V2SnapshotReaderTest {

    private static final String STORE = """
            {"Root":{"Path":"/","CreatedIndex":0,"ModifiedIndex":0,"ExpireTime":"0001-01-01T00:00:00Z","Value":"","Children":{
              "0":{"Path":"/0","CreatedIndex":1,"ModifiedIndex":1,"ExpireTime":"0001-01-01T00:00:00Z","Value":"","Children":{
                "version":{"Path":"/0/version","CreatedIndex":3,"ModifiedIndex":3,"ExpireTime":"0001-01-01T00:00:00Z","Value":"3.4.0","Children":null}}},
              "1":{"Path":"/1","CreatedIndex":2,"ModifiedIndex":2,"ExpireTime":"0001-01-01T00:00:00Z","Value":"","Children":{
                "_h":{"Path":"/1/_h","CreatedIndex":8,"ModifiedIndex":8,"ExpireTime":"0001-01-01T00:00:00Z","Value":"hidden","Children":null},
                "emptydir":{"Path":"/1/emptydir","CreatedIndex":9,"ModifiedIndex":9,"ExpireTime":"0001-01-01T00:00:00Z","Value":"","Children":{}},
                "r":{"Path":"/1/r","CreatedIndex":5,"ModifiedIndex":5,"ExpireTime":"0001-01-01T00:00:00Z","Value":"","Children":{
                  "e":{"Path":"/1/r/e","CreatedIndex":6,"ModifiedIndex":7,"ExpireTime":"2030-01-01T00:00:00.5Z","Value":"été \\"q\\"","Children":null}}}}}}},
             "WatcherHub":{"EventHistory":{"Queue":{"Events":[]}}},"CurrentIndex":9,"CurrentVersion":2}
            """;

    @Test
    void readsEveryUserKeyWithHiddenOnesAndExpiryButNotDirsOrMembership(@TempDir Path dir) throws IOException {
        Path snap = Files.createDirectories(dir.resolve("member/snap"));
        Files.write(snap.resolve("0000000000000002-0000000000000004.snap"), new byte[] {0x08, 0x01});
        Files.write(
                snap.resolve("0000000000000002-0000000000000009.snap"),
                V2SnapshotFiles.snapshotFile(STORE.getBytes(StandardCharsets.UTF_8)));
        Path newest = V2SnapshotReader.newestSnapshot(dir.resolve("member")).orElseThrow();
        assertEquals(
                "0000000000000002-0000000000000009.snap", newest.getFileName().toString());
        List<V2Key> keys = new ArrayList<>();
        assertEquals(2, V2SnapshotReader.read(newest, keys::add));
        assertEquals(new V2Key("/_h", "hidden", 8, 8, Optional.empty()), keys.get(0));
        assertEquals(
                new V2Key("/r/e", "été \"q\"", 6, 7, Optional.of(Instant.parse("2030-01-01T00:00:00.5Z"))),
                keys.get(1));
        assertEquals(true, keys.get(0).hidden());
        assertEquals(false, keys.get(1).hidden());
    }

    @Test
    void aTruncatedFileIsAnError(@TempDir Path dir) throws IOException {
        byte[] whole = V2SnapshotFiles.snapshotFile(STORE.getBytes(StandardCharsets.UTF_8));
        Path cut = dir.resolve("cut.snap");
        Files.write(cut, java.util.Arrays.copyOf(whole, whole.length / 2));
        assertThrows(DamagedFileException.class, () -> V2SnapshotReader.read(cut, k -> {}));
    }

    /** Every byte of the envelope and of the store's first 400 bytes set to two values: keys or a finding. */
    @Test
    void everySingleByteMutationIsAnAnswerOrAFinding(@TempDir Path dir) throws IOException {
        byte[] whole = V2SnapshotFiles.snapshotFile(STORE.getBytes(StandardCharsets.UTF_8));
        Path file = dir.resolve("0000000000000002-0000000000000009.snap");
        int findings = 0;
        for (int i = 0; i < Math.min(whole.length, 420); i++) {
            for (byte value : new byte[] {(byte) 0xFF, (byte) (whole[i] ^ 0x08)}) {
                byte[] b = whole.clone();
                b[i] = value;
                Files.write(file, b);
                try {
                    V2SnapshotReader.readOutsideMembership(file, k -> {});
                    V2SnapshotReader.readMembership(file, k -> {});
                } catch (DamagedFileException expected) {
                    assertEquals(file, expected.damage().file());
                    findings++;
                } catch (RuntimeException e) {
                    org.junit.jupiter.api.Assertions.fail("byte " + i + " set to " + value + ": " + e, e);
                }
            }
        }
        org.junit.jupiter.api.Assertions.assertTrue(findings > 0);
    }
}
