package dev.etcdmigrate.it.nemesis;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.it.cluster.ClusterLab;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Random;

/**
 * The faults of the nemesis on a {@link ClusterLab} with namespaces, each applied to a member's host and undone by
 * closing what it returns (and by {@link #close()} for anything left): every fault is written to the history with
 * its span, so that the checks ({@link NemesisHistory}) judge the runners against what the nemesis alone did, never
 * against what the members answered.
 * <ul>
 *   <li>{@link Kind#PEER_CUT}: every packet to and from the member's peer port on its link dropped (raft cut both
 *       ways; clients still reach it, and it answers them locally);
 *   <li>{@link Kind#PEER_DIAL_OUT_CUT} and {@link Kind#PEER_DIAL_IN_CUT}: one way only, at the connection: the member
 *       cannot open connections to the others' peer ports, or nobody can open one to its own (raft's streams are
 *       dialled by the receiving side, so each cut silences one direction of the streams);
 *   <li>{@link Kind#CLIENT_CUT}: nobody reaches its client port from the link (its peers still do raft with it);
 *   <li>{@link Kind#STALL}: SIGSTOP to every etcd of the member (serving, a step's private etcd, the exec'd one),
 *       SIGCONT at the end;
 *   <li>{@link Kind#CPU_LOAD}: busy loops in the host's namespace, bounded by {@code timeout}, so every answer on the
 *       machine comes slower than a client's timeout;
 *   <li>{@link Kind#KILL}: SIGKILL of the member's runner and everything it started (its pod dies), then the kubelet's
 *       restart with the same target ({@link Pods});
 *   <li>{@link Kind#CERT_EXPIRED}: the member's certificate (peer and client, one file as in the lab) replaced by one
 *       that expires a few seconds later; once it has, the host's peer connections are closed, so every new handshake
 *       with it fails both ways (etcd reads its certificate files at each handshake); renewed at the end;
 *   <li>{@link Kind#REPLACED}: the member replaced as kubeadm replaces a node: its pod killed, the member removed
 *       from the cluster, its data dir emptied, the member added again and its pod started on the empty dir with
 *       {@code --initial-cluster-state=existing} (as kubeadm join writes it) and the same target.
 * </ul>
 */
