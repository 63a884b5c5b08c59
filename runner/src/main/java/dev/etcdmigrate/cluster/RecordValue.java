package dev.etcdmigrate.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.time.Instant;

/**
 * The value of the restart record: which member's runner holds it, for which restart (from one line to the
 * next) and since when. JSON, so an operator reading the key with etcdctl understands it.
 */
public record RecordValue(String holder, MinorLine from, MinorLine to, Instant at) {

    private static final ObjectMapper JSON = new ObjectMapper();

    public String toJson() {
        ObjectNode node = JSON.createObjectNode();
        node.put("holder", holder);
        node.put("from", from.toString());
        node.put("to", to.toString());
        node.put("at", at.toString());
        return node.toString();
    }

    /** A value this runner cannot read is someone else's key: refused, never overwritten. */
    public static RecordValue parse(String json) throws IOException {
        try {
            JsonNode node = JSON.readTree(json);
            return new RecordValue(
                    node.path("holder").asText(),
                    MinorLine.parse(node.path("from").asText()),
                    MinorLine.parse(node.path("to").asText()),
                    Instant.parse(node.path("at").asText()));
        } catch (RuntimeException e) {
            throw new IOException("the restart record is not etcd-migrate's (" + e.getMessage() + ")", e);
        }
    }
}
