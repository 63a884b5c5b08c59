package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.abort;

import dev.etcdmigrate.it.support.Poll;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The power-cut file system (src/test/c/powercutfs.c) mounted on a directory, backed by another; every
 * operation that changes the tree is logged. {@link #close()} unmounts it; {@link #log()} then reads what
 * was done, from which {@link PowerCut} makes the states a power cut could leave. The backing dir's
 * content at mount time is the base: durable by definition (it was written before the mount), and read
 * from {@code base}, a copy that nothing changes, when a crash state is built.
 *
 * <p>The binary is compiled here with gcc on first use (target/powercutfs); the test is aborted, saying
 * why, where gcc, libfuse3's headers, /dev/fuse or root are missing.
 */
final class PowerCutFs implements AutoCloseable {

    private static final Path SOURCE = Path.of(System.getProperty("basedir", "."), "src/test/c/powercutfs.c");

    private final Path backing;
    private final Path mountPoint;
    private final Path work;
    private final Process daemon;
    private final Map<Long, String> baseInodes;
    private final Path base;
    private boolean mounted = true;

    private PowerCutFs(
            Path backing, Path mountPoint, Path work, Process daemon, Map<Long, String> baseInodes, Path base) {
        this.backing = backing;
        this.mountPoint = mountPoint;
        this.work = work;
        this.daemon = daemon;
        this.baseInodes = baseInodes;
        this.base = base;
    }

    /**
     * Mounts backing on mountPoint; base must hold the same tree as backing (a copy of it). A fault
     * "nth:errno" fails the nth call a java process makes (see powercutfs.c).
     */
    static PowerCutFs mount(Path backing, Path base, Path mountPoint, Path work, Optional<String> fault)
            throws Exception {
        Path binary = binary();
        Files.createDirectories(work);
        Map<Long, String> inodes = new HashMap<>();
        try (Stream<Path> walk = Files.walk(backing)) {
            for (Path p : walk.toList()) {
                inodes.put(
                        (Long) Files.getAttribute(p, "unix:ino", LinkOption.NOFOLLOW_LINKS),
                        backing.relativize(p).toString());
            }
        }
        List<String> command = new ArrayList<>(List.of(
                binary.toString(),
                backing.toString(),
                mountPoint.toString(),
                work.resolve("log").toString(),
                work.resolve("data").toString()));
        fault.ifPresent(command::add);
        command.addAll(List.of("--", "-o", "fsname=powercut"));
        Process daemon = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(work.resolve("daemon.out").toFile())
                .start();
        try {
            Poll.untilTrue(Duration.ofSeconds(20), Duration.ofMillis(20), "powercutfs mounted at " + mountPoint, () -> {
                if (!daemon.isAlive()) {
                    fail("powercutfs exited " + daemon.exitValue() + ": "
                            + Files.readString(work.resolve("daemon.out")));
                }
                return isMounted(mountPoint);
            });
        } catch (AssertionError e) {
            daemon.destroyForcibly();
            throw e;
        }
        return new PowerCutFs(backing, mountPoint, work, daemon, inodes, base);
    }

    Path mountPoint() {
        return mountPoint;
    }

    /** Lines logged so far: a cut point "after everything done until now". */
    int mark() throws IOException {
        try (Stream<String> lines = Files.lines(work.resolve("log"))) {
            return (int) lines.count();
        }
    }

    /** What was done, for {@link PowerCut}; read after {@link #close()}. */
    PowerCut log() throws IOException {
        if (mounted) throw new IllegalStateException("unmount first");
        return PowerCut.parse(Files.readAllLines(work.resolve("log")), work.resolve("data"), baseInodes, base);
    }

    @Override
    public void close() throws Exception {
        if (!mounted) return;
        try {
            // busy while something (a dying etcd) still has a file open
            Poll.untilTrue(Duration.ofSeconds(30), Duration.ofMillis(100), "umount " + mountPoint, () -> {
                Process umount = new ProcessBuilder("umount", mountPoint.toString())
                        .redirectErrorStream(true)
                        .start();
                String out = new String(umount.getInputStream().readAllBytes());
                if (umount.waitFor() != 0) throw new IllegalStateException(out);
                return true;
            });
            mounted = false;
            // a mount namespace made while the mount existed (an `ip netns exec`, a container started on this
            // machine) holds a copy of it, so the kernel keeps the file system and the daemon serves on: the umount
            // here is done, and every call was logged and passed through to the backing dir when it returned. A copy
            // seen at its path ends the wait after a short grace; a container's copy outside its root is not seen
            // there, so any other namespace is taken as one after the full wait; with none at all it is a hang.
            boolean seen = namespacesHolding(mountPoint) > 0;
            if (!daemon.waitFor(seen ? 2 : 30, TimeUnit.SECONDS)) {
                long others = otherMountNamespaces();
                if (others == 0) fail("powercutfs did not exit after umount");
                System.out.println("[powercutfs] still serving " + mountPoint + " after its umount: " + others
                        + " other mount namespaces on this machine may hold a copy"
                        + (seen ? " (one at its path)" : "") + "; stopped");
            }
        } finally {
            daemon.destroyForcibly();
            daemon.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Mount namespaces other than this process's that still mount {@code point} (a copy made while it was mounted). */
    private static long namespacesHolding(Path point) throws IOException {
        Path own = Files.readSymbolicLink(Path.of("/proc/self/ns/mnt"));
        String wanted = " " + point.toAbsolutePath() + " ";
        java.util.Map<Path, Path> onePerNamespace = new java.util.HashMap<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            procs.filter(p -> p.getFileName().toString().matches("\\d+")).forEach(p -> {
                try {
                    Path ns = Files.readSymbolicLink(p.resolve("ns/mnt"));
                    if (!ns.equals(own)) onePerNamespace.putIfAbsent(ns, p);
                } catch (IOException | SecurityException e) {
                    // gone meanwhile
                }
            });
        }
        return onePerNamespace.values().stream()
                .filter(p -> {
                    try (Stream<String> lines = Files.lines(p.resolve("mountinfo"))) {
                        return lines.anyMatch(l -> l.contains(wanted));
                    } catch (IOException | java.io.UncheckedIOException | SecurityException e) {
                        return false; // gone meanwhile
                    }
                })
                .count();
    }

    /** Mount namespaces other than this process's, as /proc shows them (processes of another namespace). */
    private static long otherMountNamespaces() throws IOException {
        Path own = Files.readSymbolicLink(Path.of("/proc/self/ns/mnt"));
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            return procs.filter(p -> p.getFileName().toString().matches("\\d+"))
                    .map(p -> {
                        try {
                            return Files.readSymbolicLink(p.resolve("ns/mnt"));
                        } catch (IOException | SecurityException e) {
                            return own; // gone meanwhile
                        }
                    })
                    .filter(ns -> !ns.equals(own))
                    .distinct()
                    .count();
        }
    }

    private static boolean isMounted(Path point) throws IOException {
        String wanted = " " + point.toAbsolutePath() + " ";
        return Files.readAllLines(Path.of("/proc/self/mountinfo")).stream()
                .anyMatch(l -> l.contains(wanted) && l.contains(" fuse"));
    }

    /** target/powercutfs, compiled when missing or older than its source. */
    static synchronized Path binary() throws Exception {
        if ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid") != 0) abort("FUSE mounts need root here");
        if (!Files.exists(Path.of("/dev/fuse"))) abort("no /dev/fuse");
        Path binary = Path.of(System.getProperty("basedir", "."), "target/powercutfs");
        if (Files.isExecutable(binary)
                && Files.getLastModifiedTime(binary).compareTo(Files.getLastModifiedTime(SOURCE)) > 0) {
            return binary;
        }
        Files.createDirectories(binary.getParent());
        String flags;
        try {
            Process pkg = new ProcessBuilder("pkg-config", "fuse3", "--cflags", "--libs")
                    .redirectErrorStream(true)
                    .start();
            flags = new String(pkg.getInputStream().readAllBytes()).trim();
            if (pkg.waitFor() != 0) abort("libfuse3-dev is not installed (pkg-config fuse3: " + flags + ")");
        } catch (IOException e) {
            abort("pkg-config cannot run here: " + e.getMessage());
            throw e;
        }
        List<String> gcc = new ArrayList<>(List.of("gcc", "-Wall", "-O2", "-o", binary.toString(), SOURCE.toString()));
        gcc.addAll(List.of(flags.split("\\s+")));
        Process cc;
        try {
            cc = new ProcessBuilder(gcc).redirectErrorStream(true).start();
        } catch (IOException e) {
            abort("gcc cannot run here: " + e.getMessage());
            throw e;
        }
        String out = new String(cc.getInputStream().readAllBytes());
        if (cc.waitFor() != 0) fail("gcc " + SOURCE + ": " + out);
        return binary;
    }
}
