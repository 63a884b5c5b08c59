package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The strict parser answers every reading as Jackson's tree does, and what is damage stays Jackson's answer: each
 * input is read both ways and compared (parses or not; path, size, elements, asText, asBoolean, asLong).
 */
class EtcdJsonTest {

    private static final ObjectMapper JACKSON = new ObjectMapper();

    private static final List<String> INPUTS = List.of(
            // what etcd writes
            "{\"id\":12345678901234567890,\"peerURLs\":[\"http://127.0.0.1:2380\"],\"name\":\"m1\",\"isLearner\":false}",
            "{\"id\":3319814642761637952,\"peerURLs\":[\"http://a:2380\",\"https://b:2380\"],\"name\":\"\"}",
            "{\"peerURLs\":[\"http://127.0.0.1:2380\"],\"isLearner\":true}",
            "{\"name\":\"m1\",\"clientURLs\":[\"http://127.0.0.1:2379\"]}",
            "{\"voters\":[3319814642761637952,18446744073709551615,1],\"auto_leave\":false}",
            "{\"voters\":[1],\"voters_outgoing\":[2,3]}",
            "{\"enabled\":true,\"target-version\":\"3.5.0\"}",
            "{\"enabled\":false}",
            // shapes a reader may meet
            " \t\n{ \"name\" : \"a\\\"b\\\\c\\/d\\n\\u0041\\u00e9\\ud83d\\ude00\" }\r\n",
            "{\"name\":\"x\",\"name\":\"y\"}",
            "{\"peerURLs\":{\"a\":\"u1\",\"b\":\"u2\"}}",
            "{\"peerURLs\":\"http://x\"}",
            "{\"peerURLs\":[1,2.5,-0,-0.0,1e3,1E-2,true,null,{},[]]}",
            "{\"enabled\":\"true\"}",
            "{\"enabled\":\" false \"}",
            "{\"enabled\":\"yes\"}",
            "{\"enabled\":1}",
            "{\"enabled\":0}",
            "{\"enabled\":2.5}",
            "{\"enabled\":0.0}",
            "{\"enabled\":null}",
            "{\"enabled\":99999999999999999999}",
            "{\"voters\":[\"12\",\" 7 \",\"x\",\"1.5\",true,false,null,1.9,-1,-9223372036854775809,[1],{}]}",
            "{\"name\":null}",
            "{\"name\":1}",
            "{\"name\":{}}",
            "{\"name\":[\"a\"]}",
            "{\"name\":true}",
            "{\"name\":1.0e2}",
            "{\"name\":123456789012345678901234567890}",
            "{}",
            "[]",
            "[1,2]",
            "\"text\"",
            "42",
            "true",
            "null",
            "{\"a\":{\"b\":[{\"c\":[[[]]]}]}}",
            // not taken whole by the strict parser: Jackson's answer (parses or damage)
            "",
            "   ",
            "{",
            "}",
            "{\"a\":1,}",
            "[1,]",
            "{\"a\" 1}",
            "{a:1}",
            "{'a':1}",
            "{\"a\":01}",
            "{\"a\":+1}",
            "{\"a\":1.}",
            "{\"a\":.5}",
            "{\"a\":1e}",
            "{\"a\":NaN}",
            "{\"a\":Infinity}",
            "{\"a\":1e400}",
            "{\"a\":tru}",
            "{\"a\":truex}",
            "{\"a\":nul}",
            "{\"a\":\"\\x\"}",
            "{\"a\":\"\\u12\"}",
            "{\"a\":\"tab\there\"}",
            "{\"a\":1} trailing",
            "{\"a\":1}}",
            "{\"a\":1}{\"b\":2}",
            "[1] [2]",
            "1 2",
            "1x",
            "truex",
            "\"a\"b",
            "\ufeff{\"name\":\"bom\"}",
            "{\"name\":\"caf\u00e9\"}",
            "{\"a\":1/*c*/}",
            "{\"a\":[1 2]}",
            "-",
            "-a",
            "[" + "[".repeat(600) + "]".repeat(600) + "]",
            "[" + "[".repeat(1100) + "]".repeat(1100) + "]",
            "{\"a\":" + "9".repeat(600) + "}",
            "{\"a\":" + "9".repeat(1100) + "}");

    @Test
    void everyInputReadsAsJacksonReadsIt() throws IOException {
        for (String input : INPUTS) {
            byte[] bytes = input.getBytes(StandardCharsets.UTF_8);
            JsonNode expected;
            try {
                expected = JACKSON.readTree(bytes);
            } catch (IOException e) {
                expected = null;
            }
            EtcdJson.Node actual;
            try {
                actual = EtcdJson.parse(Path.of("f"), "w", bytes);
            } catch (DamagedFileException e) {
                actual = null;
            }
            String shown = input.length() > 60 ? input.substring(0, 60) + "..." : input;
            if (expected == null) {
                assertNull(actual, "Jackson refuses " + shown);
                continue;
            }
            assertNotNull(actual, "Jackson reads " + shown);
            assertEquals(readings(expected), readings(actual), shown);
        }
    }

    @Test
    void whatEtcdWritesIsTakenWithoutJackson() {
        for (String input : INPUTS.subList(0, 8))
            assertNotNull(StrictJson.parse(input.getBytes(StandardCharsets.UTF_8)), input);
    }

    @Test
    void whatTheStrictParserDoesNotTakeWholeIsLeftToJackson() {
        for (String input : List.of("", "{\"a\":1} x", "{\"name\":\"caf\u00e9\"}", "\ufeff{}", "{\"a\":01}"))
            assertNull(StrictJson.parse(input.getBytes(StandardCharsets.UTF_8)), input);
    }

    private static final List<String> FIELDS =
            List.of("id", "name", "peerURLs", "isLearner", "voters", "voters_outgoing", "enabled", "a", "nope");

    /** Every reading the readers make, of the root, its fields and their elements, two levels deep. */
    private static List<String> readings(JsonNode n) {
        List<String> out = new ArrayList<>();
        read(n, "$", out, 0);
        return out;
    }

    private static void read(JsonNode n, String at, List<String> out, int depth) {
        out.add(at + " size=" + n.size() + " text=" + n.asText() + " text(d)=" + n.asText("d") + " bool(f)="
                + n.asBoolean(false) + " bool(t)=" + n.asBoolean(true) + " long=" + n.asLong());
        if (depth == 2) return;
        for (String f : FIELDS) {
            JsonNode v = n.path(f);
            if (!v.isMissingNode()) read(v, at + "." + f, out, depth + 1);
        }
        int k = 0;
        for (JsonNode e : n) read(e, at + "[" + k++ + "]", out, depth + 1);
        read(n.path("missing"), at + ".missing", out, 2);
    }

    private static List<String> readings(EtcdJson.Node n) {
        List<String> out = new ArrayList<>();
        read(n, "$", out, 0);
        return out;
    }

    private static void read(EtcdJson.Node n, String at, List<String> out, int depth) {
        out.add(at + " size=" + n.size() + " text=" + n.asText() + " text(d)=" + n.asText("d") + " bool(f)="
                + n.asBoolean(false) + " bool(t)=" + n.asBoolean(true) + " long=" + n.asLong());
        if (depth == 2) return;
        for (String f : FIELDS) {
            EtcdJson.Node v = n.path(f);
            if (v != EtcdJson.Node.MISSING) read(v, at + "." + f, out, depth + 1);
        }
        int k = 0;
        for (EtcdJson.Node e : n) read(e, at + "[" + k++ + "]", out, depth + 1);
        read(n.path("missing"), at + ".missing", out, 2);
    }
}
