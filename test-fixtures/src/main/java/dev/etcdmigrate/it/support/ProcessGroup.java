package dev.etcdmigrate.it.support;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;

/**
 * A process group read from /proc/PID/stat and killed as a whole with kill(2) on its negated id: the
 * kernel delivers a group signal atomically with respect to fork, so no child started in the same
 * instant escapes, as when a container's PID 1 dies.
 */
final class ProcessGroup {

    private ProcessGroup() {}

    /** The process group of a live process; empty once it is gone. */
    static OptionalLong of(long pid) {
        return stat(pid).map(f -> OptionalLong.of(Long.parseLong(f[2]))).orElse(OptionalLong.empty());
    }

    /** SIGKILL to every member, then waits until none is left running (zombies hold nothing). */
    static void killAndAwait(long pgid, Duration deadline) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-KILL", "--", "-" + pgid)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start()
                .waitFor(); // fails harmlessly on an empty group
        Poll.untilTrue(deadline, Duration.ofMillis(10), "group " + pgid + " gone after SIGKILL", () -> {
            List<Long> left = running(pgid);
            if (!left.isEmpty()) throw new IllegalStateException("processes " + left + " still run");
            return true;
        });
    }

    /** Members of the group that are not zombies. */
    static List<Long> running(long pgid) throws IOException {
        List<Long> members = new ArrayList<>();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(
                Path.of("/proc"), p -> p.getFileName().toString().matches("\\d+"))) {
            for (Path p : procs) {
                long pid = Long.parseLong(p.getFileName().toString());
                stat(pid)
                        .filter(f -> Long.parseLong(f[2]) == pgid && !f[0].equals("Z"))
                        .ifPresent(f -> members.add(pid));
            }
        }
        return members;
    }

    /** The fields of /proc/PID/stat after "(comm)": state, ppid, pgrp, ... */
    private static java.util.Optional<String[]> stat(long pid) {
        try {
            String s = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return java.util.Optional.of(s.substring(s.lastIndexOf(')') + 2).split(" "));
        } catch (IOException gone) {
            return java.util.Optional.empty();
        }
    }
}
