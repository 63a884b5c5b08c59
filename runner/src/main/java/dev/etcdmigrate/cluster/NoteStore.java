package dev.etcdmigrate.cluster;

import java.io.IOException;

/** Where a runner keeps its {@link Note} durably: a write returns only once it would survive a power cut. */
public interface NoteStore {

    Note read() throws IOException;

    void write(Note note) throws IOException;
}
