package dev.etcdmigrate.process;

import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.log.Log;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.commons.exec.CommandLine;
import org.apache.commons.exec.DefaultExecutor;
import org.apache.commons.exec.ExecuteException;
import org.apache.commons.exec.ExecuteWatchdog;
import org.apache.commons.exec.LogOutputStream;
import org.apache.commons.exec.PumpStreamHandler;

/**
 * Runs a one-shot program (etcdctl, etcdutl, go, apt-get, dpkg-deb) to completion with a deadline,
 * its output copied into the log with the program's name, and fails with its last lines when it
 * exits non-zero. commons-exec does the watchdog, the stream pumping and the reaping.
 */
public final class ToolRunner {

    private final Log log;
    private final Children children;

    public ToolRunner(Log log, Children children) {
        this.log = log;
        this.children = children;
    }

    /** A finished run: its exit code and the lines it printed (stdout and stderr interleaved). */
    public record Result(int exitCode, List<String> lines) {
        public String output() {
            return String.join("\n", lines);
        }

        /** The last 8 lines on one line, for a message about a failed run. */
        public String lastLines() {
            return String.join(" | ", lines.subList(Math.max(0, lines.size() - 8), lines.size()));
        }
    }

    public Result run(
            String label, List<String> command, Map<String, String> environment, Path workDir, Duration timeout)
            throws ToolFailedException {
        Result result = runAllowingFailure(label, command, environment, workDir, timeout);
        if (result.exitCode() != 0) {
            throw new ToolFailedException(label + " exited with " + result.exitCode() + ": " + result.lastLines());
        }
        return result;
    }

    public Result runAllowingFailure(
            String label, List<String> command, Map<String, String> environment, Path workDir, Duration timeout)
            throws ToolFailedException {
        CommandLine line = new CommandLine(command.getFirst());
        command.subList(1, command.size()).forEach(arg -> line.addArgument(arg, false));
        List<String> lines = new ArrayList<>();
        LogOutputStream sink = new LogOutputStream() {
            @Override
            protected void processLine(String text, int level) {
                log.child(label, text);
                synchronized (lines) {
                    lines.add(text);
                }
            }
        };
        ExecuteWatchdog watchdog = ExecuteWatchdog.builder().setTimeout(timeout).get();
        DefaultExecutor executor =
                DefaultExecutor.builder().setWorkingDirectory(workDir.toFile()).get();
        executor.setStreamHandler(new PumpStreamHandler(sink));
        executor.setWatchdog(watchdog);
        executor.setProcessDestroyer(children);
        executor.setExitValues(null);
        int exit;
        long start = System.nanoTime();
        try {
            exit = executor.execute(line, environment);
        } catch (ExecuteException e) {
            exit = e.getExitValue();
        } catch (IOException e) {
            throw new ToolFailedException(
                    label + " could not be started (" + command.getFirst() + "): " + dev.etcdmigrate.error.Reason.of(e),
                    e);
        } finally {
            try {
                sink.close();
            } catch (IOException ignored) {
                // closing flushes a last partial line; nothing else to do
            }
        }
        if (watchdog.killedProcess()) {
            throw new ToolFailedException(
                    label + " did not finish within " + timeout.toSeconds() + " s and was killed");
        }
        log.emit(new EtcdEvent.ToolRan(
                label, command.subList(1, command.size()), exit, (System.nanoTime() - start) / 1_000_000));
        synchronized (lines) {
            return new Result(exit, List.copyOf(lines));
        }
    }

    public static final class ToolFailedException extends dev.etcdmigrate.error.FailedException {
        public ToolFailedException(String message) {
            super(message);
        }

        public ToolFailedException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
