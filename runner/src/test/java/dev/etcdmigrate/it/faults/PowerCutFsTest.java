package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The power-cut file system against its model: a table of operations done on the mount, with cut points
 * between them, and for each cut point the exact set of states a power cut may leave. Every state the
 * file system produces (nothing lost, everything not durable lost, 300 seeded choices) must be allowed,
 * and every allowed state must be produced: the model is neither too kind nor too harsh.
 */
class PowerCutFsTest {

    @TempDir
    Path dir;

    /** A script on the mount: ops between marks; the expectations list, per mark, the allowed states. */
    private interface Script {
        void run(Path m, Marks marks) throws Exception;
    }

    private static final class Marks {
        final PowerCutFs fs;
        final List<Integer> cuts = new ArrayList<>();

        Marks(PowerCutFs fs) {
            this.fs = fs;
        }

        void cut() throws Exception {
            cuts.add(fs.mark());
        }
    }

    /** Runs script on a mount over a backing dir seeded with base; returns, per mark, the states produced. */
    private List<Set<Map<String, String>>> explore(Map<String, String> base, Script script) throws Exception {
        Path backing = dir.resolve("backing");
        Path baseCopy = dir.resolve("base");
        Path mount = Files.createDirectories(dir.resolve("mnt"));
        for (Path root : List.of(backing, baseCopy)) {
            Files.createDirectories(root);
            for (var e : base.entrySet()) {
                if (e.getValue().equals("dir")) Files.createDirectories(root.resolve(e.getKey()));
                else Files.writeString(root.resolve(e.getKey()), e.getValue());
                Files.setPosixFilePermissions(
                        root.resolve(e.getKey()),
                        PosixFilePermissions.fromString(e.getValue().equals("dir") ? "rwx------" : "rw-------"));
            }
        }
        Marks marks;
        PowerCut log;
        try (PowerCutFs fs =
                PowerCutFs.mount(backing, baseCopy, mount, dir.resolve("work"), java.util.Optional.empty())) {
            marks = new Marks(fs);
            script.run(mount, marks);
            fs.close();
            log = fs.log();
        }
        List<Set<Map<String, String>>> result = new ArrayList<>();
        for (int cut : marks.cuts) {
            Set<Map<String, String>> states = new HashSet<>();
            List<PowerCut.Policy> policies =
                    new ArrayList<>(List.of(new PowerCut.Policy.DurableOnly(), new PowerCut.Policy.Everything()));
            for (long seed = 0; seed < 300; seed++) policies.add(new PowerCut.Policy.Seeded(seed));
            for (PowerCut.Policy policy : policies) {
                Path state = dir.resolve("state");
                PowerCut.clear(state);
                log.materialize(cut, policy, state);
                states.add(tree(state));
            }
            result.add(states);
        }
        return result;
    }

