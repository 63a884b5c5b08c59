package dev.etcdmigrate.log;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

/**
 * The diary's time stamps: UTC with milliseconds, always three digits (Instant.toString drops a zero fraction,
 * so one line in a thousand would be a different width and lose its milliseconds). Written digit by digit:
 * a DateTimeFormatter's first use builds the whole java.time.format machinery, a few milliseconds of every
 * start before its first line.
 */
final class Stamp {

    private Stamp() {}

    static String of(Instant instant) {
        LocalDateTime t = LocalDateTime.ofEpochSecond(instant.getEpochSecond(), instant.getNano(), ZoneOffset.UTC);
        StringBuilder b = new StringBuilder(24);
        pad(b, t.getYear(), 4).append('-');
        pad(b, t.getMonthValue(), 2).append('-');
        pad(b, t.getDayOfMonth(), 2).append('T');
        pad(b, t.getHour(), 2).append(':');
        pad(b, t.getMinute(), 2).append(':');
        pad(b, t.getSecond(), 2).append('.');
        return pad(b, t.getNano() / 1_000_000, 3).append('Z').toString();
    }

    static String now() {
        return of(Instant.now());
    }

    private static StringBuilder pad(StringBuilder b, int value, int width) {
        String digits = Integer.toString(value);
        for (int i = digits.length(); i < width; i++) b.append('0');
        return b.append(digits);
    }
}
