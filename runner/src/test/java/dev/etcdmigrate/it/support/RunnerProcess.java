package dev.etcdmigrate.it.support;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.etcd.client.GatewayClient;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The runner's real command line (runner/target/etcd-migrate) as a child process, its output
 * collected line by line. It runs with {@code LOG_FORMAT=json}: tests assert on its events
 * ({@link #events}, {@link #awaitEvent}), never on log wording; {@link #output()} renders the lines
 * as the text diary would, only for failure messages. {@link #close()} kills it and every process it left
 * behind.
 */
public final class RunnerProcess implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Process process;
    private final List<String> lines = new ArrayList<>();
    private final List<Thread> pumps = new ArrayList<>();
    private final List<ProcessHandle> seen = new ArrayList<>();

    private RunnerProcess(Process process) {
        this.process = process;
        pumps.add(pump(process.getInputStream()));
        pumps.add(pump(process.getErrorStream()));
    }

    static Path launcher() {
        String path = System.getProperty("etcd.migrate.launcher");
        if (path == null || !Files.isExecutable(Path.of(path))) {
            fail("runner launcher missing (mvn package builds runner/target/etcd-migrate); got " + path);
        }
        return Path.of(path);
    }

    public static RunnerProcess start(List<String> args, Map<String, String> extraEnv) throws IOException {
        return start(List.of(), args, extraEnv);
    }

    /**
     * Starts the runner in a session and process group of its own (setsid execs it, same pid), so that
     * {@link #killGroup()} reaches every process it started in one atomic signal.
     */
    public static RunnerProcess startInOwnGroup(List<String> args) throws IOException {
        return start(List.of("setsid"), args, Map.of());
    }

    /** Starts the runner under a command prefix, e.g. {@code ip netns exec NS} (which execs it: same pid). */
    public static RunnerProcess startUnder(List<String> prefix, List<String> args, Map<String, String> extraEnv)
            throws IOException {
        return start(prefix, args, extraEnv);
    }

    private static RunnerProcess start(List<String> prefix, List<String> args, Map<String, String> extraEnv)
            throws IOException {
        List<String> command = new ArrayList<>(prefix);
        command.add(launcher().toString());
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment()
                .keySet()
                .removeIf(k -> k.startsWith("ETCD")
                        || k.equals("TARGET_VERSION")
                        || k.equals("TARGET_STORAGE")
                        || k.equals("DATA_DIRECTORY"));
        builder.environment().put("LOG_FORMAT", "json");
        builder.environment().putAll(extraEnv);
        return new RunnerProcess(builder.start());
    }

    /** Runs to completion (deadline 3 minutes) and returns the exit code. */
    public static RunnerProcess run(List<String> args) throws Exception {
        return run(args, Map.of());
    }

    public static RunnerProcess run(List<String> args, Map<String, String> env) throws Exception {
        RunnerProcess runner = start(args, env);
        runner.awaitExit(Duration.ofMinutes(3));
        return runner;
    }

    private Thread pump(InputStream in) {
        return Thread.ofVirtual().start(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = reader.readLine()) != null; ) {
                    synchronized (lines) {
                        lines.add(line);
                        lines.notifyAll();
                    }
                }
            } catch (IOException ignored) {
                // process gone
            }
        });
    }

    public long pid() {
        return process.pid();
    }

    public Process process() {
        return process;
    }

    public int awaitExit(Duration deadline) throws Exception {
        if (!process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
            fail("runner still running after " + deadline + "; output:\n" + output());
        }
        for (Thread t : pumps) t.join(5000);
        return process.exitValue();
    }

    /** Until the etcd this runner exec'd into accepts a write through {@code gateway}; fails with what it printed. */
    public void awaitWrite(GatewayClient gateway) throws InterruptedException {
        try {
            Poll.untilTrue(Duration.ofSeconds(30), Duration.ofMillis(20), "a write to the exec'd etcd", () -> {
                gateway.put("/it/after-exec", "ok");
                return true;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\n" + output(), e);
        }
    }

    public int exitCode() {
        return process.exitValue();
    }

    /** Every line, a JSON line rendered as the text diary shows it ("LEVEL [source] message"; etcd's as "[source] line"). */
    public List<String> lines() {
        List<String> raw = rawLines();
        List<String> rendered = new ArrayList<>();
        for (String line : raw) {
            JsonNode json = parse(line);
            if (json == null || !json.has("source")) {
                rendered.add(line);
            } else if (json.path("source").asText().equals("etcd-migrate")) {
                for (String part : json.path("message").asText().split("\n", -1)) {
                    rendered.add(
                            json.path("level").asText().toUpperCase(java.util.Locale.ROOT) + " [etcd-migrate] " + part);
                }
            } else {
                rendered.add("[" + json.path("source").asText() + "] "
                        + (json.has("line") ? json.path("line").asText() : line));
            }
        }
        return rendered;
    }

    /** The lines as printed so far. */
    private List<String> rawLines() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    private static JsonNode parse(String line) {
        if (!line.startsWith("{")) return null;
        try {
            return JSON.readTree(line);
        } catch (IOException e) {
            return null;
        }
    }

    /** The runner's own events so far, in order (each with "event", "level", "message" and its fields). */
    public List<JsonNode> events() {
        return jsonLines(source -> source.equals("etcd-migrate"));
    }

    /** The JSON lines so far whose "source" passes the test, in order. */
    private List<JsonNode> jsonLines(Predicate<String> source) {
        List<String> raw = rawLines();
        List<JsonNode> found = new ArrayList<>();
        for (String line : raw) {
            JsonNode json = parse(line);
            if (json != null && source.test(json.path("source").asText())) found.add(json);
        }
        return found;
    }

    /** The runner's events of one kind ("step-finished", "etcd-started", ...). */
    public List<JsonNode> events(String name) {
        return events().stream()
                .filter(e -> e.path("event").asText().equals(name))
                .toList();
    }

    public long count(String name) {
        return events(name).size();
    }

    /** The event that ended a run that refused (exit 2/3) or failed (exit 1). */
    public JsonNode ending() {
        List<JsonNode> ends = events().stream()
                .filter(e ->
                        Set.of("refused", "failed").contains(e.path("event").asText()))
                .toList();
        if (ends.isEmpty()) fail("the runner reported no refused/failed event; output:\n" + output());
        return ends.getLast();
    }

    /** Lines a child printed (etcd's JSON lines, or wrapped ones), for sources starting with the prefix ("etcd-3.6"). */
    public List<JsonNode> childLines(String sourcePrefix) {
        return jsonLines(source -> source.startsWith(sourcePrefix));
    }

    /** Waits until an event of that kind matching the test appears (or the process ends / the deadline passes). */
    public JsonNode awaitEvent(String name, Predicate<JsonNode> test, Duration deadline) throws InterruptedException {
        try {
            return Poll.until(deadline, Duration.ofMillis(50), "a '" + name + "' event as wanted", lines, () -> {
                boolean ended;
                synchronized (lines) {
                    ended = !process.isAlive() && pumps.stream().noneMatch(Thread::isAlive);
                }
                for (JsonNode e : events(name)) {
                    if (test.test(e)) return e;
                }
                if (ended) throw new AssertionError("no '" + name + "' event as wanted before the runner ended");
                rememberDescendants();
                return null;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; output:\n" + output(), e);
        }
    }

    public JsonNode awaitEvent(String name, Duration deadline) throws InterruptedException {
        return awaitEvent(name, e -> true, deadline);
    }

    public String output() {
        return String.join("\n", lines());
    }

    /** The raw lines from index {@code from} on (JSON as printed). */
    public List<String> linesFrom(int from) {
        synchronized (lines) {
            return List.copyOf(lines.subList(Math.min(from, lines.size()), lines.size()));
        }
    }

    /** How many lines it printed so far (its own events and its children's output). */
    public int lineCount() {
        synchronized (lines) {
            return lines.size();
        }
    }

    /** Until it printed more than {@code known} lines, at most {@code wait}: a waiter sees each event as it comes. */
    public void awaitLines(int known, Duration wait) throws InterruptedException {
        synchronized (lines) {
            if (lines.size() <= known) lines.wait(Math.max(1, wait.toMillis()));
        }
    }

    /** Children die with us only if we stop them: remember who they are while the runner lives. */
    public void rememberDescendants() {
        process.toHandle().descendants().forEach(seen::add);
    }

    /** SIGKILL the runner and every process it started, as a crash of the whole pod would. */
    public void killHard() throws InterruptedException {
        rememberDescendants();
        process.toHandle().destroyForcibly();
        for (ProcessHandle h : List.copyOf(seen)) h.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
        for (ProcessHandle h : List.copyOf(seen))
            h.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(x -> h).join();
    }

    /**
     * SIGKILL to the runner's whole process group (see {@link #startInOwnGroup}) at once, then to any
     * descendant that left it; returns when none is running and the output is read to its end.
     */
    public void killGroup() throws Exception {
        rememberDescendants();
        // setsid(1) makes the group only when it runs: a kill in the first moments after the start (a random moment
        // near zero, a loaded machine) may find the process still in the test's group, which the kill must not hit
        try {
            Poll.untilTrue(
                    Duration.ofSeconds(10),
                    Duration.ofMillis(5),
                    "runner " + process.pid() + " leads its group",
                    () -> !process.isAlive() || ProcessGroup.of(process.pid()).orElse(process.pid()) == process.pid());
        } catch (AssertionError | RuntimeException e) {
            fail("runner " + process.pid() + " is not its own process group leader (started without startInOwnGroup?)");
        }
        ProcessGroup.killAndAwait(process.pid(), Duration.ofSeconds(10));
        killHard();
        awaitExit(Duration.ofSeconds(10));
    }

    @Override
    public void close() throws Exception {
        if (process.isAlive() || seen.stream().anyMatch(ProcessHandle::isAlive)) {
            killHard();
        }
    }
}