    private static Map<String, String> tree(Path root) throws Exception {
        Map<String, String> t = new TreeMap<>();
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.toList()) {
                if (p.equals(root)) continue;
                String v = Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)
                        ? "dir"
                        : new String(Files.readAllBytes(p), StandardCharsets.ISO_8859_1).replace("\0", "0");
                String mode =
                        PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
                t.put(
                        root.relativize(p).toString(),
                        mode.equals("rwx------") || mode.equals("rw-------") ? v : v + " " + mode);
            }
        }
        return t;
    }

    @SafeVarargs
    private static Set<Map<String, String>> states(Map<String, String>... states) {
        return Set.of(states);
    }

    private static Map<String, String> state(String... pairs) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) m.put(pairs[i], pairs[i + 1]);
        return new TreeMap<>(m);
    }

    private static void fsync(Path p) throws Exception {
        try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    private static void write(Path p, String text, StandardOpenOption... more) throws Exception {
        List<StandardOpenOption> opts = new ArrayList<>(List.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE));
        opts.addAll(List.of(more));
        try (FileChannel ch = FileChannel.open(
                p,
                Set.copyOf(opts),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            ch.write(java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
        }
    }

    /** The recipe of AtomicFile: old or new, never neither, never torn; only new once the directory is synced. */
    @Test
    void replaceByRenameIsOldOrNewAndNewOnlyAfterTheDirectorySync() throws Exception {
        var got = explore(Map.of("v", "old"), (m, marks) -> {
            Files.setPosixFilePermissions(m.resolve("v"), PosixFilePermissions.fromString("rw-------"));
            fsync(m.resolve("v"));
            fsync(m);
            marks.cut(); // 0: nothing but the base
            write(m.resolve("v.tmp"), "new");
            marks.cut(); // 1: temp written, not synced
            fsync(m.resolve("v.tmp"));
            marks.cut(); // 2: temp synced, its name not
            Files.move(
                    m.resolve("v.tmp"),
                    m.resolve("v"),
                    StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            marks.cut(); // 3: renamed, directory not synced
            fsync(m);
            marks.cut(); // 4: durable
        });
        var old = state("v", "old");
        assertEquals(states(old), got.get(0));
        assertEquals(states(old, state("v", "old", "v.tmp", ""), state("v", "old", "v.tmp", "new")), got.get(1));
        assertEquals(states(old, state("v", "old", "v.tmp", "new")), got.get(2));
        assertEquals(states(old, state("v", "old", "v.tmp", "new"), state("v", "new")), got.get(3));
        assertEquals(states(state("v", "new")), got.get(4));
    }

    /** A rename of a file whose data was never synced may surface with the data lost: the zero-length-file bug. */
    @Test
    void renameWithoutFileSyncMayKeepTheNameAndLoseTheData() throws Exception {
        var got = explore(Map.of("v", "old"), (m, marks) -> {
            write(m.resolve("v.tmp"), "new");
            Files.move(
                    m.resolve("v.tmp"),
                    m.resolve("v"),
                    StandardCopyOption.ATOMIC_MOVE,
                    StandardCopyOption.REPLACE_EXISTING);
            fsync(m);
            marks.cut();
        });
        assertEquals(states(state("v", ""), state("v", "new")), got.get(0));
    }

    /** Unsynced appends survive as a prefix; each file independently of the others; a later fsync pins them. */
    @Test
    void unsyncedDataIsAPrefixPerFileIndependently() throws Exception {
        var got = explore(Map.of("f", "", "g", ""), (m, marks) -> {
            write(m.resolve("f"), "ab", StandardOpenOption.APPEND);
            write(m.resolve("f"), "cd", StandardOpenOption.APPEND);
            write(m.resolve("g"), "x", StandardOpenOption.APPEND);
            marks.cut();
            fsync(m.resolve("f"));
            marks.cut();
        });
        Set<Map<String, String>> expected = new HashSet<>();
        for (String f : List.of("", "ab", "abcd")) {
            for (String g : List.of("", "x")) expected.add(state("f", f, "g", g));
        }
        assertEquals(expected, got.get(0));
        assertEquals(states(state("f", "abcd", "g", ""), state("f", "abcd", "g", "x")), got.get(1));
    }

    /** A synced file in a new directory is lost with the directory until the parent is synced too. */
    @Test
    void aNewDirectoryNeedsItsParentSynced() throws Exception {
        var got = explore(Map.of(), (m, marks) -> {
            Files.createDirectory(
                    m.resolve("d"), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            write(m.resolve("d/f"), "x");
            fsync(m.resolve("d/f"));
            fsync(m.resolve("d"));
            marks.cut();
            fsync(m);
            marks.cut();
        });
        assertEquals(states(state(), state("d", "dir", "d/f", "x")), got.get(0));
        assertEquals(states(state("d", "dir", "d/f", "x")), got.get(1));
    }

    /** Deletes are directory operations: an unsynced one may be undone; directory operations come back as a prefix. */
    @Test
    void deletesAndCreatesSurviveAsAPrefix() throws Exception {
        var got = explore(Map.of("a", "1", "b", "2"), (m, marks) -> {
            Files.delete(m.resolve("a"));
            Files.delete(m.resolve("b"));
            marks.cut();
            fsync(m);
            marks.cut();
        });
        assertEquals(states(state("a", "1", "b", "2"), state("b", "2"), state()), got.get(0));
        assertEquals(states(state()), got.get(1));
    }

    /** truncate and fallocate are data operations of their file; a mode change is metadata of its inode. */
    @Test
    void truncateFallocateAndChmod() throws Exception {
        var got = explore(Map.of("f", "hello"), (m, marks) -> {
            Files.setPosixFilePermissions(m.resolve("f"), PosixFilePermissions.fromString("rw-------"));
            fsync(m.resolve("f"));
            try (FileChannel ch = FileChannel.open(m.resolve("f"), StandardOpenOption.WRITE)) {
                ch.truncate(2);
                ch.force(false);
            }
            marks.cut();
            try (java.io.RandomAccessFile f =
                    new java.io.RandomAccessFile(m.resolve("f").toFile(), "rw")) {
                f.setLength(4); // ftruncate up: a sparse tail
            }
            Files.setPosixFilePermissions(m.resolve("f"), PosixFilePermissions.fromString("r--------"));
            marks.cut();
        });
        assertEquals(states(state("f", "he")), got.get(0));
        assertEquals(states(state("f", "he"), state("f", "he00"), state("f", "he00 r--------")), got.get(1));
    }
}
