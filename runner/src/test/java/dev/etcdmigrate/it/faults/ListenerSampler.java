package dev.etcdmigrate.it.faults;

import dev.etcdmigrate.it.support.RunnerProcess;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Watches the runner and every live descendant while the runner runs: each poll maps their open socket
 * fds (/proc/PID/fd -> socket:[inode]) to the listening sockets of /proc/net/tcp{,6}, and remembers
 * every listener seen, with the command that held it.
 */
final class ListenerSampler implements AutoCloseable {

    private static final Pattern SOCKET = Pattern.compile("socket:\\[(\\d+)]");
    private static final long POLL_MILLIS = 5;

    /** A listening socket held by a process of the runner's tree. */
    record Listener(ProcNetTcp.Socket socket, long pid, String command) {
        @Override
        public String toString() {
            return socket + " (pid " + pid + ", " + command + ")";
        }
    }

    private final ProcessHandle runner;
    private final Set<String> seen = new LinkedHashSet<>();
    private final List<Listener> listeners = new ArrayList<>();
    private final Thread thread;
    private volatile boolean stopped;
    private int polls;

    private ListenerSampler(ProcessHandle runner) {
        this.runner = runner;
        this.thread = Thread.ofPlatform()
                .daemon()
                .name("listener-sampler-" + runner.pid())
                .start(this::loop);
    }

    static ListenerSampler watch(RunnerProcess runner) {
        return new ListenerSampler(runner.process().toHandle());
    }

    private void loop() {
        while (!stopped && runner.isAlive()) {
            sampleOnce();
            try {
                // the wait for the runner's exit is also the poll interval
                runner.onExit().get(POLL_MILLIS, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                // next poll
            } catch (InterruptedException e) {
                return;
            } catch (java.util.concurrent.ExecutionException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private void sampleOnce() {
        Map<Long, ProcessHandle> byInode = new HashMap<>();
        List<ProcessHandle> tree = new ArrayList<>();
        tree.add(runner);
        runner.descendants().forEach(tree::add);
        for (ProcessHandle p : tree) {
            for (long inode : socketInodes(p.pid())) byInode.put(inode, p);
        }
        if (byInode.isEmpty()) {
            count();
            return;
        }
        for (ProcNetTcp.Socket s : ProcNetTcp.read()) {
            ProcessHandle holder = byInode.get(s.inode());
            if (s.listening() && holder != null) {
                Listener l = new Listener(
                        s,
                        holder.pid(),
                        holder.info()
                                .command()
                                .map(c -> Path.of(c).getFileName().toString())
                                .orElse("?"));
                synchronized (this) {
                    if (seen.add(s + "@" + l.pid())) listeners.add(l);
                }
            }
        }
        count();
    }

    private synchronized void count() {
        polls++;
    }

    /** The socket inodes among a process's fds; none if it is gone or not ours to read. */
    private static List<Long> socketInodes(long pid) {
        List<Long> inodes = new ArrayList<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "fd"))) {
            for (Path fd : fds) {
                try {
                    Matcher m = SOCKET.matcher(Files.readSymbolicLink(fd).toString());
                    if (m.matches()) inodes.add(Long.parseLong(m.group(1)));
                } catch (IOException closedMeanwhile) {
                    // the fd was closed between listing and reading it
                }
            }
        } catch (IOException | SecurityException exited) {
            // the process exited between listing the tree and reading its fds
        }
        return inodes;
    }

    synchronized List<Listener> listeners() {
        return List.copyOf(listeners);
    }

    synchronized List<Listener> nonLoopback() {
        return listeners.stream().filter(l -> !l.socket().loopback()).toList();
    }

    synchronized int polls() {
        return polls;
    }

    @Override
    public void close() throws InterruptedException {
        stopped = true;
        thread.join(10_000);
    }
}
