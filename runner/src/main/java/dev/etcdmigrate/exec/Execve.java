package dev.etcdmigrate.exec;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.FutureTask;

/**
 * Replaces the JVM with another program through execve(2) (java.lang.foreign): same PID, so etcd
 * becomes the container's PID 1 and receives its signals. Descriptors above stderr are marked
 * close-on-exec first (the JVM's jar and module files would otherwise leak into etcd).
 */
public final class Execve {

    private static final int CLOSE_RANGE_CLOEXEC = 1 << 2;
    private static final int SIGINT = 2;
    private static final int SIGTERM = 15;

    private final MethodHandle execve;
    private final Optional<MethodHandle> closeRange;
    private final MethodHandle signal;
    private final MemoryLayout stateLayout;
    private final VarHandle errnoHandle;

    private Execve(
            MethodHandle execve,
            Optional<MethodHandle> closeRange,
            MethodHandle signal,
            MemoryLayout stateLayout,
            VarHandle errnoHandle) {
        this.execve = execve;
        this.closeRange = closeRange;
        this.signal = signal;
        this.stateLayout = stateLayout;
        this.errnoHandle = errnoHandle;
    }

    private static FutureTask<Execve> ahead;

    /**
     * {@link #link} on a thread of its own, started once per process. Its stubs are spun at run time (the AOT cache
     * cannot keep them): 30-50 ms of CPU that a restart's reads and checks overlap, and the exec waits for whatever
     * of it is left, so it starts as soon as the command is known to be a migration.
     */
    public static synchronized FutureTask<Execve> linkAhead() {
        if (ahead == null) {
            ahead = new FutureTask<>(Execve::link);
            Thread.ofPlatform().name("link-execve").daemon(true).start(ahead);
        }
        return ahead;
    }

    /** Looks up execve and close_range in libc and marshals once (the costly parts, done before exec is due). */
    public static Execve link() throws ExecFailedException {
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        MemoryLayout stateLayout = Linker.Option.captureStateLayout();
        VarHandle errnoHandle = stateLayout.varHandle(MemoryLayout.PathElement.groupElement("errno"));
        MethodHandle execve = linker.downcallHandle(
                libc.find("execve").orElseThrow(() -> new ExecFailedException("libc has no execve")),
                FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS),
                Linker.Option.captureCallState("errno"));
        Optional<MethodHandle> closeRange = libc.find("close_range")
                .map(symbol ->
                        linker.downcallHandle(symbol, FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT)));
        MethodHandle signal = linker.downcallHandle(
                libc.find("signal").orElseThrow(() -> new ExecFailedException("libc has no signal")),
                FunctionDescriptor.of(ADDRESS, JAVA_INT, ADDRESS));
        // the memory exec marshals its arguments into, once here: the classes behind it (jdk.internal.foreign's
        // sessions, segment factories, var handles) would be 20-50 ms of loading between the exec event and execve
        Execve linked = new Execve(execve, closeRange, signal, stateLayout, errnoHandle);
        try (Arena arena = Arena.ofConfined()) {
            arena.allocateFrom("etcd");
            cStringArray(arena, List.of("etcd", "--name=x"));
            MemorySegment state = arena.allocate(stateLayout);
            // Each handle's first call through its one call site below spins invokers and initialises its stub
            // class (5-15 ms on the main thread after the exec event, class+init log). Called here with
            // arguments the kernel and libc refuse before doing anything: signal 0 (EINVAL), an empty close
            // range (EINVAL), an empty path (ENOENT).
            linked.signalCall(0, MemorySegment.NULL);
            linked.closeRangeCall(1, 0, CLOSE_RANGE_CLOEXEC);
            MemorySegment none = arena.allocateFrom("");
            int refused =
                    linked.execveCall(state, none, cStringArray(arena, List.of()), cStringArray(arena, List.of()));
            int errno = (int) errnoHandle.get(state, 0L);
            if (refused != -1) throw new ExecFailedException("execve(\"\") returned " + refused + ", errno " + errno);
        } catch (ExecFailedException e) {
            throw e;
        } catch (Throwable t) {
            throw new ExecFailedException("libc's execve, close_range or signal could not be called: " + t);
        }
        return linked;
    }

    // One call site per handle: the warm-up in link() and the real calls share them (see there).
    private MemorySegment signalCall(int signum, MemorySegment handler) throws Throwable {
        return (MemorySegment) signal.invokeExact(signum, handler);
    }

    private void closeRangeCall(int first, int last, int flags) throws Throwable {
        if (closeRange.isPresent()) {
            int ignored = (int) closeRange.get().invokeExact(first, last, flags);
        }
    }

    private int execveCall(MemorySegment state, MemorySegment path, MemorySegment args, MemorySegment envp)
            throws Throwable {
        return (int) execve.invokeExact(state, path, args, envp);
    }

    /**
     * From here on SIGTERM and SIGINT kill this process at once, as they would kill etcd: the JVM's own
     * handler would take a signal that arrives just before execve and then lose it (a pod that is told to
     * stop while the runner becomes etcd would keep running). Nothing is left to clean up at this point.
     */
    public void defaultSignals() throws ExecFailedException {
        try {
            signalCall(SIGTERM, MemorySegment.NULL); // SIG_DFL
            signalCall(SIGINT, MemorySegment.NULL);
        } catch (Throwable t) {
            throw new ExecFailedException("signal(2) could not be called: " + t);
        }
    }

    /** Returns only by throwing: on success this process is the new program. */
    public void exec(Path program, List<String> argv, Map<String, String> environment) throws ExecFailedException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment path = arena.allocateFrom(program.toString());
            MemorySegment args = cStringArray(arena, argv);
            // a plain loop and StringBuilder: a lambda or string concatenation here is a class spun at run time
            // (the AOT cache cannot keep it), between the exec event and execve
            List<String> env = new ArrayList<>(environment.size());
            for (Map.Entry<String, String> e : environment.entrySet())
                env.add(new StringBuilder(e.getKey())
                        .append('=')
                        .append(e.getValue())
                        .toString());
            MemorySegment envp = cStringArray(arena, env);
            MemorySegment state = arena.allocate(stateLayout);
            System.out.flush();
            System.err.flush();
            closeRangeCall(3, -1, CLOSE_RANGE_CLOEXEC); // -1 is ~0U
            int result = execveCall(state, path, args, envp);
            int errno = (int) errnoHandle.get(state, 0L);
            throw new ExecFailedException(
                    "execve(" + program + ") failed with errno " + errno + " (result " + result + ")");
        } catch (ExecFailedException e) {
            throw e;
        } catch (Throwable t) {
            throw new ExecFailedException("execve(" + program + ") could not be called: " + t);
        }
    }

    private static MemorySegment cStringArray(Arena arena, List<String> strings) {
        MemorySegment array = arena.allocate(ADDRESS, strings.size() + 1L);
        for (int i = 0; i < strings.size(); i++) {
            array.setAtIndex(ADDRESS, i, arena.allocateFrom(strings.get(i)));
        }
        array.setAtIndex(ADDRESS, strings.size(), MemorySegment.NULL);
        return array;
    }

    public static final class ExecFailedException extends dev.etcdmigrate.error.FailedException {
        public ExecFailedException(String message) {
            super(message);
        }
    }
}
