package dev.etcdmigrate.ondisk;

import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What etcd says when it meets damaged files at start, and which file each saying is about: bbolt's
 * assertions and open errors (go.etcd.io/bbolt: "Page expected to be: N, but self identifies as M",
 * ErrInvalid "invalid database", ErrVersionMismatch, ErrChecksum, "file size too small", "invalid page
 * type", "page N already freed"), etcd's backend ("failed to open database", "cannot open database"),
 * the WAL (wal.ErrCRCMismatch "wal: crc mismatch", walpb's "walpb: crc mismatch", "wal: slice bounds out of
 * range", "wal: max entry size limit exceeded", a WAL read ending in "unexpected EOF"), the snapshots
 * (snap.ErrCRCMismatch "snap: crc mismatch", "snap: empty snapshot", "failed to recover v2 store") and a
 * fault on the mmapped db (SIGBUS: a db shorter than its pages say).
 */
public final class EtcdDamageSigns {

    /** A damage sign: which file it concerns and etcd's line that showed it. */
    public record Sign(String file, String etcdSaid) {}

    private record Rule(Pattern pattern, String file) {}

    private static final List<Rule> RULES = List.of(
            rule("Page expected to be: \\d+, but self identifies as \\d+", "member/snap/db"),
            rule("invalid database|version mismatch|checksum error|file size too small", "member/snap/db"),
            rule("invalid page type|page \\d+ already freed|unexpected fault address|SIGBUS", "member/snap/db"),
            rule("failed to open (backend )?database|cannot open database", "member/snap/db"),
            rule("(wal|walpb): crc mismatch|wal: slice bounds out of range|wal: max entry size limit", "the WAL"),
            rule("(failed to (read|open|load) WAL|wal: ).*unexpected EOF", "the WAL"),
            rule(
                    "snap: crc mismatch|snap: empty snapshot|failed to recover v2 store",
                    "a snapshot (member/snap/*.snap)"));

    private static Rule rule(String regex, String file) {
        return new Rule(Pattern.compile(regex), file);
    }

    private EtcdDamageSigns() {}

    /** The first sign of damage in what etcd said (a fatal line, a failure's reason), if any. */
    public static Optional<Sign> in(String text) {
        if (text == null) return Optional.empty();
        for (Rule r : RULES) {
            var m = r.pattern().matcher(text);
            if (m.find()) return Optional.of(new Sign(r.file(), m.group()));
        }
        return Optional.empty();
    }
}
