package dev.etcdmigrate.datadir;

import dev.etcdmigrate.version.DataVersion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Which backups in a location are this data dir's, and what a new one is called ({@link Backups} makes, moves
 * and deletes them): names {@code <UTC stamp>-<member name>-<data dir hash>-<version>-<storage>}
 * ({@link BackupName}); in a shared location only names carrying this data dir's identity are its own. Reads only.
 */
final class BackupNames {

    static final String PARTIAL = ".partial";

    private final DataDir dataDir;
    private final Path location;
    private final String memberName;
    private String identity; // hashed on first use: SHA-256 starts Java's whole security framework (JCA), which a
    // no-op start, whose backups dir lives in the data dir, never needs
    private final Clock clock;

    BackupNames(DataDir dataDir, Path location, String memberName, Clock clock) {
        this.dataDir = dataDir;
        this.location = location;
        this.memberName = memberName;
        this.clock = clock;
    }

    /** True when backups leave the data dir after the swap's rename. */
    boolean relocates() {
        return !location.equals(dataDir.backupsDir());
    }

    /** {@code <member name>-<data dir hash>}: what makes this data dir's backup names its own. */
    synchronized String identity() {
        if (identity == null) identity = safeName(memberName) + "-" + pathHash(dataDir.path());
        return identity;
    }

    /**
     * This data dir's complete backups, oldest first: what retention counts and a restore can use. Only
     * complete ones: a backup dir a crashed swap left before member/ was moved into it (debris that
     * recover() deletes) is none, and another data dir's backups in a shared location are not this one's.
     */
    public List<Path> complete() throws IOException {
        return sortedOldestFirst(list(location).stream()
                .filter(p -> mine(p.getFileName().toString()) && Files.isDirectory(p.resolve("member")))
                .toList());
    }

    /**
     * This data dir's newest complete backup (member/ inside), if any: the way back the runner names when
     * the data is damaged. Reads only.
     */
    public Optional<Path> newest() throws IOException {
        List<Path> mine = list(location).stream()
                .filter(p -> mine(p.getFileName().toString()) && Files.isDirectory(p.resolve("member")))
                .toList();
        List<Path> sorted = sortedOldestFirst(mine);
        return sorted.isEmpty() ? Optional.empty() : Optional.of(sorted.getLast());
    }

    /**
     * Whether a complete backup name (no .partial) is this data dir's: in the data dir's own backups dir
     * every stamped entry is (names without the identity predate it); elsewhere only names carrying it.
     */
    boolean mine(String name) {
        if (name.endsWith(PARTIAL)) return false;
        return BackupName.parse(name)
                .filter(n -> !relocates() || n.carries(identity()))
                .isPresent();
    }

    /**
     * {@code <stamp>-<identity>-<version>-<storage>}, with {@code .N} when this data dir already has a backup
     * from the same second (of any version; a downgrade chain takes several): the counter orders them.
     */
    String newName(DataVersion version) throws IOException {
        BackupName name = BackupName.of(clock.instant(), identity(), version);
        int counter = -1;
        for (Path dir : List.of(dataDir.backupsDir(), location)) {
            for (Path entry : list(dir)) {
                String entryName = entry.getFileName().toString();
                if (entryName.endsWith(PARTIAL))
                    entryName = entryName.substring(0, entryName.length() - PARTIAL.length());
                Optional<BackupName> other = BackupName.parse(entryName);
                if (other.isPresent()
                        && other.get().stamp().equals(name.stamp())
                        && (other.get().carries(identity()) || !relocates() && dir.equals(dataDir.backupsDir()))) {
                    counter = Math.max(counter, other.get().counter());
                }
            }
        }
        name = counter < 0 ? name : name.withCounter(counter + 1);
        while (taken(name.toString()))
            name = name.withCounter(name.counter() + 1); // a name another writer took meanwhile
        return name.toString();
    }

    private boolean taken(String name) {
        for (Path dir : List.of(dataDir.backupsDir(), location)) {
            if (Files.exists(dir.resolve(name)) || Files.exists(dir.resolve(name + PARTIAL))) return true;
        }
        return false;
    }

    /** A name from before backups carried the identity gets it on its way to a shared location. */
    String relocatedName(String name) {
        return BackupName.parse(name)
                .map(n -> n.withIdentity(identity()).toString())
                .orElse(name);
    }

    /** By stamp, then by the counter of backups taken within one second (every path is a backup name). */
    static List<Path> sortedOldestFirst(List<Path> backups) {
        return backups.stream()
                .sorted(Comparator.comparing((Path p) -> BackupName.of(p).orElseThrow(), BackupName.OLDEST_FIRST))
                .toList();
    }

    static List<Path> list(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) return List.of();
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.toList();
        }
    }

    /** Member names become file names: anything but letters, digits, '.', '_' and '-' becomes '_'. */
    static String safeName(String memberName) {
        String safe = memberName.replaceAll("[^A-Za-z0-9._-]", "_");
        return safe.isEmpty() ? "member" : safe;
    }

    static String pathHash(Path dataDir) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(dataDir.toString().getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 4);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }
}
