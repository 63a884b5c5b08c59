package dev.etcdmigrate.version;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EtcdVersionTest {

    @ParameterizedTest
    @ValueSource(strings = {"3.5.21", "0.0.0", "3.10.0", "10.4.9999", "2.2.1"})
    void parsesAndPrintsBack(String text) {
        assertEquals(text, EtcdVersion.parse(text).toString());
    }

    @Test
    void parseYieldsComponents() {
        assertEquals(new EtcdVersion(3, 5, 21), EtcdVersion.parse("3.5.21"));
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                " ",
                "v3.5.1",
                "3.5",
                "3",
                "3.5.1-rc.0",
                "3.5.1+build",
                "3.5.1.2",
                " 3.5.1",
                "3.5.1 ",
                "3.5.1\n",
                "03.5.1",
                "3.05.1",
                "3.5.01",
                "3..1",
                "3.5.",
                "a.b.c",
                "3.5.x",
                "3.5.10000",
                "-3.5.1",
                "３.5.1"
            })
    void rejectsAnythingButPlainSemver(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> EtcdVersion.parse(text));
        assertTrue(e.getMessage().contains("'" + text + "'"), "message names what was found: " + e.getMessage());
    }

    @Test
    void rejectsNull() {
        assertThrows(IllegalArgumentException.class, () -> EtcdVersion.parse(null));
    }

    @Test
    void rejectsNegativeComponents() {
        assertThrows(IllegalArgumentException.class, () -> new EtcdVersion(3, -1, 0));
    }

    @Test
    void ordersNumericallyNotLexically() {
        List<EtcdVersion> versions = new ArrayList<>(List.of(
                EtcdVersion.parse("3.10.0"),
                EtcdVersion.parse("3.5.10"),
                EtcdVersion.parse("3.5.9"),
                EtcdVersion.parse("2.3.8"),
                EtcdVersion.parse("3.5.9")));
        versions.sort(null);
        assertEquals(
                List.of("2.3.8", "3.5.9", "3.5.9", "3.5.10", "3.10.0"),
                versions.stream().map(EtcdVersion::toString).toList());
        assertTrue(EtcdVersion.parse("3.5.9").isOlderThan(EtcdVersion.parse("3.5.10")));
        assertFalse(EtcdVersion.parse("3.5.10").isOlderThan(EtcdVersion.parse("3.5.10")));
        assertFalse(EtcdVersion.parse("4.0.0").isOlderThan(EtcdVersion.parse("3.99.99")));
    }

    @Test
    void lineAndSameLine() {
        EtcdVersion v = EtcdVersion.parse("3.6.16");
        assertEquals(new MinorLine(3, 6), v.line());
        assertTrue(v.sameLine(EtcdVersion.parse("3.6.0")));
        assertFalse(v.sameLine(EtcdVersion.parse("3.5.16")));
        assertFalse(v.sameLine(EtcdVersion.parse("4.6.16")));
    }
}
