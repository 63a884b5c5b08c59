package dev.etcdmigrate.ondisk;

import dev.etcdmigrate.ondisk.EtcdJson.Node;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * RFC 8259 over ASCII bytes, the whole input one value: returns null for anything else (bytes over 0x7f, a BOM,
 * trailing content, deep nesting, long numbers), which Jackson then reads or refuses.
 */
final class StrictJson {

    /** Below Jackson's StreamReadConstraints (nesting 1000, number length 1000), so Jackson would take it too. */
    private static final int MAX_DEPTH = 500;

    private static final int MAX_NUMBER = 500;

    private final byte[] b;
    private int i;

    private StrictJson(byte[] b) {
        this.b = b;
    }

    static Node parse(byte[] b) {
        StrictJson p = new StrictJson(b);
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
