package dev.etcdmigrate.log;

import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.EventListener;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Every line the private etcds and tools print in this run, in a file under .etcd-migrate/ (owner-only),
 * whatever --etcd-output hides from the diary. Started empty by each run that gets as far as the lock.
 */
public final class ChildOutputFile implements EventListener, AutoCloseable {

    private final BufferedWriter out;

    private ChildOutputFile(BufferedWriter out) {
        this.out = out;
    }

    public static ChildOutputFile create(Path file) throws IOException {
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        return new ChildOutputFile(Files.newBufferedWriter(file, StandardCharsets.UTF_8, StandardOpenOption.WRITE));
    }

    @Override
    public void on(Event event) {
        if (!(event instanceof EtcdEvent.ChildOutput child)) return;
        synchronized (out) {
            try {
                out.write(Stamp.now() + " [" + child.source() + "] " + child.line());
                out.newLine();
                out.flush();
            } catch (IOException e) {
                // the diary still has what matters; a full disk must not fail the step through its log
            }
        }
    }

    @Override
    public void close() {
        synchronized (out) {
            try {
                out.close();
            } catch (IOException ignored) {
                // nothing left to write
            }
        }
    }
}
