package dev.etcdmigrate.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NearestTest {

    private static final List<String> NAMES =
            MigrateFlags.FLAGS.stream().map(Flag::name).toList();

    @Test
    void aSwapOfTwoLettersFindsTheFlag() {
        assertEquals(Optional.of("target-version"), Nearest.to("target-verison", NAMES));
        assertEquals(Optional.of("data-dir"), Nearest.to("data-dri", NAMES));
        assertEquals(Optional.of("bin-dir"), Nearest.to("bindir", NAMES));
        assertEquals(Optional.of("no-exec"), Nearest.to("noexec", NAMES));
    }

    @Test
    void somethingFarOffSuggestsNothing() {
        assertEquals(Optional.empty(), Nearest.to("frobnicate", NAMES));
        assertEquals(Optional.empty(), Nearest.to("x", NAMES));
    }

    @Test
    void distanceCountsASwapAsOneEdit() {
        assertEquals(1, Nearest.distance("verison", "version"));
        assertEquals(2, Nearest.distance("abc", "a"));
        assertEquals(0, Nearest.distance("same", "same"));
    }
}
