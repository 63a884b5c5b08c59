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
        Node fast = Strict.parse(value);
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

    /**
     * RFC 8259 over ASCII bytes, the whole input one value: returns null for anything else (bytes over 0x7f, a BOM,
     * trailing content, deep nesting, long numbers), which Jackson then reads or refuses.
     */
    static final class Strict {

        /** Below Jackson's StreamReadConstraints (nesting 1000, number length 1000), so Jackson would take it too. */
        private static final int MAX_DEPTH = 500;

        private static final int MAX_NUMBER = 500;

        private final byte[] b;
        private int i;

        private Strict(byte[] b) {
            this.b = b;
        }

        static Node parse(byte[] b) {
            Strict p = new Strict(b);
            try {
                p.ws();
                if (p.i == b.length) return null; // empty: Jackson's answer
                Node n = p.value(0);
                p.ws();
                return p.i == b.length ? n : null;
            } catch (Leave e) {
                return null;
            }
        }

        /** Not taken here: Jackson reads it. */
        private static final class Leave extends Exception {
            Leave() {
                super(null, null, false, false);
            }
        }

        private static final Leave LEAVE = new Leave();

        private void ws() {
            while (i < b.length && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r')) i++;
        }

        private int peek() throws Leave {
            if (i >= b.length) throw LEAVE;
            return b[i];
        }

        private Node value(int depth) throws Leave {
            if (depth > MAX_DEPTH) throw LEAVE;
            int c = peek();
            switch (c) {
                case '{' -> {
                    i++;
                    Map<String, Node> fields = new LinkedHashMap<>();
                    ws();
                    if (peek() == '}') {
                        i++;
                        return Node.object(Collections.unmodifiableMap(fields));
                    }
                    while (true) {
                        ws();
                        if (peek() != '"') throw LEAVE;
                        String name = string();
                        ws();
                        if (peek() != ':') throw LEAVE;
                        i++;
                        ws();
                        fields.put(name, value(depth + 1)); // a repeated name: the last value, as Jackson's tree
                        ws();
                        int d = peek();
                        i++;
                        if (d == '}') return Node.object(Collections.unmodifiableMap(fields));
                        if (d != ',') throw LEAVE;
                    }
                }
                case '[' -> {
                    i++;
                    List<Node> items = new ArrayList<>();
                    ws();
                    if (peek() == ']') {
                        i++;
                        return Node.array(List.of());
                    }
                    while (true) {
                        ws();
                        items.add(value(depth + 1));
                        ws();
                        int d = peek();
                        i++;
                        if (d == ']') return Node.array(List.copyOf(items));
                        if (d != ',') throw LEAVE;
                    }
                }
                case '"' -> {
                    return Node.string(string());
                }
                case 't' -> {
                    literal("true");
                    return Node.TRUE;
                }
                case 'f' -> {
                    literal("false");
                    return Node.FALSE;
                }
                case 'n' -> {
                    literal("null");
                    return Node.NULL;
                }
                default -> {
                    if (c == '-' || (c >= '0' && c <= '9')) return number();
                    throw LEAVE;
                }
            }
        }

        private void literal(String word) throws Leave {
            for (int k = 0; k < word.length(); k++) {
                if (peek() != word.charAt(k)) throw LEAVE;
                i++;
            }
            // a letter or digit right after (e.g. "truex") is Jackson's to judge
            if (i < b.length && Character.isLetterOrDigit(b[i] & 0xff)) throw LEAVE;
        }

        private Node number() throws Leave {
            int start = i;
            boolean floating = false;
            if (b[i] == '-') i++;
            if (peek() == '0') {
                i++;
            } else if (peek() >= '1' && peek() <= '9') {
                while (i < b.length && b[i] >= '0' && b[i] <= '9') i++;
            } else {
                throw LEAVE;
            }
            if (i < b.length && b[i] == '.') {
                floating = true;
                i++;
                if (!(peek() >= '0' && peek() <= '9')) throw LEAVE;
                while (i < b.length && b[i] >= '0' && b[i] <= '9') i++;
            }
            if (i < b.length && (b[i] == 'e' || b[i] == 'E')) {
                floating = true;
                i++;
                if (peek() == '+' || peek() == '-') i++;
                if (!(peek() >= '0' && peek() <= '9')) throw LEAVE;
                while (i < b.length && b[i] >= '0' && b[i] <= '9') i++;
            }
            // what follows must end the number: whitespace, a separator or the end
            if (i < b.length) {
                int n = b[i];
                if (!(n == ' ' || n == '\t' || n == '\n' || n == '\r' || n == ',' || n == ']' || n == '}')) throw LEAVE;
            }
            if (i - start > MAX_NUMBER) throw LEAVE;
            String lit = new String(b, start, i - start, StandardCharsets.US_ASCII);
            if (!floating) return Node.integral(new BigInteger(lit));
            double d = Double.parseDouble(lit);
            if (Double.isInfinite(d)) throw LEAVE; // out of double's range: Jackson's to judge
            return Node.floating(d);
        }

        private String string() throws Leave {
            i++; // the opening quote
            StringBuilder s = null;
            int run = i;
            while (true) {
                int c = peek();
                if (c == '"') {
                    String tail = new String(b, run, i - run, StandardCharsets.US_ASCII);
                    i++;
                    return s == null ? tail : s.append(tail).toString();
                }
                if (c < 0x20 || c > 0x7e) throw LEAVE; // control bytes and non-ASCII: Jackson's to judge
                if (c != '\\') {
                    i++;
                    continue;
                }
                if (s == null) s = new StringBuilder();
                s.append(new String(b, run, i - run, StandardCharsets.US_ASCII));
                i++;
                int e = peek();
                i++;
                switch (e) {
                    case '"' -> s.append('"');
                    case '\\' -> s.append('\\');
                    case '/' -> s.append('/');
                    case 'b' -> s.append('\b');
                    case 'f' -> s.append('\f');
                    case 'n' -> s.append('\n');
                    case 'r' -> s.append('\r');
                    case 't' -> s.append('\t');
                    case 'u' -> {
                        int v = 0;
                        for (int k = 0; k < 4; k++) {
                            int h = Character.digit(peek(), 16);
                            if (h < 0) throw LEAVE;
                            v = v * 16 + h;
                            i++;
                        }
                        s.append((char) v);
                    }
                    default -> throw LEAVE;
                }
                run = i;
            }
        }
    }
}
