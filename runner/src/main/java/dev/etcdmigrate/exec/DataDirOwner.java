package dev.etcdmigrate.exec;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.etcdmigrate.event.RunEvent;
import dev.etcdmigrate.log.Log;
import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

/**
 * Runs the migration (and the etcd it becomes) as the owner of the data dir. The image starts as root,
 * which a static pod's root-owned data dir needs; a data dir that belongs to another uid keeps that
 * owner for every file the runner and its etcd write, and etcd does not run as root needlessly. glibc's
 * setuid/setgid apply to every thread of the process, so the JVM's threads switch too.
 */
public final class DataDirOwner {

    private DataDirOwner() {}

    /** Switches to the data dir's uid/gid when running as root and it belongs to someone else. */
    public static void become(Path dataDir, Log log) throws IOException {
        if (!Files.isDirectory(dataDir, LinkOption.NOFOLLOW_LINKS)) {
            return; // a missing dir is created by whoever runs the runner
        }
        int uid = (Integer) Files.getAttribute(dataDir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        int gid = (Integer) Files.getAttribute(dataDir, "unix:gid", LinkOption.NOFOLLOW_LINKS);
        if (uid == 0) {
            return; // root's data dir (a static pod's): nothing to switch, and no native call on this path
        }
        Linker linker = Linker.nativeLinker();
        SymbolLookup libc = linker.defaultLookup();
        try {
            MethodHandle geteuid = handle(linker, libc, "geteuid", FunctionDescriptor.of(JAVA_INT));
            int euid = (int) geteuid.invokeExact();
            if (euid != 0) {
                return;
            }
            int groups = (int) handle(linker, libc, "setgroups", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS))
                    .invokeExact(0L, MemorySegment.NULL);
            int setgid = (int) handle(linker, libc, "setgid", FunctionDescriptor.of(JAVA_INT, JAVA_INT))
                    .invokeExact(gid);
            int setuid = (int) handle(linker, libc, "setuid", FunctionDescriptor.of(JAVA_INT, JAVA_INT))
                    .invokeExact(uid);
            int now = (int) geteuid.invokeExact();
            if (groups != 0 || setgid != 0 || setuid != 0 || now != uid) {
                throw new IOException("could not switch to uid " + uid + " / gid " + gid + ", the owner of " + dataDir);
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException("could not switch to the owner of " + dataDir + ": " + t, t);
        }
        log.emit(new RunEvent.OwnerAdopted(dataDir.toString(), uid, gid));
    }

    private static MethodHandle handle(Linker linker, SymbolLookup libc, String name, FunctionDescriptor descriptor) {
        return linker.downcallHandle(
                libc.find(name).orElseThrow(() -> new IllegalStateException("libc has no " + name)), descriptor);
    }
}
