package dev.etcdmigrate.log;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class StampTest {

    private static final DateTimeFormatter ISO_MILLIS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    @Test
    void writesWhatJavaTimesFormatterWrites() {
        for (String edge : new String[] {
            "1970-01-01T00:00:00Z",
            "2026-11-29T19:30:06.000Z",
            "2026-11-29T19:30:06.009Z",
            "2028-02-29T23:59:59.999Z",
            "1999-12-31T23:59:59.999999999Z",
            "0999-01-01T00:00:00.05Z"
        }) {
            Instant instant = Instant.parse(edge);
            assertEquals(ISO_MILLIS.format(instant), Stamp.of(instant), edge);
        }
        SplittableRandom random = new SplittableRandom(1);
        for (int i = 0; i < 10_000; i++) {
            Instant instant =
                    Instant.ofEpochSecond(random.nextLong(0, 253_402_300_800L), random.nextInt(1_000_000_000));
            assertEquals(ISO_MILLIS.format(instant), Stamp.of(instant), instant.toString());
        }
    }

    @Test
    void alwaysTwentyFourCharacters() {
        assertEquals(24, Stamp.of(Instant.EPOCH).length());
        assertEquals(24, Stamp.now().length());
    }
}
