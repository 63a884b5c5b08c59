package dev.etcdmigrate;

import java.io.PrintStream;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * The operator's diary: one line per decision, timestamped, to stderr. Never pass key values here;
 * they hold Kubernetes secrets.
 */
public final class Log {

    private final PrintStream out;
    private final Clock clock;

    public Log(PrintStream out) {
        this(out, Clock.systemUTC());
    }

    Log(PrintStream out, Clock clock) {
        this.out = out;
        this.clock = clock;
    }

    public void info(String message) {
        line("INFO ", "etcd-migrate", message);
    }

    public void warn(String message) {
        line("WARN ", "etcd-migrate", message);
    }

    public void error(String message) {
        line("ERROR", "etcd-migrate", message);
    }

    /** A line a child process printed, prefixed with the program and version that printed it. */
    public void child(String program, String message) {
        line("     ", program, message);
    }

    public void flush() {
        out.flush();
    }

    private void line(String level, String source, String message) {
        String stamp = Instant.now(clock).truncatedTo(ChronoUnit.MILLIS).toString();
        synchronized (out) {
            out.println(stamp + " " + level + " [" + source + "] " + message);
        }
    }
}
