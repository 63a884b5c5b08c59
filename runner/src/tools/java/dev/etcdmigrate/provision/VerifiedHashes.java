package dev.etcdmigrate.provision;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The SHA-256 of each installed binary as its last full hash found it, with the file's identity at that
 * moment: device, inode, size, mtime and ctime (the kernel sets ctime on every write, rename, chmod and
 * link, and nothing but the clock can set it back). A rerun takes the recorded hash of a binary whose
 * identity is unchanged instead of reading its tens of MiB again; any change to the file, also one that
 * puts the mtime back ({@code cp -p}, {@code rsync -t}), moves its ctime, and the binary is hashed in
 * full. The record only spares a hash that would match: a recorded hash that differs from the pin is
 * never believed, the binary is hashed again.
 *
 * <p>A hash is recorded only when the file's ctime lies at least {@link #SETTLED} before the hash
 * began. File times come from a clock that ticks in milliseconds (or seconds on some file systems), so a
 * write in the same tick as the hash would leave ctime as it was; a file whose ctime is that old gets a
 * later ctime from any later write. A freshly installed binary is therefore hashed once more by the
 * next run, which records it.
 */
final class VerifiedHashes {

    static final Duration SETTLED = Duration.ofSeconds(2);
    private static final String ATTRIBUTES = "unix:dev,ino,size,lastModifiedTime,ctime";
    private static final String HEADER =
            "# the SHA-256 of each binary at its last full hash, and the file's dev ino size mtime-ns ctime-ns then\n";

    private final Path file;
    private final Clock clock;
    private final Map<String, Entry> entries;
    private boolean changed;
    private int recalled;

    /** One binary: its hash and the identity of the file that had it. */
    record Entry(String sha256, Identity identity) {}

    /** What changes when a file's bytes, name or metadata change. */
    record Identity(long dev, long ino, long size, long mtimeNanos, long ctimeNanos) {

        static Identity of(Path path) throws IOException {
            Map<String, Object> a = Files.readAttributes(path, ATTRIBUTES);
            return new Identity(
                    ((Number) a.get("dev")).longValue(),
                    ((Number) a.get("ino")).longValue(),
                    ((Number) a.get("size")).longValue(),
                    nanos((FileTime) a.get("lastModifiedTime")),
                    nanos((FileTime) a.get("ctime")));
        }

        private static long nanos(FileTime t) {
            Instant i = t.toInstant();
            return TimeUnit.SECONDS.toNanos(i.getEpochSecond()) + i.getNano();
        }

        String text() {
            return dev + " " + ino + " " + size + " " + mtimeNanos + " " + ctimeNanos;
        }
    }

    private VerifiedHashes(Path file, Clock clock, Map<String, Entry> entries) {
        this.file = file;
        this.clock = clock;
        this.entries = entries;
    }

    /** The records in file; none when it is missing or unreadable, and a malformed line is dropped. */
    static VerifiedHashes read(Path file, Clock clock) {
        Map<String, Entry> entries = new TreeMap<>();
        if (Files.isRegularFile(file)) {
            try {
                for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                    parse(line).ifPresent(e -> entries.put(line.substring(0, line.indexOf(' ')), e));
                }
            } catch (IOException | RuntimeException e) {
                entries.clear(); // every binary is hashed in full, and the file written again
            }
        }
        return new VerifiedHashes(file, clock, entries);
    }

    private static Optional<Entry> parse(String line) {
        String[] f = line.strip().split(" ");
        if (line.startsWith("#") || f.length != 7 || !f[1].matches("[0-9a-f]{64}")) {
            return Optional.empty();
        }
        try {
            return Optional.of(new Entry(
                    f[1],
                    new Identity(
                            Long.parseLong(f[2]),
                            Long.parseLong(f[3]),
                            Long.parseLong(f[4]),
                            Long.parseLong(f[5]),
                            Long.parseLong(f[6]))));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /**
     * The SHA-256 of binary, as lower-case hex: the recorded one when the file is the one recorded and its
     * hash is {@code pinned}, else a full hash (recorded when the file is settled and did not change
     * while it was read).
     */
    String sha256(String name, Path binary, Optional<String> pinned) throws IOException {
        Instant start = clock.instant();
        Identity before = Identity.of(binary);
        Entry known = entries.get(name);
        if (known != null && known.identity().equals(before) && pinned.equals(Optional.of(known.sha256()))) {
            recalled++;
            return known.sha256();
        }
        String sha = GoHash.sha256(binary);
        Identity after = Identity.of(binary);
        boolean settled = !Instant.EPOCH.plusNanos(after.ctimeNanos()).isAfter(start.minus(SETTLED));
        if (after.equals(before) && settled) {
            changed |= !new Entry(sha, after).equals(entries.put(name, new Entry(sha, after)));
        } else {
            changed |= entries.remove(name) != null;
        }
        return sha;
    }

    /** How many hashes were taken from the record rather than read. */
    int recalled() {
        return recalled;
    }

    /** Writes the records when they changed, owner-only, replacing the file in one rename. */
    void save() throws IOException {
        if (!changed) {
            return;
        }
        StringBuilder text = new StringBuilder(HEADER);
        entries.forEach((name, e) -> text.append(name)
                .append(' ')
                .append(e.sha256())
                .append(' ')
                .append(e.identity().text())
                .append('\n'));
        Files.createDirectories(file.getParent());
        Path partial = file.resolveSibling(file.getFileName() + ".partial");
        Files.writeString(partial, text, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(partial, PosixFilePermissions.fromString("rw-------"));
        Files.move(partial, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        changed = false;
    }

    /** Removes the records of a release whose binaries are being replaced. */
    static void forget(Path file) throws IOException {
        Files.deleteIfExists(file);
    }
}
