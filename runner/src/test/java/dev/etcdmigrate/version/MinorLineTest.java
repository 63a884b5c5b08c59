package dev.etcdmigrate.version;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MinorLineTest {

    @Test
    void parses() {
        assertEquals(new MinorLine(3, 5), MinorLine.parse("3.5"));
        assertEquals("3.10", MinorLine.parse("3.10").toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "3", "3.5.1", "v3.5", "3.5.x", " 3.5", "3.5 ", "03.5", "3.05", "3.", ".5", "3.5\n"})
    void rejectsAnythingButMajorDotMinor(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MinorLine.parse(text));
        assertTrue(e.getMessage().contains("'" + text + "'"), e.getMessage());
    }

    @Test
    void rejectsNull() {
        assertThrows(IllegalArgumentException.class, () -> MinorLine.parse(null));
    }

    @Test
    void ordersNumerically() {
        assertTrue(MinorLine.parse("3.5").isOlderThan(MinorLine.parse("3.10")));
        assertTrue(MinorLine.parse("2.9").isOlderThan(MinorLine.parse("3.0")));
        assertFalse(MinorLine.parse("3.6").isOlderThan(MinorLine.parse("3.6")));
        assertFalse(MinorLine.parse("3.7").isOlderThan(MinorLine.parse("3.6")));
    }
}
