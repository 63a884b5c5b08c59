package dev.etcdmigrate.log;

import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.EventListener;
import java.io.PrintStream;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** The operator's diary: "TIMESTAMP LEVEL [source] sentence", one line each (a plan's steps indented below it). */
final class TextFormat implements EventListener {

    private final PrintStream out;
    private final EtcdOutput etcdOutput;

    TextFormat(PrintStream out, EtcdOutput etcdOutput) {
        this.out = out;
        this.etcdOutput = etcdOutput;
    }

    @Override
    public void on(Event event) {
        String stamp = Instant.now().truncatedTo(ChronoUnit.MILLIS).toString();
        if (event instanceof EtcdEvent.ChildOutput child) {
            if (etcdOutput == EtcdOutput.ALL || child.important()) {
                print(stamp + "       [" + child.source() + "] " + child.line());
            }
            return;
        }
        String level = switch (event.level()) {
            case INFO -> "INFO ";
            case WARN -> "WARN ";
            case ERROR -> "ERROR";
        };
        StringBuilder b = new StringBuilder();
        for (String line : event.message().split("\n", -1)) {
            if (!b.isEmpty()) b.append('\n');
            b.append(stamp).append(' ').append(level).append(" [etcd-migrate] ").append(line);
        }
        print(b.toString());
    }

    private void print(String text) {
        synchronized (out) {
            out.println(text);
        }
    }
}
