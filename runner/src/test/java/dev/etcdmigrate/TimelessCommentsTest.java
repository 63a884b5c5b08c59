package dev.etcdmigrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Comments, docs and scripts say why, not where a change came from: a reference to the project's own issue
 * tracker ("issue N", "issues N and M", "#N") means nothing to a reader of the tree, so the reason it stood for is
 * written out instead. A citation of an upstream project's issue ("etcd issue N", "etcd #N", "etcd-io/etcd#N")
 * states where a fact about that project is recorded and is kept.
 */
class TimelessCommentsTest {

    private static final Path REPO = Path.of("").toAbsolutePath().getParent();

    /** Source, doc, build and script files; a file without one of these names is scanned when it has a shebang. */
    private static final Set<String> EXTENSIONS = Set.of("java", "sh", "md", "xml", "yaml", "yml", "c", "py");

    /** The Maven wrapper is Apache's script, copied as it is: not ours to word. */
    private static final Set<String> FOREIGN = Set.of("mvnw");

    /**
     * "issue N", "issues N", "issue's N", "issue point N", "Issue #N"; and "#N" on its own. {@code #0} is left out:
     * no tracker numbers an issue zero, while an assembler writes its immediates so ({@code mov x29, #0}).
     */
    private static final Pattern REFERENCE =
            Pattern.compile("(?i)\\bissues?(?:'s)?\\s+(?:points?\\s+)?#?\\d+|(?<![&\\w])#[1-9]\\d*\\b");

    /** What may stand right before a citation of an upstream project's tracker: its name, or its owner/repo. */
    private static final Pattern UPSTREAM = Pattern.compile(
            "(?i)(?:^|[^\\w-])(?:[\\w.-]+/)?(?:etcd|kubernetes|kubeadm|kubelet|bbolt|raft|go|golang|grpc|containerd"
                    + "|jib|maven|junit|openjdk|jdk)(?:'s)?\\s*(?:issues?\\s*)?$");

    /** The references in one line of text that are not upstream citations. */
    static List<String> ownReferences(String line) {
        List<String> found = new ArrayList<>();
        Matcher m = REFERENCE.matcher(line);
        while (m.find()) {
            String before = line.substring(0, m.start());
            if (!UPSTREAM.matcher(before).find()) {
                found.add(m.group());
            }
        }
        return found;
    }

    @Test
    void noCommentDocOrScriptNamesOneOfOurIssues() throws IOException {
        long started = System.nanoTime();
        List<String> hits = new ArrayList<>();
        int scanned = 0;
        for (Path file : scannedFiles()) {
            scanned++;
            String relative = REPO.relativize(file).toString();
            List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
            for (int i = 0; i < lines.size(); i++) {
                for (String reference : ownReferences(lines.get(i))) {
                    hits.add(relative + ":" + (i + 1) + ": " + reference);
                }
            }
        }
        long millis = (System.nanoTime() - started) / 1_000_000;
        assertTrue(scanned > 100, "files scanned: " + scanned + " under " + REPO);
        assertTrue(
                hits.isEmpty(),
                hits.size() + " references to our issues in " + scanned + " files (" + millis + " ms); say the"
                        + " reason each stood for instead:\n" + String.join("\n", hits));
    }

    @Test
    void ourReferencesAreFoundAndUpstreamCitationsKept() {
        // built by concatenation, so that this file passes its own scan
        String n = "4" + "2";
        assertEquals(List.of("issue " + n), ownReferences("the finding of issue " + n + ", point 3"));
        assertEquals(List.of("Issues " + n), ownReferences("Issues " + n + " and 7 found it"));
        assertEquals(List.of("issue point " + n), ownReferences("`skipGate` (issue point " + n + ")"));
        assertEquals(List.of("#" + n), ownReferences("fixed in (#" + n + ")"));
        assertEquals(List.of("#" + n), ownReferences("see #" + n));

        assertEquals(List.of(), ownReferences("the newer cluster version (etcd issue 11716)"));
        assertEquals(List.of(), ownReferences("etcd #16028 records it"));
        assertEquals(List.of(), ownReferences("etcd's issue 16028"));
        assertEquals(List.of(), ownReferences("see etcd-io/etcd#16028 and kubernetes/kubernetes#118700"));
        assertEquals(List.of(), ownReferences("  mov x29, #0"));
        assertEquals(List.of(), ownReferences("a quote &#39; and a heading ## 2 steps"));
        assertEquals(List.of(), ownReferences("issues/" + n + " in a link"));
    }

    private static List<Path> scannedFiles() throws IOException {
        List<Path> files = new ArrayList<>();
        Files.walkFileTree(REPO, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                String name = dir.getFileName() == null ? "" : dir.getFileName().toString();
                boolean hidden = name.startsWith(".") && !name.equals(".ci") && !dir.equals(REPO);
                return hidden || name.equals("target") ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                if (attrs.isRegularFile() && scanned(file)) {
                    files.add(file);
                }
                return FileVisitResult.CONTINUE;
            }
        });
        return files;
    }

    private static boolean scanned(Path file) {
        String name = file.getFileName().toString();
        if (FOREIGN.contains(REPO.relativize(file).toString())) {
            return false;
        }
        int dot = name.lastIndexOf('.');
        if (dot > 0) {
            return EXTENSIONS.contains(name.substring(dot + 1));
        }
        try (var in = Files.newInputStream(file)) {
            byte[] start = in.readNBytes(2);
            return start.length == 2 && start[0] == '#' && start[1] == '!';
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
