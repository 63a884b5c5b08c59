package dev.etcdmigrate.log;

import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.EventListener;
import java.io.PrintStream;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Where a run's events go: every subscriber (a text or JSON format on stderr, the etcd output file,
 * a test) sees each event in order. The sentence methods are shorthands for {@link Event.Note}.
 * Never pass key values here; they hold Kubernetes secrets.
 */
public final class Log {

    private final List<EventListener> listeners = new CopyOnWriteArrayList<>();
    private final PrintStream out;

    private Log(PrintStream out) {
        this.out = out;
    }

    /** The operator's diary as text lines on out, every child line shown. */
    public static Log text(PrintStream out) {
        return text(out, EtcdOutput.ALL);
    }

    public static Log text(PrintStream out, EtcdOutput etcdOutput) {
        Log log = new Log(out);
        log.subscribe(new TextFormat(out, etcdOutput));
        return log;
    }

    public static Log json(PrintStream out) {
        Log log = new Log(out);
        log.subscribe(new JsonFormat(out));
        return log;
    }

    public static Log of(LogFormat format, EtcdOutput etcdOutput, PrintStream out) {
        return format == LogFormat.JSON ? json(out) : text(out, etcdOutput);
    }

    /** Nothing printed; subscribers may still be added (tests). */
    public static Log silent() {
        return new Log(null);
    }

    public Log subscribe(EventListener listener) {
        listeners.add(listener);
        return this;
    }

    public void unsubscribe(EventListener listener) {
        listeners.remove(listener);
    }

    public void emit(Event event) {
        for (EventListener listener : listeners) {
            listener.on(event);
        }
    }

    public void info(String message) {
        emit(new Event.Note(Event.Level.INFO, message));
    }

    public void warn(String message) {
        emit(new Event.Note(Event.Level.WARN, message));
    }

    public void error(String message) {
        emit(new Event.Note(Event.Level.ERROR, message));
    }

    /** A line a child process printed, with the program and version that printed it. */
    public void child(String program, String line) {
        child(program, line, EtcdOutput.isImportant(line));
    }

    /** The same, its importance decided by the caller (e.g. etcd's shutdown complaints after a SIGTERM it was sent). */
    public void child(String program, String line, boolean important) {
        emit(new EtcdEvent.ChildOutput(program, line, important));
    }

    public void flush() {
        if (out != null) out.flush();
    }
}
