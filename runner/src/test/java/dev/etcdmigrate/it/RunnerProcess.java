package dev.etcdmigrate.it;

import static org.junit.jupiter.api.Assertions.fail;

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
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The runner's real command line (runner/target/etcd-migrate) as a child process, its output
 * collected line by line. {@link #close()} kills it and every process it left behind.
 */
final class RunnerProcess implements AutoCloseable {

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

    static RunnerProcess start(List<String> args, Map<String, String> extraEnv) throws IOException {
        return start(List.of(), args, extraEnv);
    }

    /**
     * Starts the runner in a session and process group of its own (setsid execs it, same pid), so that
     * {@link #killGroup()} reaches every process it started in one atomic signal.
     */
    static RunnerProcess startInOwnGroup(List<String> args) throws IOException {
        return start(List.of("setsid"), args, Map.of());
    }

    /** Starts the runner under a command prefix, e.g. {@code ip netns exec NS} (which execs it: same pid). */
    static RunnerProcess startUnder(List<String> prefix, List<String> args, Map<String, String> extraEnv) throws IOException {
        return start(prefix, args, extraEnv);
    }

    private static RunnerProcess start(List<String> prefix, List<String> args, Map<String, String> extraEnv) throws IOException {
        List<String> command = new ArrayList<>(prefix);
        command.add(launcher().toString());
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().keySet().removeIf(k -> k.startsWith("ETCD") || k.equals("TARGET_VERSION") || k.equals("TARGET_STORAGE")
                || k.equals("DATA_DIRECTORY"));
        builder.environment().putAll(extraEnv);
        return new RunnerProcess(builder.start());
    }

    /** Runs to completion (deadline 3 minutes) and returns the exit code. */
    static RunnerProcess run(List<String> args) throws Exception {
        return run(args, Map.of());
    }

    static RunnerProcess run(List<String> args, Map<String, String> env) throws Exception {
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

    long pid() {
        return process.pid();
    }

    Process process() {
        return process;
    }

    int awaitExit(Duration deadline) throws Exception {
        if (!process.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
            fail("runner still running after " + deadline + "; output:\n" + output());
        }
        for (Thread t : pumps) t.join(5000);
        return process.exitValue();
    }

    int exitCode() {
        return process.exitValue();
    }

    /** Waits until a line matching the pattern appears (or the process ends / the deadline passes). */
    String awaitLine(String regex, Duration deadline) throws InterruptedException {
        Pattern pattern = Pattern.compile(regex);
        long end = System.nanoTime() + deadline.toNanos();
        synchronized (lines) {
            int checked = 0;
            while (true) {
                for (; checked < lines.size(); checked++) {
                    if (pattern.matcher(lines.get(checked)).find()) return lines.get(checked);
                }
                rememberDescendants();
                long left = end - System.nanoTime();
                if (left <= 0 || (!process.isAlive() && checked == lines.size())) {
                    fail("no line matching /" + regex + "/ from the runner; output:\n" + String.join("\n", lines));
                }
                lines.wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 50)));
            }
        }
    }

    /** Lines that came from the runner itself (not the children it pumps through). */
    List<String> runnerLines() {
        synchronized (lines) {
            return lines.stream().filter(l -> l.contains("[etcd-migrate]")).toList();
        }
    }

    List<String> lines() {
        synchronized (lines) {
            return List.copyOf(lines);
        }
    }

    String output() {
        return String.join("\n", lines());
    }

    long countRunnerLines(String regex) {
        Pattern p = Pattern.compile(regex);
        return runnerLines().stream().filter(l -> p.matcher(l).find()).count();
    }

    /** Children die with us only if we stop them: remember who they are while the runner lives. */
    void rememberDescendants() {
        process.toHandle().descendants().forEach(seen::add);
    }

    /** SIGKILL the runner and every process it started, as a crash of the whole pod would. */
    void killHard() throws InterruptedException {
        rememberDescendants();
        process.toHandle().destroyForcibly();
        for (ProcessHandle h : List.copyOf(seen)) h.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
        for (ProcessHandle h : List.copyOf(seen)) h.onExit().orTimeout(10, TimeUnit.SECONDS).exceptionally(x -> h).join();
    }

    /**
     * SIGKILL to the runner's whole process group (see {@link #startInOwnGroup}) at once, then to any
     * descendant that left it; returns when none is running and the output is read to its end.
     */
    void killGroup() throws Exception {
        rememberDescendants();
        if (process.isAlive() && ProcessGroup.of(process.pid()).orElse(process.pid()) != process.pid()) {
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
