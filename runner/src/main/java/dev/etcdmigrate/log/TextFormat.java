package dev.etcdmigrate.log;

import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.EventListener;
import dev.etcdmigrate.event.RunEvent;
import java.io.PrintStream;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The operator's diary: "TIMESTAMP LEVEL [source] sentence", one line each (a plan's steps indented below it).
 * Child lines --etcd-output hides are kept (the last {@value #KEPT}) and printed before the run's failure or
 * refusal, so etcd's output is there in full when it matters and only then.
 */
final class TextFormat implements EventListener {

    static final int KEPT = 200;

    private final PrintStream out;
    private final EtcdOutput etcdOutput;
    private final Deque<String> hidden = new ArrayDeque<>();
    private long hiddenCount;

    TextFormat(PrintStream out, EtcdOutput etcdOutput) {
        this.out = out;
        this.etcdOutput = etcdOutput;
    }

    @Override
    public void on(Event event) {
        String stamp = Stamp.now();
        if (event instanceof EtcdEvent.ChildOutput child) {
            String line = stamp + "       [" + child.source() + "] " + child.line();
            if (etcdOutput == EtcdOutput.ALL || child.important()) {
                print(line);
            } else {
                keep(line);
            }
            return;
        }
        if (event instanceof RunEvent.Failed || event instanceof RunEvent.Refused) {
            printHidden(stamp);
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

    private void keep(String line) {
        synchronized (hidden) {
            if (hidden.size() == KEPT) hidden.removeFirst();
            hidden.addLast(line);
            hiddenCount++;
        }
    }

    /** The run ends badly: what the children said that was not shown, with its own time stamps. */
    private void printHidden(String stamp) {
        StringBuilder b = new StringBuilder();
        synchronized (hidden) {
            if (hidden.isEmpty()) return;
            b.append(stamp)
                    .append(" INFO  [etcd-migrate] the run did not succeed: ")
                    .append(
                            hiddenCount > hidden.size()
                                    ? "the last " + hidden.size() + " of " + hiddenCount + " lines"
                                    : "the " + hidden.size() + " lines")
                    .append(" the private etcds and tools printed that were not shown (every line of the run:"
                            + " .etcd-migrate/etcd-output.log in the data dir):");
            for (String line : hidden) b.append('\n').append(line);
            hidden.clear();
            hiddenCount = 0;
        }
        print(b.toString());
    }

    private void print(String text) {
        synchronized (out) {
            out.println(text);
        }
    }
}
