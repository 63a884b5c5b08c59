package dev.etcdmigrate.log;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * The diary's time stamps: UTC with milliseconds, always three digits (Instant.toString drops a zero fraction,
 * so one line in a thousand would be a different width and lose its milliseconds).
 */
final class Stamp {

    private static final DateTimeFormatter FORMAT =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

    private Stamp() {}

    static String of(Instant instant) {
        return FORMAT.format(instant);
    }

    static String now() {
        return of(Instant.now());
    }
}
