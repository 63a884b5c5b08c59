package dev.etcdmigrate.ondisk;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The cluster's members as this member's v3 backend records them: bucket {@code members}, one JSON value per member
 * ({@code {"id":..,"peerURLs":[..],"name":..}}, etcd's membership/store.go since 3.4; the name only once the member
 * published it). etcd ignores --initial-cluster once the data exists; the runner counts members there, so the data
 * tells it when the flag names fewer (kubeadm's first control-plane node names only itself).
 */
public final class BackendMembers {

    static final String BUCKET = "members";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int LIMIT = 1000;

    private BackendMembers() {}

    /** Each recorded member's name, or its peer URLs where it has none; empty without a db or the bucket. */
    public static List<String> recorded(Path db) throws IOException {
        List<String> members = new ArrayList<>();
        if (!Files.isRegularFile(db)) return members;
        try (BboltFile file = BboltFile.open(db)) {
            if (!file.hasBucket(BUCKET)) return members;
            for (BboltFile.Entry e : file.entries(BUCKET, LIMIT)) {
                JsonNode m;
                try {
                    m = JSON.readTree(new String(e.value(), StandardCharsets.UTF_8));
                } catch (IOException notJson) {
                    throw new DamagedFileException(
                            new Damage(db, "bucket " + BUCKET, "a member's JSON value, as etcd writes it"));
                }
                String name = m.path("name").asText("");
                members.add(name.isEmpty() ? m.path("peerURLs").toString() : name);
            }
        }
        return members;
    }
}
