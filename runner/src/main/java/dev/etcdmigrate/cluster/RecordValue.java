package dev.etcdmigrate.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The value of the restart record: which member's runner holds it, for which restart (from one line to the
 * next), since when, and where its member serves (its own {@code --advertise-client-urls}: the take-over reads the
 * holder there, never on a URL another etcd may answer). JSON, so an operator reading the key with etcdctl
 * understands it. {@code serves} is empty for a record the release before wrote (no such field): the take-over then
 * reads the holder on the member list's URL, as that release did.
 */
public record RecordValue(String holder, MinorLine from, MinorLine to, Instant at, List<String> serves) {

    private static final ObjectMapper JSON = new ObjectMapper();

    public RecordValue {
        serves = List.copyOf(serves);
    }

    /** A record that names no URL (as the release before wrote it). */
    public RecordValue(String holder, MinorLine from, MinorLine to, Instant at) {
        this(holder, from, to, at, List.of());
    }

    public String toJson() {
        ObjectNode node = JSON.createObjectNode();
        node.put("holder", holder);
        node.put("from", from.toString());
        node.put("to", to.toString());
        node.put("at", at.toString());
        if (!serves.isEmpty()) {
            ArrayNode urls = node.putArray("serves");
            serves.forEach(urls::add);
        }
        return node.toString();
    }

    /**
     * A value this runner cannot read is someone else's key: refused, never overwritten. Fields it does not know are
     * ignored (the release before reads this release's records the same way).
     */
    public static RecordValue parse(String json) throws IOException {
        try {
            JsonNode node = JSON.readTree(json);
            List<String> serves = new ArrayList<>();
            for (JsonNode url : node.path("serves")) {
                if (!url.isTextual() || url.asText().isBlank()) throw new IllegalArgumentException("serves: " + url);
                serves.add(url.asText());
            }
            return new RecordValue(
                    node.path("holder").asText(),
                    MinorLine.parse(node.path("from").asText()),
                    MinorLine.parse(node.path("to").asText()),
                    Instant.parse(node.path("at").asText()),
                    serves);
        } catch (RuntimeException e) {
            throw new IOException("the restart record is not etcd-migrate's (" + e.getMessage() + ")", e);
        }
    }
}
