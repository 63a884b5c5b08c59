package dev.etcdmigrate.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The RFC 6902 operations the project's kubeadm patches use (test, add, remove, replace, move, copy), applied to a pod read
 * from a recorded kubeadm manifest (KubeadmCheck: a kubeadm release CI no longer builds). KubeadmCheck checks that this
 * gives exactly what kubeadm's own patches mechanism gives on the release it does build.
 */
final class JsonPatch {

    private JsonPatch() {}

    /** {@code target} with every operation of {@code patch} (a list of operations) applied in order; a failed test throws. */
    static JsonNode apply(JsonNode target, List<JsonNode> patch) {
        JsonNode doc = target.deepCopy();
        for (JsonNode op : patch) {
            String path = op.path("path").asText();
            switch (op.path("op").asText()) {
                case "test" -> {
                    if (!op.path("value").equals(get(doc, path)))
                        throw new AssertionError("patch test failed at " + path + ": " + get(doc, path));
                }
                case "add" -> add(doc, path, op.path("value").deepCopy());
                case "remove" -> remove(doc, path);
                case "replace" -> {
                    remove(doc, path);
                    add(doc, path, op.path("value").deepCopy());
                }
                case "copy" -> add(doc, path, get(doc, op.path("from").asText()).deepCopy());
                case "move" -> {
                    String from = op.path("from").asText();
                    JsonNode value = get(doc, from);
                    remove(doc, from);
                    add(doc, path, value);
                }
                default -> throw new AssertionError("unsupported patch operation " + op);
            }
        }
        return doc;
    }

    private static JsonNode get(JsonNode doc, String path) {
        JsonNode node = doc.at(path);
        if (node.isMissingNode()) throw new AssertionError("no " + path + " in the document");
        return node;
    }

    private static void add(JsonNode doc, String path, JsonNode value) {
        JsonNode parent = get(doc, parentOf(path));
        String last = lastOf(path);
        if (parent instanceof ArrayNode array) {
            if (last.equals("-")) array.add(value);
            else array.insert(Integer.parseInt(last), value);
        } else {
            ((ObjectNode) parent).set(last, value);
        }
    }

    private static void remove(JsonNode doc, String path) {
        get(doc, path);
        JsonNode parent = get(doc, parentOf(path));
        String last = lastOf(path);
        if (parent instanceof ArrayNode array) array.remove(Integer.parseInt(last));
        else ((ObjectNode) parent).remove(last);
    }

    private static String parentOf(String path) {
        return path.substring(0, path.lastIndexOf('/'));
    }

    private static String lastOf(String path) {
        return path.substring(path.lastIndexOf('/') + 1).replace("~1", "/").replace("~0", "~");
    }
}
