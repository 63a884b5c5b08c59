package dev.etcdmigrate.ondisk;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * etcd's JSON values in its files (members, the downgrade info, conf change contexts): one that does not parse is
 * damage. What etcd writes (Go's encoding/json: ASCII-safe, plain RFC 8259) is read by a small strict parser; any
 * input it does not take whole goes to Jackson, which alone decides damage, so what is damage stays what Jackson
 * says. Jackson's databind costs 150-230 ms of a restart (ObjectMapper, locale data, parser classes outside the AOT
 * cache opening every jar of the class path), and every start of data with a conf change in its WAL parsed one.
 */
final class EtcdJson {

    private EtcdJson() {}

    /** Jackson's databind only for values the strict parser does not take: etcd's own values never need it. */
    private static final class Holder {
        static final ObjectMapper MAPPER = new ObjectMapper();
    }

    static Node parse(Path file, String where, byte[] value) throws DamagedFileException {
        Node fast = StrictJson.parse(value);
        if (fast != null) return fast;
        try {
            return Node.of(Holder.MAPPER.readTree(value));
        } catch (IOException e) {
            throw new DamagedFileException(new Damage(file, where, "a JSON value as etcd writes it"));
        }
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }

    /** A JSON value with the readings the readers use, each answering as Jackson's JsonNode does. */
    static final class Node implements Iterable<Node> {

        enum Kind {
            MISSING,
            NULL,
            BOOLEAN,
            INTEGRAL,
            FLOATING,
            STRING,
            ARRAY,
            OBJECT
        }

        static final Node MISSING = new Node(Kind.MISSING, null, null, null, List.of(), Map.of());
        static final Node NULL = new Node(Kind.NULL, null, null, null, List.of(), Map.of());
        static final Node TRUE = new Node(Kind.BOOLEAN, "true", null, null, List.of(), Map.of());
        static final Node FALSE = new Node(Kind.BOOLEAN, "false", null, null, List.of(), Map.of());

        private final Kind kind;
        private final String text; // STRING: the value; BOOLEAN: "true"/"false"
        private final BigInteger integral;
        private final Double floating;
        private final List<Node> items; // ARRAY: the elements; OBJECT: the values, in the fields' order
        private final Map<String, Node> fields;

        private Node(
                Kind kind,
                String text,
                BigInteger integral,
                Double floating,
                List<Node> items,
                Map<String, Node> fields) {
            this.kind = kind;
            this.text = text;
            this.integral = integral;
            this.floating = floating;
            this.items = items;
            this.fields = fields;
        }

        static Node string(String s) {
            return new Node(Kind.STRING, s, null, null, List.of(), Map.of());
        }

        static Node integral(BigInteger v) {
            return new Node(Kind.INTEGRAL, null, v, null, List.of(), Map.of());
        }

        static Node floating(double v) {
            return new Node(Kind.FLOATING, null, null, v, List.of(), Map.of());
        }

        static Node array(List<Node> items) {
            return new Node(Kind.ARRAY, null, null, null, items, Map.of());
        }

        static Node object(Map<String, Node> fields) {
            return new Node(Kind.OBJECT, null, null, null, List.copyOf(fields.values()), fields);
        }

        /** Jackson's tree, for what the strict parser left to it. */
        static Node of(JsonNode n) {
            if (n == null || n.isMissingNode()) return MISSING;
            if (n.isNull()) return NULL;
            if (n.isBoolean()) return n.booleanValue() ? TRUE : FALSE;
            if (n.isIntegralNumber()) return integral(n.bigIntegerValue());
            if (n.isNumber()) return floating(n.doubleValue());
            if (n.isTextual()) return string(n.textValue());
            if (n.isArray()) {
                List<Node> items = new ArrayList<>();
                n.forEach(e -> items.add(of(e)));
                return array(List.copyOf(items));
            }
            if (n.isObject()) {
                Map<String, Node> fields = new LinkedHashMap<>();
                n.properties().forEach(e -> fields.put(e.getKey(), of(e.getValue())));
                return object(Collections.unmodifiableMap(fields));
            }
            return MISSING; // binary or POJO nodes: readTree makes neither
        }

        /** The field's value, or the missing value (JsonNode.path). */
        Node path(String field) {
            if (kind != Kind.OBJECT) return MISSING;
            return fields.getOrDefault(field, MISSING);
        }

        /** Elements of an array or values of an object (JsonNode.size). */
        int size() {
            return items.size();
        }

        @Override
        public Iterator<Node> iterator() {
            return items.iterator();
        }

        /** JsonNode.asText(). */
        String asText() {
            return switch (kind) {
                case MISSING, ARRAY, OBJECT -> "";
                case NULL -> "null";
                case BOOLEAN, STRING -> text;
                case INTEGRAL -> integral.toString();
                case FLOATING -> Double.toString(floating);
            };
        }

        /** JsonNode.asText(String): the default for a missing or null value. */
        String asText(String otherwise) {
            return kind == Kind.MISSING || kind == Kind.NULL ? otherwise : asText();
        }

        /** JsonNode.asBoolean(boolean). */
        boolean asBoolean(boolean otherwise) {
            return switch (kind) {
                case BOOLEAN -> text.equals("true");
                case INTEGRAL -> integral.signum() != 0;
                case STRING -> {
                    String t = text.trim();
                    yield t.equals("true") || (!t.equals("false") && otherwise);
                }
                default -> otherwise;
            };
        }

        /** JsonNode.asLong() for what etcd writes there (numbers); anything else asks Jackson's own node. */
        long asLong() {
            return switch (kind) {
                case INTEGRAL -> integral.longValue();
                case FLOATING -> (long) (double) floating;
                case BOOLEAN -> text.equals("true") ? 1 : 0;
                case STRING ->
                    com.fasterxml.jackson.databind.node.TextNode.valueOf(text).asLong();
                default -> 0;
            };
        }
    }
}