final class Nemesis implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();

    enum Kind {
        PEER_CUT(true),
        PEER_DIAL_OUT_CUT(false),
        PEER_DIAL_IN_CUT(false),
        CLIENT_CUT(false),
        STALL(true),
        CPU_LOAD(false),
        KILL(true),
        CERT_EXPIRED(true),
        REPLACED(true);

        /** Whether the member is certainly cut from every other member's raft while it lasts. */
        final boolean disconnects;

        Kind(boolean disconnects) {
            this.disconnects = disconnects;
        }
    }

    /** A fault: its kind, its victim, why then (the moment), from and to (epoch millis; to MAX while in place). */
    record Fault(Kind kind, int host, String detail, String trigger, long fromMillis, long toMillis) {
        boolean activeAt(long at, long startSlack) {
            return fromMillis <= at - startSlack && at <= toMillis;
        }

        Fault endedAt(long millis) {
            return new Fault(kind, host, detail, trigger, fromMillis, millis);
        }

        @Override
        public String toString() {
            return kind + " on m" + host + (detail.isEmpty() ? "" : " (" + detail + ")") + " for "
                    + (toMillis == Long.MAX_VALUE ? "(in place)" : (toMillis - fromMillis) + " ms") + ", when "
                    + trigger;
        }
    }

    /** A fault in place: close() undoes it and ends its span in the history. */
    interface Applied extends AutoCloseable {
        /** When it was applied (epoch millis). */
        long since();

        @Override
        void close() throws Exception;
    }

    private final ClusterLab lab;
    private final List<Fault> history = Collections.synchronizedList(new ArrayList<>());
    private final List<Applied> inPlace = Collections.synchronizedList(new ArrayList<>());

    Nemesis(ClusterLab lab) {
        this.lab = lab;
    }

    /** Every fault applied so far, in the order applied (a copy). */
    List<Fault> history() {
        synchronized (history) {
            return List.copyOf(history);
        }
    }

    /** Forgets the faults of the rollouts checked so far (their spans are in their own reports). */
    void clearHistory() {
        history.clear();
    }

    Applied peerCut(Member m, String trigger) throws Exception {
        String port = String.valueOf(m.ports().peer());
        return rules(
                Kind.PEER_CUT,
                m,
                trigger,
                List.of(
                        List.of("INPUT", "-i", "eth0", "-p", "tcp", "--dport", port, "-j", "DROP"),
                        List.of("INPUT", "-i", "eth0", "-p", "tcp", "--sport", port, "-j", "DROP"),
                        List.of("OUTPUT", "-o", "eth0", "-p", "tcp", "--dport", port, "-j", "DROP"),
                        List.of("OUTPUT", "-o", "eth0", "-p", "tcp", "--sport", port, "-j", "DROP")),
                true);
    }

    /**
     * The member cannot open a connection to the others' peer ports (its established ones are closed). Only the
     * opening segments are dropped: the resets that close its established connections must reach the peers, or each
     * peer keeps writing raft's messages into a connection nobody reads, and the member is cut off both ways until TCP
     * gives up, more than the fault claims.
     */
    Applied peerDialOutCut(Member m, String trigger) throws Exception {
        String port = String.valueOf(m.ports().peer());
        return rules(
                Kind.PEER_DIAL_OUT_CUT,
                m,
                trigger,
                List.of(List.of("OUTPUT", "-o", "eth0", "-p", "tcp", "--dport", port, "--syn", "-j", "DROP")),
                true);
    }

    /** Nobody can open a connection to the member's peer port (the established ones are closed, as above). */
    Applied peerDialInCut(Member m, String trigger) throws Exception {
        String port = String.valueOf(m.ports().peer());
        return rules(
                Kind.PEER_DIAL_IN_CUT,
                m,
                trigger,
                List.of(List.of("INPUT", "-i", "eth0", "-p", "tcp", "--dport", port, "--syn", "-j", "DROP")),
                true);
    }

    /** Nobody on the link reaches the member's client port (the clients' host, the other runners). */
    Applied clientCut(Member m, String trigger) throws Exception {
        String port = String.valueOf(m.ports().client());
        return rules(
                Kind.CLIENT_CUT,
                m,
                trigger,
                List.of(
                        List.of("INPUT", "-i", "eth0", "-p", "tcp", "--dport", port, "-j", "DROP"),
                        List.of("OUTPUT", "-o", "eth0", "-p", "tcp", "--sport", port, "-j", "DROP")),
                false);
    }

    /** SIGSTOP to every etcd process on the member's data dir; SIGCONT to the same processes when closed. */
    Applied stall(Member m, String trigger) throws Exception {
        List<ProcessHandle> stopped = etcdsOf(m);
        for (ProcessHandle p : stopped) signal("-STOP", p);
        return record(Kind.STALL, m, stopped.size() + " etcd process(es)", trigger, () -> {
            for (ProcessHandle p : stopped) if (p.isAlive()) signal("-CONT", p);
        });
    }

    /** {@code loops} busy loops in the member's namespace, each ended by timeout after {@code bound} at the latest. */
    Applied cpuLoad(Member m, int loops, Duration bound, String trigger) throws Exception {
        List<Process> busy = new ArrayList<>();
        try {
            for (int i = 0; i < loops; i++) {
                List<String> argv = new ArrayList<>(lab.network().exec(m.host()));
                argv.addAll(List.of(
                        "timeout",
                        "--signal=KILL",
                        String.valueOf(Math.max(1, bound.toSeconds())),
                        "sh",
                        "-c",
                        "while :; do :; done"));
                busy.add(new ProcessBuilder(argv)
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .start());
            }
        } catch (IOException | RuntimeException e) {
            for (Process p : busy) p.destroyForcibly().waitFor();
            throw e;
        }
        return record(Kind.CPU_LOAD, m, loops + " busy loops", trigger, () -> {
            for (Process p : busy) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly().waitFor();
            }
        });
    }

    /**
     * The member's pod killed: SIGKILL to its runner and everything it started, until no process holds its data
     * dir; the kubelet then starts it again with the same target. The span ends when it serves again (the caller
     * closes what this returns then).
     */
    Applied kill(Pods pods, Member m, String trigger) throws Exception {
        pods.kill(m);
        pods.restart(m);
        return record(Kind.KILL, m, "", trigger, () -> {});
    }

    /**
     * The member's certificate replaced by one that expires {@code expiresIn} from now; returns once it has expired
     * and the host's peer connections are closed. The span starts then; closing renews it (a fresh certificate, the
     * same files).
     */
    Applied expireCertificate(Member m, Duration expiresIn, String trigger) throws Exception {
        java.util.Date notAfter = java.util.Date.from(java.time.Instant.now().plus(expiresIn));
        List<String> addresses = List.of(lab.network().address(m.host()));
        lab.certificates().issue(m.name(), addresses, List.of("localhost"), notAfter);
        try {
            long wait = notAfter.getTime() - System.currentTimeMillis() + 1_000;
            if (wait > 0) Thread.sleep(wait); // the certificate's own lifetime: it expires on the clock
            killSockets(m);
        } catch (Exception | Error e) {
            lab.certificates().issue(m.name(), addresses, List.of("localhost"));
            throw e;
        }
        return record(
                Kind.CERT_EXPIRED,
                m,
                "expired " + notAfter.toInstant(),
                trigger,
                () -> lab.certificates().issue(m.name(), addresses, List.of("localhost")));
    }

    /**
     * The member replaced (see {@link Kind#REPLACED}), through whichever other member answers (the others restart
     * for their own legs meanwhile); the span ends when the caller closes what this returns (once it serves again).
     * The removal and the addition are each asked again until the member list shows them, so that an answer lost
     * after the change committed neither fails the fault nor changes the membership twice.
     */
    Applied replace(Pods pods, Member m, List<Member> others, String trigger) throws Exception {
        pods.replacing(m);
        String[] removed = new String[1];
        Poll.untilTrue(Duration.ofMinutes(2), Duration.ofMillis(250), m.name() + " removed", () -> {
            for (Member through : others) {
                try {
                    Optional<String> id = lab.memberWithPeer(through, m.peerUrl());
                    if (id.isEmpty()) return true;
                    removed[0] = id.get();
                    lab.request(
                            "post", through.clientUrl(), "/v3/cluster/member/remove", "{\"ID\":\"" + id.get() + "\"}");
                } catch (IllegalStateException | IOException unanswered) {
                    // this one is down or lost the answer: the next one, or the next round, reads the list again
                }
            }
            return false;
        });
        try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(m.data())) {
            for (java.nio.file.Path f :
                    files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                if (!f.equals(m.data())) java.nio.file.Files.delete(f);
            }
        }
        Poll.untilTrue(Duration.ofMinutes(2), Duration.ofMillis(250), m.name() + " added again", () -> {
            for (Member through : others) {
                try {
                    if (lab.memberWithPeer(through, m.peerUrl()).isPresent()) return true;
                    lab.request(
                            "post",
                            through.clientUrl(),
                            "/v3/cluster/member/add",
                            "{\"peerURLs\":[\"" + m.peerUrl() + "\"]}");
                } catch (IllegalStateException | IOException unanswered) {
                    // as above
                }
            }
            return false;
        });
        // a member that has data ignores it: every pod started from now on may carry it
        lab.etcdFlags(List.of("--initial-cluster-state=existing"));
        pods.rejoin(m);
        return record(Kind.REPLACED, m, "removed " + removed[0] + ", added again empty", trigger, () -> {});
    }

    /** The etcd processes (etcd-<version>, not etcdctl or etcdutl, not the runner) running on the member's data. */
    static List<ProcessHandle> etcdsOf(Member m) {
        String data = m.data().toString();
        return ProcessHandle.allProcesses()
                .filter(p -> p.info()
                        .command()
                        .map(c -> c.substring(c.lastIndexOf('/') + 1).startsWith("etcd-"))
                        .orElse(false))
                .filter(p -> p.info()
                        .arguments()
                        .map(a -> String.join(" ", a).contains(data))
                        .orElse(false))
                .toList();
    }

    private static void signal(String signal, ProcessHandle p) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", signal, String.valueOf(p.pid()))
                .redirectErrorStream(true)
                .start();
        kill.getInputStream().readAllBytes();
        kill.waitFor(); // the process may have gone meanwhile: nothing to undo then
    }

    private Applied rules(Kind kind, Member m, String trigger, List<List<String>> rules, boolean killSockets)
            throws Exception {
        List<List<String>> added = new ArrayList<>();
        try {
            for (List<String> rule : rules) {
                List<String> add = new ArrayList<>(List.of("iptables", "-w", "-A"));
                add.addAll(rule);
                inHost(m.host(), add);
                added.add(rule);
            }
            // established connections would outlive a rule that only drops new ones: closed, as a broken link does
            if (killSockets) killSockets(m);
        } catch (Exception e) {
            deleteRules(m, added);
            throw e;
        }
        return record(kind, m, "", trigger, () -> deleteRules(m, added));
    }

    /** Closes the host's TCP connections on its peer port, both the ones it dialled and the ones dialled to it. */
    private void killSockets(Member m) throws Exception {
        String port = String.valueOf(m.ports().peer());
        List<String> argv = new ArrayList<>(List.of("ss", "-K", "-t", "state", "established"));
        argv.addAll(List.of("(", "dport", "=", ":" + port, "or", "sport", "=", ":" + port, ")"));
        inHostTolerant(m.host(), argv);
    }

    private void deleteRules(Member m, List<List<String>> rules) throws Exception {
        for (List<String> rule : rules) {
            List<String> del = new ArrayList<>(List.of("iptables", "-w", "-D"));
            del.addAll(rule);
            inHost(m.host(), del);
        }
    }

    private interface Undo {
        void run() throws Exception;
    }

    private Applied record(Kind kind, Member m, String detail, String trigger, Undo undo) {
        Fault fault = new Fault(kind, m.host(), detail, trigger, System.currentTimeMillis(), Long.MAX_VALUE);
        history.add(fault);
        Applied applied = new Applied() {
            private boolean done;

            @Override
            public long since() {
                return fault.fromMillis();
            }

            @Override
            public void close() throws Exception {
                synchronized (this) {
                    if (done) return;
                    done = true;
                }
                inPlace.remove(this);
                try {
                    undo.run();
                } finally {
                    synchronized (history) {
                        int i = history.indexOf(fault);
                        if (i >= 0) history.set(i, fault.endedAt(System.currentTimeMillis()));
                    }
                }
            }
        };
        inPlace.add(applied);
        return applied;
    }

    private void inHost(int host, List<String> command) throws IOException, InterruptedException {
        String out = run(host, command);
        if (out != null) throw new IOException(String.join(" ", command) + " failed: " + out);
    }

    private void inHostTolerant(int host, List<String> command) throws IOException, InterruptedException {
        run(host, command);
    }

    /** Null when it exited 0, else what it printed. */
    private String run(int host, List<String> command) throws IOException, InterruptedException {
        List<String> argv = new ArrayList<>(lab.network().exec(host));
        argv.addAll(command);
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return p.waitFor() == 0 ? null : out.trim();
    }

    /** Undoes every fault still in place (SIGCONT first, so that nothing stays stopped). */
    @Override
    public void close() throws Exception {
        Exception first = null;
        for (Applied a : List.copyOf(inPlace)) {
            try {
                a.close();
            } catch (Exception e) {
                if (first == null) first = e;
            }
        }
        if (first != null) throw first;
    }

    /** A member's raft view as its own client port tells it (Maintenance/Status): leader 0 or errors: none. */
    static boolean leaderless(ClusterLab lab, Member m) throws Exception {
        JsonNode status = JSON.readTree(lab.request("post", m.clientUrl(), "/v3/maintenance/status", "{}"));
        return status.path("leader").asLong(0) == 0 || !status.path("errors").isEmpty();
    }

    /**
     * The pods of the cluster: each member's current runner and the target its manifest names; the operator's edits
     * and the nemesis's kills replace them under one lock, so that neither stops a pod the other just started.
     */
    static final class Pods {
        private final ClusterLab lab;
        private final RunnerProcess[] current;
        private final Release[] target;
        /** When each pod was (re)started: the member is down from then until its runner serves or takes the record. */
        private final List<long[]> restarts = Collections.synchronizedList(new ArrayList<>());

        /** Pods the kubelet must not restart on its own: being killed or edited (their caller starts them again). */
        private final boolean[] held;

        /**
         * Members whose node is being replaced: their manifest may be edited meanwhile, but nothing starts their pod
         * until the replacement does (kubeadm join), with the target the last edit named. A pod started in between
         * would run on a data dir being emptied, or bootstrap a new member with the removed member's ID.
         */
        private final boolean[] replacing;

        private final int[] exits;
        private final long[] exitedAt;
        /** Each exit of a runner the kubelet restarted: who, its exit code and its diary's end (for a failure's reader). */
        private final List<String> exited = Collections.synchronizedList(new ArrayList<>());

        private volatile boolean closed;
        private final Thread kubelet;

        Pods(ClusterLab lab) {
            this.lab = lab;
            this.current = new RunnerProcess[lab.size()];
            this.target = new Release[lab.size()];
            this.held = new boolean[lab.size()];
            this.replacing = new boolean[lab.size()];
            this.exits = new int[lab.size()];
            this.exitedAt = new long[lab.size()];
            this.kubelet = Thread.ofPlatform().daemon().name("kubelet").start(this::restartExited);
        }

        /**
         * The kubelet's restartPolicy Always: a pod whose runner exited (a failed step, a refusal, an etcd that
         * died) is started again with the same target after a back-off of 10 s, doubling to at most 40 s per exit in
         * a row, as the kubelet's CrashLoopBackOff does (from 10 s to 5 minutes there).
         */
        private void restartExited() {
            while (!closed) {
                try {
                    Thread.sleep(250); // the kubelet's own sync period, not a synchronisation with the test
                } catch (InterruptedException stop) {
                    return;
                }
                for (int h = 0; h < current.length; h++) {
                    synchronized (this) {
                        RunnerProcess pod = current[h];
                        if (closed || held[h] || pod == null || pod.process().isAlive()) {
                            exitedAt[h] = 0;
                            continue;
                        }
                        long now = System.currentTimeMillis();
                        if (exitedAt[h] == 0) {
                            exitedAt[h] = now;
                            exits[h]++;
                            exited.add("m" + h + "'s runner exited "
                                    + pod.process().exitValue() + " (exit " + exits[h]
                                    + " in a row), restarted by the kubelet:\n" + tail(pod)
                                    + "\n  its etcd's last words:\n" + etcdTail(pod));
                        }
                        long backOff = Math.min(10_000L << Math.min(exits[h] - 1, 2), 40_000L);
                        if (now - exitedAt[h] < backOff) continue;
                        exitedAt[h] = 0;
                        try {
                            restart(lab.members().get(h));
                        } catch (Exception e) {
                            exited.add("m" + h + ": the kubelet could not restart it: " + e);
                        }
                    }
                }
            }
        }

        /** The kubelet's restarts after an exit, each with the runner's diary's end. */
        List<String> exited() {
            synchronized (exited) {
                return List.copyOf(exited);
            }
        }

        /** The kubelet stops: nothing is restarted once the lab tears the pods down. */
        void close() throws InterruptedException {
            closed = true;
            kubelet.interrupt();
            kubelet.join(Duration.ofSeconds(10));
        }

        synchronized RunnerProcess current(int host) {
            return current[host];
        }

        synchronized Release target(int host) {
            return target[host];
        }

        /** The first start of a member's pod, or the operator's edit: the old pod stopped (SIGTERM), the new one started. */
        void edit(Member m, Release to) throws Exception {
            RunnerProcess old;
            synchronized (this) {
                target[m.host()] = to;
                if (replacing[m.host()]) return; // the replacement starts it with this target (rejoin)
                old = current[m.host()];
                held[m.host()] = true;
            }
            if (old != null) {
                old.process().toHandle().destroy(); // the kubelet stops the old pod
                old.awaitExit(Duration.ofSeconds(60));
            }
            synchronized (this) {
                if (replacing[m.host()]) return; // replaced while the old pod stopped: rejoin starts it
                restart(m);
            }
        }

        /**
         * The kubelet starting the member's pod (again) with the target its manifest names. The kubelet runs one pod
         * per static manifest: a pod another path started meanwhile (an operator's edit beside a certificate
         * renewal's restart of the same member) is stopped first, as the kubelet stops a pod whose manifest changed.
         */
        synchronized void restart(Member m) throws Exception {
            RunnerProcess running = current[m.host()];
            if (running != null && running.process().isAlive()) {
                running.process().toHandle().destroy();
                if (!running.process().waitFor(60, java.util.concurrent.TimeUnit.SECONDS)) running.killHard();
            }
            restarts.add(new long[] {m.host(), System.currentTimeMillis()});
            current[m.host()] = lab.start(m, target[m.host()]);
            if (held[m.host()]) exits[m.host()] = 0; // an edit or a kill: the kubelet's back-off starts again
            held[m.host()] = false;
        }

        /** The member's node replaced from now on: its pod killed, and started again only by {@link #rejoin}. */
        void replacing(Member m) throws Exception {
            synchronized (this) {
                replacing[m.host()] = true;
            }
            kill(m);
        }

        /** The replaced node joins: its pod started with the target of the last edit, edits restart it again. */
        synchronized void rejoin(Member m) throws Exception {
            replacing[m.host()] = false;
            held[m.host()] = true; // a fresh back-off: the replacement's start is not an exit in a row
            restart(m);
        }

        /** SIGKILL to the pod: its runner, what it started, anything left on its data dir; until none is left. */
        synchronized void kill(Member m) throws Exception {
            held[m.host()] = true;
            RunnerProcess pod = current[m.host()];
            pod.process().destroyForcibly();
            pod.killHard();
            pod.awaitExit(Duration.ofSeconds(30));
            String data = m.data().toString();
            Poll.untilTrue(
                    Duration.ofMinutes(1), Duration.ofMillis(100), "every process of " + m.name() + " gone", () -> {
                        List<ProcessHandle> left = ProcessHandle.allProcesses()
                                .filter(p -> p.info()
                                        .arguments()
                                        .map(a -> String.join(" ", a).contains(data))
                                        .orElse(false))
                                .toList();
                        left.forEach(ProcessHandle::destroyForcibly);
                        return left.isEmpty();
                    });
        }

        /** Every (re)start of a pod: {host, epoch millis}. */
        List<long[]> restarts() {
            synchronized (restarts) {
                return List.copyOf(restarts);
            }
        }

        /** Until every member's current pod exec'd its target (a pod killed meanwhile: its successor). */
        void awaitExec(Duration deadline) throws InterruptedException {
            Poll.untilTrue(deadline, Duration.ofMillis(250), "every pod exec'd its target", () -> {
                for (int h = 0; h < current.length; h++) {
                    RunnerProcess pod = current(h);
                    // an exited runner is the kubelet's to restart (its diary: exited())
                    if (pod.count("exec") == 0) return false;
                }
                return true;
            });
        }

        /** The last lines the pod's etcd wrote (after the exec, the runner's pid is etcd's): why it exited. */
        static String etcdTail(RunnerProcess pod) {
            List<String> etcd = pod.lines().stream()
                    .filter(l -> !l.contains("[etcd-migrate]"))
                    .toList();
            return String.join("\n", etcd.subList(Math.max(0, etcd.size() - 5), etcd.size()));
        }

        static String tail(RunnerProcess pod) {
            List<String> own = pod.lines().stream()
                    .filter(l -> l.contains("[etcd-migrate]"))
                    .toList();
            return String.join("\n", own.subList(Math.max(0, own.size() - 30), own.size()));
        }
    }

    /** A seeded choice of a fault: which kind, on whom (an index into the candidates), for how long. */
    record Choice(Kind kind, int pick, long millis, String moment, long delayMillis) {
        static Choice draw(Random random, List<Kind> kinds, List<String> moments) {
            Kind kind = kinds.get(random.nextInt(kinds.size()));
            long millis = switch (kind) {
                case STALL -> 2_000 + random.nextInt(6_001);
                case CPU_LOAD -> 4_000 + random.nextInt(8_001);
                case KILL -> 0;
                default -> 4_000 + random.nextInt(14_001);
            };
            return new Choice(
                    kind,
                    random.nextInt(1 << 16),
                    millis,
                    moments.get(random.nextInt(moments.size())),
                    random.nextInt(1_000));
        }
    }
}
