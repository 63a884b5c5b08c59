package dev.etcdmigrate.datadir;

import dev.etcdmigrate.version.DataVersion;
import java.nio.file.Path;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Comparator;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A backup's directory name: {@code <UTC stamp>-<rest>[.<counter>]}, where the rest is
 * {@code <member name>-<data dir hash>-<version>-<storage>} (names from before the identity was added
 * lack the first two). The stamp comes first so names sort by age; the counter tells apart two backups
 * taken within one second.
 */
record BackupName(String stamp, String rest, int counter) {

    private static final DateTimeFormatter STAMP =
            DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'").withZone(ZoneOffset.UTC);
    private static final Pattern NAME = Pattern.compile("(\\d{8}T\\d{6}Z)-(.+?)(?:\\.(\\d+))?");

    /** Oldest first: by stamp, then by counter. */
    static final Comparator<BackupName> OLDEST_FIRST =
            Comparator.comparing(BackupName::stamp).thenComparingInt(BackupName::counter);

    static Optional<BackupName> parse(String name) {
        Matcher m = NAME.matcher(name);
        if (!m.matches()) return Optional.empty();
        return Optional.of(
                new BackupName(m.group(1), m.group(2), m.group(3) == null ? 0 : Integer.parseInt(m.group(3))));
    }

    static Optional<BackupName> of(Path backup) {
        return parse(backup.getFileName().toString());
    }

    /** A new backup of data at {@code version}, taken now by the data dir with {@code identity}. */
    static BackupName of(Instant now, String identity, DataVersion version) {
        return new BackupName(STAMP.format(now), identity + "-" + version.version() + "-" + version.storage(), 0);
    }

    BackupName withCounter(int counter) {
        return new BackupName(stamp, rest, counter);
    }

    /** Whether the name says which data dir it came from, and that it is this one. */
    boolean carries(String identity) {
        return rest.startsWith(identity + "-");
    }

    /** The same backup named with the identity (for one from before names carried it). */
    BackupName withIdentity(String identity) {
        return carries(identity) ? this : new BackupName(stamp, identity + "-" + rest, counter);
    }

    @Override
    public String toString() {
        return stamp + "-" + rest + (counter == 0 ? "" : "." + counter);
    }
}
