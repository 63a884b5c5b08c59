package dev.etcdmigrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * docs/runbooks/ keeps the form its README promises, so that a test can extract and run the procedures: every
 * runbook opens with one {@code env} block, every marked block says where it runs, and every marked block is
 * valid bash.
 */
class RunbooksFormTest {

    private static final Path RUNBOOKS =
            Path.of("").toAbsolutePath().getParent().resolve("docs/runbooks");
    private static final Set<String> PLACES = Set.of("env", "build", "node", "operator");
    /** A marker comment, then (after blank lines at most) a fenced sh block. */
    private static final Pattern MARKED =
            Pattern.compile("<!-- run: ([a-z]+) -->\\n(?:\\s*\\n)*```sh\\n(.*?)\\n```", Pattern.DOTALL);

    record Block(String place, String script) {}

    static List<Block> blocks(String text) {
        List<Block> blocks = new ArrayList<>();
        Matcher m = MARKED.matcher(text);
        while (m.find()) {
            blocks.add(new Block(m.group(1), m.group(2)));
        }
        return blocks;
    }

    @TestFactory
    Stream<DynamicTest> everyRunbookKeepsTheForm() throws IOException {
        List<Path> runbooks;
        try (Stream<Path> files = Files.list(RUNBOOKS)) {
            runbooks = files.filter(p -> p.toString().endsWith(".md"))
                    .filter(p -> !p.getFileName().toString().equals("README.md"))
                    .sorted()
                    .toList();
        }
        assertTrue(runbooks.size() >= 6, "runbooks found: " + runbooks);
        return runbooks.stream()
                .map(p -> DynamicTest.dynamicTest(p.getFileName().toString(), () -> check(p)));
    }

    private static void check(Path runbook) throws Exception {
        String text = Files.readString(runbook);
        List<Block> blocks = blocks(text);
        assertTrue(!blocks.isEmpty(), runbook + " has no marked block");
        assertEquals("env", blocks.get(0).place(), runbook + ": the first marked block sets the inputs");
        assertEquals(1, blocks.stream().filter(b -> b.place().equals("env")).count(), runbook + ": one env block");
        for (Block b : blocks) {
            assertTrue(PLACES.contains(b.place()), runbook + ": unknown place " + b.place());
            assertTrue(
                    !b.script().contains("sleep") || b.script().contains("seq 1"),
                    runbook + ": a wait is a bounded poll:\n" + b.script());
            assertParses(runbook, b.script());
        }
    }

    private static void assertParses(Path runbook, String script) throws Exception {
        Process bash =
                new ProcessBuilder("bash", "-n").redirectErrorStream(true).start();
        try {
            bash.getOutputStream().write(script.getBytes(StandardCharsets.UTF_8));
            bash.getOutputStream().close();
            String output = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(bash.waitFor(30, TimeUnit.SECONDS), "bash -n still running");
            assertEquals(0, bash.exitValue(), runbook + ": not valid bash:\n" + script + "\n" + output);
        } finally {
            bash.destroyForcibly();
            bash.waitFor();
        }
    }
}
