package dev.etcdmigrate.cluster;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The note in its file (.etcd-migrate/restart-record): "taking" or the record's revision, one line; no file for
 * none (the format of every release since the note exists). The durability rules: a note is written beside the
 * file, fsynced, renamed over it, and the directory fsynced, before the cluster call it guards; a removal is
 * fsynced too, so a run started again never believes it holds a record it gave up, nor misses one it may hold.
 */
public final class FileNoteStore implements NoteStore {

    private final Path file;

    public FileNoteStore(Path file) {
        this.file = file;
    }

    @Override
    public Note read() throws IOException {
        return Files.exists(file) ? Note.parse(Files.readString(file, StandardCharsets.UTF_8)) : Note.NONE;
    }

    @Override
    public void write(Note note) throws IOException {
        if (note instanceof Note.None) {
            if (Files.deleteIfExists(file)) syncDirectory();
            return;
        }
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel out = FileChannel.open(
                tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.WRITE)) {
            out.write(StandardCharsets.UTF_8.encode(Note.text(note) + "\n"));
            out.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        syncDirectory();
    }

    private void syncDirectory() throws IOException {
        try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            dir.force(true);
        } catch (IOException notSupported) {
            // a file system that cannot fsync a directory: the rename is as durable as it allows
        }
    }
}
