package dev.etcdmigrate.it.support;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;

/** Tight volumes for the disk-space tests: how much a tree holds, and a ballast file that takes the rest. */
public final class Ballast {

    public static final long MB = 1024 * 1024;

    private Ballast() {}

    /** The bytes of every regular file under tree. */
    public static long sizeOf(Path tree) throws IOException {
        try (Stream<Path> walk = Files.walk(tree)) {
            long bytes = 0;
            for (Path p : walk.filter(Files::isRegularFile).toList()) bytes += Files.size(p);
            return bytes;
        }
    }

    /** A file of real zeros (tmpfs allocates written pages only, so no sparse file). */
    public static Path fill(Path file, long bytes) throws IOException {
        assertTrue(bytes > 0, "room for ballast");
        ByteBuffer zeros = ByteBuffer.allocate((int) MB);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            for (long left = bytes; left > 0; left -= MB) {
                zeros.clear().limit((int) Math.min(MB, left));
                while (zeros.hasRemaining()) channel.write(zeros);
            }
        }
        return file;
    }
}
