package dev.etcdmigrate.it.cluster;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Hosts for a test, each a network namespace with one address on a shared /24: every host's eth0 is
 * one end of a veth pair whose other end sits on a bridge in a namespace of its own, so the machine's
 * root namespace gets neither an interface nor a route to the test addresses. Made by the test,
 * removed by {@link #close()} (also on failure): every process still in a namespace is killed first.
 * Public for the image module's three-node check, which also asks for a leg of the root namespace on
 * the bridge ({@link #NetworkLab(int, boolean)}).
 */
public final class NetworkLab implements AutoCloseable {

    private final String id;
    private final String subnet;
    private final List<String> hosts = new ArrayList<>();
    private final String bridgeNs;
    private final String hostLeg;

    public NetworkLab(int count) throws Exception {
        this(count, false);
    }

    /**
     * With hostLeg, the root namespace gets one veth on the bridge with {@link #hostAddress()} (a connected
     * route to the random /24 and nothing else): a process of the test itself (a kube-apiserver, the test's
     * clients) reaches every host and every host reaches it. close() deletes it.
     */
    public NetworkLab(int count, boolean hostLeg) throws Exception {
        // random names and subnet, so two runs on one machine do not meet
        id = "em" + Integer.toString(ThreadLocalRandom.current().nextInt(1 << 20), 36);
        subnet = "10.231." + ThreadLocalRandom.current().nextInt(1, 255) + ".";
        bridgeNs = id + "-br";
        this.hostLeg = hostLeg ? id + "-up" : null;
        try {
            ip("netns", "add", bridgeNs);
            ip("-n", bridgeNs, "link", "add", "br0", "type", "bridge");
            ip("-n", bridgeNs, "link", "set", "br0", "up");
            for (int i = 0; i < count; i++) {
                String ns = id + "-h" + i;
                ip("netns", "add", ns);
                hosts.add(ns);
                ip("-n", bridgeNs, "link", "add", "p" + i, "type", "veth", "peer", "name", "eth0", "netns", ns);
                ip("-n", bridgeNs, "link", "set", "p" + i, "master", "br0", "up");
                ip("-n", ns, "addr", "add", address(i) + "/24", "dev", "eth0");
                ip("-n", ns, "link", "set", "eth0", "up");
                ip("-n", ns, "link", "set", "lo", "up"); // the runner's private etcd listens on 127.0.0.1
            }
            if (this.hostLeg != null) {
                ip("link", "add", this.hostLeg, "type", "veth", "peer", "name", "up0", "netns", bridgeNs);
                ip("-n", bridgeNs, "link", "set", "up0", "master", "br0", "up");
                ip("addr", "add", hostAddress() + "/24", "dev", this.hostLeg);
                ip("link", "set", this.hostLeg, "up");
            }
        } catch (Exception | Error e) {
            close();
            throw e;
        }
    }

    public String address(int host) {
        return subnet + (host + 10);
    }

    /** The root namespace's address on the bridge (only with a host leg). */
    public String hostAddress() {
        if (hostLeg == null) throw new IllegalStateException("this lab has no host leg");
        return subnet + "1";
    }

    /** The namespaces and the root namespace's veth this lab made (for a check that none is left). */
    public List<String> names() {
        List<String> all = new ArrayList<>(hosts);
        all.add(bridgeNs);
        if (hostLeg != null) all.add(hostLeg);
        return all;
    }

    /** The command prefix that runs a program on the host. */
    public List<String> exec(int host) {
        return List.of("ip", "netns", "exec", hosts.get(host));
    }

    /**
     * The same, but entering only the host's network namespace: `ip netns exec` also unshares the mount
     * namespace and mounts a fresh /sys (no cgroup hierarchies under it), which a container runtime cannot
     * work without; its mounts also stay visible from the test, which checks them at tear-down.
     */
    public List<String> enter(int host) {
        return List.of("nsenter", "--net=/var/run/netns/" + hosts.get(host), "--");
    }

    /** "namespace: pid cmdline" of every process still in one of the lab's namespaces. */
    public List<String> processes() throws Exception {
        List<String> found = new ArrayList<>();
        for (String ns : namespaces()) {
            for (long pid : pidsIn(ns)) {
                String command = ProcessHandle.of(pid)
                        .flatMap(h -> h.info().commandLine())
                        .orElse("?");
                found.add(ns + ": " + pid + " " + command);
            }
        }
        return found;
    }

    /** The hosts' namespaces and the bridge's. */
    private List<String> namespaces() {
        List<String> all = new ArrayList<>(hosts);
        all.add(bridgeNs);
        return all;
    }

    /** The processes in a namespace, as `ip netns pids` lists them. */
    private static List<Long> pidsIn(String ns) throws IOException, InterruptedException {
        Process pids = new ProcessBuilder("ip", "netns", "pids", ns)
                .redirectErrorStream(true)
                .start();
        String out = new String(pids.getInputStream().readAllBytes()).trim();
        pids.waitFor();
        List<Long> found = new ArrayList<>();
        for (String pid : out.isEmpty() ? List.<String>of() : List.of(out.split("\\s+"))) {
            if (pid.matches("\\d+")) found.add(Long.parseLong(pid));
        }
        return found;
    }

    @Override
    public void close() throws Exception {
        if (hostLeg != null) {
            // deleting the bridge's namespace would remove it too, but only asynchronously
            new ProcessBuilder("ip", "link", "del", hostLeg)
                    .redirectErrorStream(true)
                    .start()
                    .waitFor();
        }
        for (String ns : namespaces()) {
            for (long pid : pidsIn(ns)) {
                ProcessHandle.of(pid).ifPresent(p -> {
                    p.destroyForcibly();
                    p.onExit()
                            .orTimeout(10, TimeUnit.SECONDS)
                            .exceptionally(t -> p)
                            .join();
                });
            }
            new ProcessBuilder("ip", "netns", "del", ns)
                    .redirectErrorStream(true)
                    .start()
                    .waitFor();
        }
        hosts.clear();
    }

    private static void ip(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("ip"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + out.trim());
        }
    }
}
