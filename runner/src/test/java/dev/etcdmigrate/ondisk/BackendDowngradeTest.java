package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A downgrade job as a member's db records it: enabled, ended, never started, and a value etcd never writes. */
class BackendDowngradeTest {

    private static Path db(Path dir, String downgrade) throws IOException {
        Map<String, Map<String, byte[]>> buckets = new TreeMap<>();
        Map<String, byte[]> cluster = new TreeMap<>(Map.of("clusterVersion", "3.5.0".getBytes(StandardCharsets.UTF_8)));
        if (downgrade != null) cluster.put("downgrade", downgrade.getBytes(StandardCharsets.UTF_8));
        buckets.put("cluster", cluster);
        buckets.put("meta", Map.of("term", new byte[8]));
        return Files.write(dir.resolve("db"), BboltFixture.db(buckets));
    }

    @Test
    void anEnabledJobNamesItsTargetsLine(@TempDir Path dir) throws IOException {
        assertEquals(
                Optional.of(MinorLine.parse("3.5")),
                BackendDowngrade.job(db(dir, "{\"target-version\":\"3.5.0\",\"enabled\":true}")));
    }

    @Test
    void anEndedJobANeverStartedOneAndNoDbAreNone(@TempDir Path dir) throws IOException {
        // etcd keeps the key with "enabled":false once the job ends (or is cancelled)
        assertEquals(Optional.empty(), BackendDowngrade.job(db(dir, "{\"target-version\":\"\",\"enabled\":false}")));
        assertEquals(Optional.empty(), BackendDowngrade.job(db(dir, null)));
        assertEquals(Optional.empty(), BackendDowngrade.job(dir.resolve("absent")));
    }

    @Test
    void aValueEtcdNeverWritesIsDamageNamingTheKey(@TempDir Path dir) throws IOException {
        Path garbled = db(dir, "{\"target-version\":");
        assertEquals(
                "bucket cluster, key downgrade",
                assertThrows(DamagedFileException.class, () -> BackendDowngrade.job(garbled))
                        .damage()
                        .where());
        Path noTarget = db(dir, "{\"enabled\":true}");
        assertThrows(DamagedFileException.class, () -> BackendDowngrade.job(noTarget));
    }
}
