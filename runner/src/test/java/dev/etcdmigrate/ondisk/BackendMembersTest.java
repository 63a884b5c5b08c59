package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The members a member's db records (etcd's membership/store.go JSON), as the --initial-cluster check reads them. */
class BackendMembersTest {

    private static Path db(Path dir, Map<String, String> members) throws IOException {
        Map<String, Map<String, byte[]>> buckets = new TreeMap<>();
        if (members != null) {
            Map<String, byte[]> bucket = new TreeMap<>();
            members.forEach((k, v) -> bucket.put(k, v.getBytes(StandardCharsets.UTF_8)));
            buckets.put("members", bucket);
        }
        buckets.put("meta", Map.of("term", new byte[8]));
        return Files.write(dir.resolve("db"), BboltFixture.db(buckets));
    }

    @Test
    void threeMembersByNameOneNotYetPublishedByItsPeerUrls(@TempDir Path dir) throws IOException {
        Path db = db(
                dir,
                Map.of(
                        "1a",
                        "{\"id\":26,\"peerURLs\":[\"https://10.0.0.11:2380\"],\"name\":\"cp-1\",\"clientURLs\":[\"https://10.0.0.11:2379\"]}",
                        "2b",
                        "{\"id\":43,\"peerURLs\":[\"https://10.0.0.12:2380\"],\"name\":\"cp-2\"}",
                        "3c",
                        "{\"id\":60,\"peerURLs\":[\"https://10.0.0.13:2380\"]}"));
        assertEquals(List.of("cp-1", "cp-2", "[\"https://10.0.0.13:2380\"]"), BackendMembers.recorded(db));
    }

    @Test
    void noDbOrNoBucketRecordsNobody(@TempDir Path dir) throws IOException {
        assertEquals(List.of(), BackendMembers.recorded(dir.resolve("absent")));
        assertEquals(List.of(), BackendMembers.recorded(db(dir, null)));
    }

    @Test
    void aValueEtcdNeverWritesIsDamage(@TempDir Path dir) throws IOException {
        Path db = db(dir, Map.of("1a", "not json {"));
        assertEquals(
                "bucket members",
                assertThrows(DamagedFileException.class, () -> BackendMembers.recorded(db))
                        .damage()
                        .where());
    }
}
