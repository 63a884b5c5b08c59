package dev.etcdmigrate.log;

import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.EventListener;
import java.io.PrintStream;
import java.time.Instant;

/**
 * --log-format=json: one object per line. The runner's own events carry "time", "level", "source":
 * "etcd-migrate", "event", "message" and the event's fields. A child's JSON line (etcd 3.4+ logs JSON)
 * passes through with its own fields unchanged and one field put in front, "source" (e.g.
 * "etcd-3.6.16"); any other child line is wrapped as {"source", "event": "child-output", "line"}.
 */
final class JsonFormat implements EventListener {

    private final PrintStream out;

    JsonFormat(PrintStream out) {
        this.out = out;
    }

    @Override
    public void on(Event event) {
        print(line(event, Instant.now()));
    }

    static String line(Event event, Instant now) {
        if (event instanceof EtcdEvent.ChildOutput child) {
            String line = child.line().strip();
            if (line.startsWith("{") && line.endsWith("}")) {
                // a warning or error the runner caused itself (its SIGTERM, its private flags) says so
                String expected = !child.important() && EtcdOutput.looksImportant(line) ? ",\"expected\":true" : "";
                return "{\"source\":" + Json.string(child.source()) + expected + (line.length() > 2 ? "," : "")
                        + line.substring(1);
            }
            return "{\"source\":" + Json.string(child.source()) + ",\"event\":\"child-output\",\"line\":"
                    + Json.string(child.line()) + "}";
        }
        StringBuilder b = new StringBuilder("{\"time\":\"")
                .append(Stamp.of(now))
                .append("\",\"level\":\"")
                .append(event.level().name().toLowerCase(java.util.Locale.ROOT))
                .append("\",\"source\":\"etcd-migrate\",\"event\":\"")
                .append(event.name())
                .append('"');
        Json.fields(event, b);
        b.append(",\"message\":").append(Json.string(event.message())).append('}');
        return b.toString();
    }

    private void print(String text) {
        synchronized (out) {
            out.println(text);
        }
    }
}
