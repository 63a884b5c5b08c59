package dev.etcdmigrate.ondisk;

import java.nio.file.Path;

/**
 * A file etcd wrote that does not hold what its format says it must: which file, where in it (a byte
 * offset, a bbolt page, a WAL frame) and what was expected there. The readers of this package report
 * damage as this finding ({@link DamagedFileException}); the runner explains it and names the way back.
 */
public record Damage(Path file, String where, String expected) {

    /** "member/snap/db page 7: expected ..." with the file as given (callers relativise it to the data dir). */
    public String describe() {
        return file + " (" + where + "): " + expected;
    }

    /** The same finding with the file named relative to {@code dir} when it lies inside it. */
    public Damage relativeTo(Path dir) {
        Path abs = file.toAbsolutePath().normalize();
        Path base = dir.toAbsolutePath().normalize();
        return abs.startsWith(base) ? new Damage(base.relativize(abs), where, expected) : this;
    }
}
