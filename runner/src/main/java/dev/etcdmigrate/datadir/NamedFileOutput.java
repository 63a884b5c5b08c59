package dev.etcdmigrate.datadir;

import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * An output stream to a file whose write, flush and close failures name the file: the JDK's say only "Input/output
 * error" or "No space left on device", and the termination message must say which file (its open already does).
 */
public final class NamedFileOutput extends FilterOutputStream {

    private final Path file;

    private NamedFileOutput(OutputStream out, Path file) {
        super(out);
        this.file = file;
    }

    public static OutputStream create(Path file) throws IOException {
        return new NamedFileOutput(Files.newOutputStream(file), file);
    }

    @Override
    public void write(int b) throws IOException {
        try {
            out.write(b);
        } catch (IOException e) {
            throw named(e);
        }
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
        try {
            out.write(b, off, len);
        } catch (IOException e) {
            throw named(e);
        }
    }

    @Override
    public void flush() throws IOException {
        try {
            out.flush();
        } catch (IOException e) {
            throw named(e);
        }
    }

    @Override
    public void close() throws IOException {
        try {
            out.close();
        } catch (IOException e) {
            throw named(e);
        }
    }

    private IOException named(IOException e) {
        return new IOException("writing " + file + ": " + e.getMessage(), e);
    }
}
