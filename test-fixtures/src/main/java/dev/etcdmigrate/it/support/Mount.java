package dev.etcdmigrate.it.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A mount a test needs (a read-only view of a dir, a small tmpfs), unmounted on close. Tests run as
 * root, and root ignores mode bits: only a real mount makes a dir read-only or a disk small. Where
 * mounting is not permitted (not root, no CAP_SYS_ADMIN) the test is aborted, saying so.
 */
public final class Mount implements AutoCloseable {

    private final Path point;

    private Mount(Path point) {
        this.point = point;
    }

    /** dir bind-mounted onto itself, read-only. */
    public static Mount readOnly(Path dir) throws Exception {
        mount("--bind", dir.toString(), dir.toString());
        Mount mount = new Mount(dir);
        try {
            mount("-o", "remount,bind,ro", dir.toString());
        } catch (Exception | Error e) {
            mount.close();
            throw e;
        }
        return mount;
    }

    /** A tmpfs of the given size on dir. */
    public static Mount tmpfs(Path dir, int megabytes) throws Exception {
        mount("-t", "tmpfs", "-o", "size=" + megabytes + "m,mode=0755", "tmpfs", dir.toString());
        return new Mount(dir);
    }

    /**
     * An XFS file system with reflinks (file clones) on dir, in a sparse image file of the given size
     * (loop device, freed on umount). Aborts the test where mkfs.xfs is missing (.ci/run installs xfsprogs).
     */
    public static Mount xfs(Path dir, Path image, int megabytes) throws Exception {
        try (java.io.RandomAccessFile file = new java.io.RandomAccessFile(image.toFile(), "rw")) {
            file.setLength((long) megabytes << 20);
        }
        Result made = run(List.of("mkfs.xfs", "-q", "-m", "reflink=1", image.toString()));
        assertEquals(0, made.code(), "mkfs.xfs: " + made.output());
        mount("-o", "loop", image.toString(), dir.toString());
        return new Mount(dir);
    }

    private static void mount(String... args) throws Exception {
        if ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid") != 0) {
            abort("mounting needs root; this test runs only as root");
        }
        List<String> command = new ArrayList<>(List.of("mount"));
        command.addAll(List.of(args));
        Result result = run(command);
        String lower = result.output().toLowerCase(java.util.Locale.ROOT);
        if (result.code() != 0
                && (lower.contains("permission denied")
                        || lower.contains("not permitted")
                        || lower.contains("must be superuser"))) {
            abort("mount is not permitted here (no CAP_SYS_ADMIN?): " + result.output());
        }
        assertEquals(0, result.code(), String.join(" ", command) + ": " + result.output());
    }

    private record Result(int code, String output) {}

    private static Result run(List<String> command) throws Exception {
        Process process;
        try {
            process = new ProcessBuilder(command).redirectErrorStream(true).start();
        } catch (java.io.IOException e) {
            abort(command.getFirst() + " cannot run here (" + e.getMessage() + ")");
            throw e; // not reached: abort throws
        }
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                fail(String.join(" ", command) + " did not finish within 30 s");
            }
            return new Result(
                    process.exitValue(),
                    new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim());
        } finally {
            process.destroyForcibly();
        }
    }

    /** Fails when something still holds a file open under it (e.g. an etcd the runner left behind). */
    @Override
    public void close() throws Exception {
        Result result = run(List.of("umount", point.toString()));
        assertEquals(0, result.code(), "umount " + point + ": " + result.output());
    }
}
