package dev.etcdmigrate.image;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A runbook of docs/runbooks/ as its README's convention has it: marked `sh` blocks, run in order, each with
 * `bash -euo pipefail`, one shell per place. The shell of a place is kept between blocks by carrying its functions
 * and variables over in a state file (what a block defined is there for the next block of the same place, as in
 * an operator's terminal), each place's first state being the runbook's `env` block with the test's own values
 * for the same variables after it.
 */
final class Runbook {

    /** The same form RunbooksFormTest checks: a marker, then (after blank lines at most) a fenced sh block. */
    private static final Pattern MARKED =
            Pattern.compile("<!-- run: ([a-z]+) -->\\n(?:\\s*\\n)*```sh\\n(.*?)\\n```", Pattern.DOTALL);

    /**
     * One marked block: where it runs, its text, its position in the runbook (0-based among marked blocks), and the
     * prose paragraph right before its marker (where the convention says a block runs on each node in turn).
     */
    record Block(int index, String place, String script, String before) {
        Block(int index, String place, String script) {
            this(index, place, script, "");
        }

        /** The block's first line, to name it in a report. */
        String firstLine() {
            return script.lines().findFirst().orElse("").strip();
        }

        /** Whether the sentence before it says it runs on each node in turn (the convention's point 6). */
        boolean eachNode() {
            return before.replaceAll("\\s+", " ")
                    .toLowerCase(java.util.Locale.ROOT)
                    .contains("on each node in turn");
        }
    }

    /** How a place runs a block: the command prefix (e.g. entering a node's namespace) and its environment. */
    record Place(List<String> prefix, Map<String, String> environment) {}

    /** What a block did: its exit status, its output (stdout and stderr together) and its time. */
    record Run(Block block, int exit, String output, long millis) {
        Run check() {
            if (exit != 0)
                throw new AssertionError("runbook block %d (%s) failed with exit %d:\n%s\n--- output:\n%s"
                        .formatted(block.index, block.place, exit, block.script, output));
            return this;
        }
    }

    final Path file;
    final List<Block> blocks;
    private final Path work;
    private final Map<String, String> overrides;
    private final Map<String, Place> places = new HashMap<>();
    private final Map<String, Path> states = new HashMap<>();

    /**
     * The runbook `file`, its shells' state kept under `work`, the test's own values for variables of the env
     * block (set after it, in this order).
     */
    Runbook(Path file, Path work, Map<String, String> overrides) throws IOException {
        this.file = file;
        this.work = Files.createDirectories(work);
        this.overrides = new LinkedHashMap<>(overrides);
        this.blocks = parse(Files.readString(file));
        if (blocks.isEmpty() || !blocks.getFirst().place().equals("env"))
            throw new AssertionError(file + ": the first marked block must be the env block");
        for (String name : overrides.keySet())
            if (!Pattern.compile("(?m)^" + name + "=")
                    .matcher(blocks.getFirst().script())
                    .find())
                throw new AssertionError(file + ": the test sets " + name + ", which its env block does not");
    }

    static List<Block> parse(String text) {
        List<Block> found = new ArrayList<>();
        Matcher m = MARKED.matcher(text);
        int end = 0;
        while (m.find()) {
            String prose = text.substring(end, m.start()).strip();
            int paragraph = prose.lastIndexOf("\n\n");
            found.add(new Block(
                    found.size(), m.group(1), m.group(2), paragraph < 0 ? prose : prose.substring(paragraph + 2)));
            end = m.end();
        }
        return found;
    }

    void place(String name, Place place) {
        places.put(name, place);
    }

    /** Runs a runbook block where it says; its definitions stay for the place's next block. */
    Run run(Block block, Duration deadline) throws Exception {
        return execute(block, block.script(), deadline);
    }

    /**
     * Runs the test's own script in a place's shell as the runbook left it (its functions and variables), e.g. a
     * function the runbook defined called with `-o json`; it changes the state as a block would.
     */
    Run probe(String place, String script, Duration deadline) throws Exception {
        return execute(new Block(-1, place, script), script, deadline);
    }

    private Run execute(Block block, String script, Duration deadline) throws Exception {
        Place place = places.get(block.place());
        if (place == null) throw new AssertionError("no place " + block.place() + " configured for " + file);
        Path state = states.get(block.place());
        if (state == null) {
            state = work.resolve(block.place() + ".state");
            StringBuilder initial = new StringBuilder(blocks.getFirst().script()).append('\n');
            overrides.forEach(
                    (k, v) -> initial.append(k).append('=').append(quote(v)).append('\n'));
            Files.writeString(state, initial.toString());
            states.put(block.place(), state);
        }
        Path body = work.resolve(block.place() + ".block");
        Files.writeString(body, script + "\n");
        // the shell's own variables (those a fresh bash has) are not carried over; everything defined since is
        String wrapper = """
                __base=" $(compgen -v | tr '\\n' ' ') "
                set -euo pipefail
                . %1$s
                . %2$s
                { declare -f
                  for __v in $(compgen -v); do
                    case "$__base" in *" $__v "*) continue ;; esac
                    case "$__v" in __*|_|PIPESTATUS|BASH*|FUNCNAME|LINENO|RANDOM|SECONDS) continue ;; esac
                    declare -p "$__v" 2>/dev/null || true
                  done; } > %1$s.next
                mv %1$s.next %1$s
                """.formatted(quote(state.toString()), quote(body.toString()));
        List<String> command = new ArrayList<>(place.prefix());
        command.addAll(List.of("bash", "-c", wrapper));
        ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true);
        b.environment().putAll(place.environment());
        b.environment().keySet().removeIf(k -> k.startsWith("ETCD"));
        long t0 = System.nanoTime();
        Process p = b.start();
        try {
            // read on a thread of its own: a block that waits must not block on a full pipe
            java.util.concurrent.CompletableFuture<byte[]> out =
                    java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                        try {
                            return p.getInputStream().readAllBytes();
                        } catch (IOException e) {
                            return ("(output lost: " + e + ")").getBytes(StandardCharsets.UTF_8);
                        }
                    });
            if (!p.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor();
                throw new AssertionError("runbook block %d (%s) still running after %s:\n%s\n--- output:\n%s"
                        .formatted(
                                block.index(),
                                block.place(),
                                deadline,
                                script,
                                new String(out.get(10, TimeUnit.SECONDS), StandardCharsets.UTF_8)));
            }
            String output = new String(out.get(30, TimeUnit.SECONDS), StandardCharsets.UTF_8);
            return new Run(block, p.exitValue(), output, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
        } finally {
            if (p.isAlive()) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor();
            }
        }
    }

    static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
