package dev.etcdmigrate.process;

import dev.etcdmigrate.log.EtcdOutput;
import dev.etcdmigrate.log.Log;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.function.Consumer;

/** Copies a child's output into the runner's log line by line, keeping the last lines for errors. */
public final class LinePump {

    private static final int TAIL = 20;

    private final Log log;
    private final String program;
    private final Deque<String> tail = new ArrayDeque<>();
    private final Consumer<String> listener;
    /** The first line in which the child said it is dying (zap fatal/panic, capnslog critical, a Go panic). */
    private volatile String fatal;

    private static final java.util.regex.Pattern FATAL =
            java.util.regex.Pattern.compile("\"level\":\"(fatal|panic|dpanic)\"|^panic: |^fatal error: |\s[CF] \\| ");
    private Thread thread;
    private volatile boolean stopping;

    public LinePump(Log log, String program) {
        this(log, program, line -> {});
    }

    /** The listener sees every line too (e.g. a rejoin watch), on the pump's thread. */
    public LinePump(Log log, String program, Consumer<String> listener) {
        this.log = log;
        this.program = program;
        this.listener = listener;
    }

    public LinePump start(InputStream in) {
        thread = Thread.ofVirtual().name("pump-" + program).start(() -> pump(in));
        return this;
    }

    private void pump(InputStream in) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line; (line = reader.readLine()) != null; ) {
                // once it was told to stop, etcd's shutdown complaints ("server closed") are a normal stop's noise;
                // an unclean stop is reported with its last lines anyway
                log.child(program, line, !stopping && EtcdOutput.isImportant(line));
                if (fatal == null && FATAL.matcher(line).find()) {
                    fatal = line.length() > 600 ? line.substring(0, 600) + "..." : line;
                }
                synchronized (tail) {
                    if (tail.size() == TAIL) tail.removeFirst();
                    tail.addLast(line);
                }
                listener.accept(line);
            }
        } catch (IOException e) {
            // the child closed its output or was killed: nothing more to copy
        }
    }

    /** The child was sent SIGTERM: what it prints from now on is not shown as a warning or error. */
    public void stopping() {
        stopping = true;
    }

    /** Waits until the child's output is fully copied (it has exited). */
    public void join() throws InterruptedException {
        if (thread != null) thread.join();
    }

    public java.util.Optional<String> fatalLine() {
        return java.util.Optional.ofNullable(fatal);
    }

    public List<String> lastLines() {
        synchronized (tail) {
            return List.copyOf(tail);
        }
    }
}
