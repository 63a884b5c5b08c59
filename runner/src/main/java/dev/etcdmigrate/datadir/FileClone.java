package dev.etcdmigrate.datadir;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Copy-on-write file clones (reflinks) through the FICLONE ioctl, called with java.lang.foreign: on
 * XFS, Btrfs and other file systems that share extents, a backup of a member dir costs no data blocks
 * and no time until etcd writes to the original. Where the file system cannot (ext4, tmpfs, across
 * file systems) {@link #clone} says so and the caller copies.
 */
public final class FileClone {

    /** _IOW(0x94, 9, int) from linux/fs.h. */
    private static final long FICLONE = 0x40049409L;

    private static final int O_RDONLY = 0;
    private static final int O_WRONLY = 1;
    private static final int O_CREAT = 0100;
    private static final int O_EXCL = 0200;
    private static final int O_CLOEXEC = 02000000;
    private static final int OWNER_READ_WRITE = 0600;
    /** errno values meaning "this file system (pair) cannot clone": EXDEV, EINVAL, ENOTTY, EOPNOTSUPP. */
    private static final java.util.Set<Integer> UNSUPPORTED = java.util.Set.of(18, 22, 25, 95);

    private static volatile Native natives;

    private record Native(
            MethodHandle open, MethodHandle ioctl, MethodHandle close, MemoryLayout state, VarHandle errno) {}

    private FileClone() {}

    private static Native natives() {
        Native n = natives;
        if (n == null) {
            Linker linker = Linker.nativeLinker();
            SymbolLookup libc = linker.defaultLookup();
            MemoryLayout state = Linker.Option.captureStateLayout();
            Linker.Option errno = Linker.Option.captureCallState("errno");
            n = new Native(
                    linker.downcallHandle(
                            libc.find("open").orElseThrow(),
                            FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
                            Linker.Option.firstVariadicArg(2),
                            errno),
                    linker.downcallHandle(
                            libc.find("ioctl").orElseThrow(),
                            FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_INT),
                            Linker.Option.firstVariadicArg(2),
                            errno),
                    linker.downcallHandle(libc.find("close").orElseThrow(), FunctionDescriptor.of(JAVA_INT, JAVA_INT)),
                    state,
                    state.varHandle(MemoryLayout.PathElement.groupElement("errno")));
            natives = n;
        }
        return n;
    }

    /** "errno N (text)" for the errors an operator meets on a disk (the text as Java's own file errors word it). */
    static String errnoText(int errno) {
        String text = switch (errno) {
            case 2 -> "No such file or directory";
            case 5 -> "Input/output error";
            case 13 -> "Permission denied";
            case 28 -> "No space left on device";
            case 30 -> "Read-only file system";
            case 122 -> "Disk quota exceeded";
            default -> null;
        };
        return "errno " + errno + (text == null ? "" : " (" + text + ")");
    }

    /** Names of probe files (Backups.recover deletes one a crash left in the data dir). */
    static final String PROBE_PREFIX = ".clone-probe";

    /** Whether files in {@code dir} can be cloned within it: a one-byte probe file, cloned, both deleted. */
    public static boolean supported(Path dir) throws IOException {
        // fixed names, the same in every run (the lock keeps runners apart; Backups.recover removes what a crash
        // left): a fault or a trace names the same file in the next run
        Path probe = dir.resolve(PROBE_PREFIX);
        Path copy = dir.resolve(PROBE_PREFIX + ".copy");
        try {
            Files.deleteIfExists(copy);
            Files.deleteIfExists(probe);
            try {
                try (var out = Files.newByteChannel(
                        probe,
                        Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                        PosixFilePermissions.asFileAttribute(Permissions.FILE))) {
                    out.write(ByteBuffer.wrap(new byte[] {1}));
                }
                boolean cloned = clone(probe, copy);
                Files.deleteIfExists(copy);
                return cloned;
            } finally {
                Files.deleteIfExists(probe);
            }
        } catch (IOException e) {
            // the JDK's write and delete errors say only "Input/output error": name the probe
            throw new IOException("file-clone probe " + probe + ": " + e.getMessage(), e);
        }
    }

    /**
     * Creates {@code to} (which must not exist, mode 0600) as a clone of {@code from}. Returns false, leaving
     * no {@code to} behind, when the file system cannot clone; fails on any other error.
     */
    public static boolean clone(Path from, Path to) throws IOException {
        Native n = natives();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(n.state());
            int src = (int) n.open().invokeExact(state, arena.allocateFrom(from.toString()), O_RDONLY | O_CLOEXEC, 0);
            if (src < 0)
                throw new IOException("open(" + from + ") failed: "
                        + errnoText((int) n.errno().get(state, 0L)));
            try {
                int dst = (int) n.open()
                        .invokeExact(
                                state,
                                arena.allocateFrom(to.toString()),
                                O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                                OWNER_READ_WRITE);
                if (dst < 0)
                    throw new IOException("open(" + to + ") failed: "
                            + errnoText((int) n.errno().get(state, 0L)));
                int result;
                int errno;
                try {
                    result = (int) n.ioctl().invokeExact(state, dst, FICLONE, src);
                    errno = (int) n.errno().get(state, 0L);
                } finally {
                    int ignored = (int) n.close().invokeExact(dst);
                }
                if (result == 0) return true;
                Files.delete(to);
                if (UNSUPPORTED.contains(errno)) return false;
                throw new IOException("FICLONE " + from + " -> " + to + " failed: " + errnoText(errno));
            } finally {
                int ignored = (int) n.close().invokeExact(src);
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("FICLONE could not be called: " + t, t);
        }
    }
}
