package dev.etcdmigrate.v2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class V2KeyRulesTest {

    private static List<String> problems(String... keysInByteOrder) {
        V2KeyRules rules = new V2KeyRules();
        List<String> out = new ArrayList<>();
        for (String k : keysInByteOrder) {
            Optional<String> p = rules.check(k.getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
            out.add(p.map(s -> k + ": " + s).orElse(k + ": ok"));
        }
        return out;
    }

    @Test
    void aKeyThatIsAlsoADirectoryIsFoundEvenWithSiblingsInBetween() {
        // byte order puts /a-x and /a.y between /a and /a/b
        List<String> p = problems("/a", "/a-x", "/a.y", "/a/b", "/b");
        assertEquals("/a: ok", p.get(0));
        assertEquals("/a-x: ok", p.get(1));
        assertEquals("/a.y: ok", p.get(2));
        assertTrue(p.get(3).contains("under /a, which is a key itself"), p.get(3));
        assertEquals("/b: ok", p.get(4));
    }

    @Test
    void nestedConflictsAndPlainPrefixesAreTold() {
        List<String> p = problems("/r/p", "/r/pod", "/r/pod/x", "/r/q");
        assertEquals("/r/p: ok", p.get(0), "a name prefix is not a directory");
        assertEquals("/r/pod: ok", p.get(1));
        assertTrue(p.get(2).contains("under /r/pod"), p.get(2));
        assertEquals("/r/q: ok", p.get(3));
    }

    @Test
    void pathsV2WouldCleanOrNotAcceptAreRefused() {
        for (String bad : List.of("no-slash", "/", "/a/", "/a//b", "/a/./b", "/a/../b", "/a/.", "/a/..")) {
            assertTrue(
                    problems(bad).getFirst().contains(bad.startsWith("/") ? "clean the path" : "does not start with /"),
                    bad);
        }
        assertEquals("/_hidden/x: ok", problems("/_hidden/x").getFirst());
        assertEquals("/ünï/ключ: ok", problems("/ünï/ключ").getFirst());
    }

    @Test
    void nonUtf8KeysAndValuesAreRefused() {
        V2KeyRules rules = new V2KeyRules();
        byte[] protobuf = {'k', '8', 's', 0, (byte) 0xff, 0x12};
        assertTrue(rules.check("/ok".getBytes(StandardCharsets.UTF_8), protobuf)
                .orElseThrow()
                .contains("not UTF-8"));
        assertTrue(rules.check(new byte[] {'/', (byte) 0xc3}, new byte[0])
                .orElseThrow()
                .contains("key is not UTF-8"));
        assertTrue(
                rules.check("/empty".getBytes(StandardCharsets.UTF_8), new byte[0])
                        .isEmpty(),
                "an empty value is fine");
    }
}
