package dev.etcdmigrate.exec;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Kubernetes shows a container's termination message (the file at terminationMessagePath, by default
 * /dev/termination-log) in `kubectl describe pod`: a failed run leaves its reason there, one line,
 * when the file exists. Outside a pod there is no such file and nothing is written.
 */
public final class TerminationLog {

    /** Kubernetes caps the message at 4096 bytes. */
    private static final int LIMIT = 4000;

    private TerminationLog() {}

    public static void write(Path file, String reason) {
        if (!Files.isRegularFile(file)) return; // in a pod it is a bind-mounted regular file
        String line = reason.replaceAll("\\s*\\R\\s*", " | ");
        if (line.length() > LIMIT) line = line.substring(0, LIMIT) + "...";
        try {
            Files.writeString(
                    file,
                    "etcd-migrate: " + line + "\n",
                    StandardCharsets.UTF_8,
                    StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING);
        } catch (IOException | RuntimeException e) {
            // the message is a courtesy; the log already has the reason
        }
    }
}
