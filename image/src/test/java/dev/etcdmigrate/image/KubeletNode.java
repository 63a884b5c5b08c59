package dev.etcdmigrate.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.k8s.KubeApiServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A real node on this machine: containerd (Debian's, on a private root, state dir and socket) and a
 * kubelet (v1.37.2 by default, KubeApiServer.VERSION, from scripts/build-kubernetes.sh, its own root dir, ports, static pod directory and
 * pod log dir) registered with a kube-apiserver of its own (on a plain host etcd), so pods are read the
 * way an operator reads them: the mirror pod through the API. The project's image tarball and a pause
 * image built here from Debian's catatonit are imported into containerd's k8s.io namespace; nothing is
 * pulled. {@link #close()} removes every pod, stops both daemons, unmounts what is left and then checks
 * that no container, mount, process or port of the node remains.
 */
final class KubeletNode implements AutoCloseable {

    static final String NAME = "node-it";
    static final String PAUSE_IMAGE = "localhost/etcd-migrate-pause:node";
    static final String NAMESPACE = "kube-system";
    /** The kubelet's fixed directory of container log symlinks (not configurable; the targets are in podLogs). */
    static final Path CONTAINER_LOG_LINKS = Path.of("/var/log/containers");

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    final Path root;
    /** The node's name (the kubelet's --hostname-override; mirror pods are "POD-NAME"). */
    final String name;
    /** Where the kubelet listens: loopback for the one-node check, the node's own address in a network namespace. */
    final String address;
    /** The command prefix that puts containerd and the kubelet into the node's network namespace (none: the host's). */
    private final List<String> enter;

    final Path manifests;
    final Path podLogs;
    private final Path socket;
    private final List<Integer> ports = new ArrayList<>();
    private final List<Integer> extraPorts = new ArrayList<>();
    private int readOnlyPort;
    private Process containerd;
    private Process kubelet;
    private HostEtcd apiEtcd;
    private KubeApiServer api;
    private boolean ownsApi;
    private final List<String> teardownNotes = new ArrayList<>();
    /** Every container id this node's containerd listed at tear-down: its processes are this node's (several nodes). */
    private final java.util.Set<String> containerIds = new java.util.HashSet<>();

    private KubeletNode(Path root) {
        this(root, NAME, "127.0.0.1", List.of());
    }

    private KubeletNode(Path root, String name, String address, List<String> enter) {
        this.root = root;
        this.name = name;
        this.address = address;
        this.enter = enter;
        this.manifests = root.resolve("manifests");
        this.podLogs = root.resolve("pod-logs");
        this.socket = root.resolve("containerd.sock");
    }

    /** Debian's containerd (with ctr), runc and catatonit, installed only when missing. */
    static void installPrerequisites() throws Exception {
        List<String> missing = new ArrayList<>();
        if (!Files.isExecutable(Path.of("/usr/bin/containerd")) || !Files.isExecutable(Path.of("/usr/bin/ctr")))
            missing.add("containerd");
        if (!Files.isExecutable(Path.of("/usr/sbin/runc")) && !Files.isExecutable(Path.of("/usr/bin/runc")))
            missing.add("runc");
        if (!Files.isExecutable(Path.of("/usr/bin/catatonit"))) missing.add("catatonit");
        if (missing.isEmpty()) return;
        List<String> install = new ArrayList<>(List.of("apt-get", "install", "-y", "-qq"));
        install.addAll(missing);
        if (run(install, Duration.ofMinutes(10)).exit != 0) {
            run(List.of("apt-get", "update", "-qq"), Duration.ofMinutes(10)).check("apt-get update");
            run(install, Duration.ofMinutes(10)).check(String.join(" ", install));
        }
    }

    /**
     * Starts the node: containerd, the images (imageTar tagged as imageReference), an API server and the
     * kubelet, which must register. On any failure everything started so far is torn down.
     */
    static KubeletNode start(
            Path kubeletBinary, Path apiServerBinary, Path imageTar, String imageName, String imageReference)
            throws Exception {
        installPrerequisites();
        // a short path: containerd's socket path must fit a unix socket address (108 bytes)
        KubeletNode node = new KubeletNode(Files.createTempDirectory(Path.of("/tmp"), "em-node-"));
        try {
            node.startContainerd();
            node.importImages(imageTar, imageName, imageReference);
            node.startApiServer(apiServerBinary);
            Path kubeconfig = node.kubeconfig(
                    node.api.client().base().toString(),
                    node.root.resolve("apiserver/certs/apiserver.crt"),
                    // the API server's self-signed certificate names "kubernetes", not 127.0.0.1
                    "kubernetes",
                    Files.readString(node.root.resolve("apiserver/tokens.csv")).split(",", 2)[0]);
            node.startKubelet(kubeletBinary, kubeconfig, true);
            return node;
        } catch (Exception | Error e) {
            try {
                node.close();
            } catch (Exception | Error suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * One node of several on this machine: containerd and the kubelet in the network namespace that `enter`
     * enters (the kubelet's ports are its defaults there, on the node's address), registering as `name` with
     * an API server at apiServer that may not run yet (its certificate signed by ca, the admin token). Only
     * the kubelet's health is awaited; {@link #attach} gives the node the API server once it runs.
     */
    static KubeletNode startInNamespace(
            String name,
            String address,
            List<String> enter,
            Path kubeletBinary,
            Path imageTar,
            String imageName,
            String imageReference,
            URI apiServer,
            Path ca,
            String token)
            throws Exception {
        installPrerequisites();
        KubeletNode node =
                new KubeletNode(Files.createTempDirectory(Path.of("/tmp"), "em-" + name + "-"), name, address, enter);
        try {
            node.startContainerd();
            node.importImages(imageTar, imageName, imageReference);
            node.startKubelet(kubeletBinary, node.kubeconfig(apiServer.toString(), ca, null, token), false);
            return node;
        } catch (Exception | Error e) {
            try {
                node.close();
            } catch (Exception | Error suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /** The API server this node's mirror pods are read from (not stopped by close(): the caller's). */
    void attach(KubeApiServer server) {
        this.api = server;
        this.ownsApi = false;
    }

    private void startContainerd() throws Exception {
        Files.createDirectories(root.resolve("cni"));
        // restrict_oom_score_adj: this machine gives no CAP_SYS_RESOURCE, so the kubelet's -998 for pod sandboxes
        // would make runc fail ("can't get final child's PID from pipe"); a production node leaves it false.
        String config = """
                version = 2
                root = "%1$s/containerd-root"
                state = "%1$s/containerd-state"
                [grpc]
                  address = "%2$s"
                [ttrpc]
                  address = "%2$s.ttrpc"
                [debug]
                  address = ""
                [metrics]
                  address = ""
                [plugins."io.containerd.internal.v1.opt"]
                  path = "%1$s/containerd-opt"
                [plugins."io.containerd.grpc.v1.cri"]
                  sandbox_image = "%3$s"
                  restrict_oom_score_adj = true
                  stream_server_address = "127.0.0.1"
                  stream_server_port = "0"
                  [plugins."io.containerd.grpc.v1.cri".containerd]
                    snapshotter = "overlayfs"
                    default_runtime_name = "runc"
                    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
                      runtime_type = "io.containerd.runc.v2"
                      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
                        SystemdCgroup = false
                  [plugins."io.containerd.grpc.v1.cri".cni]
                    conf_dir = "%1$s/cni"
                    bin_dir = "%1$s/cni"
                """.formatted(root, socket, PAUSE_IMAGE);
        Path file = root.resolve("containerd.toml");
        Files.writeString(file, config);
        List<String> command = new ArrayList<>(enter);
        command.addAll(List.of("containerd", "--config", file.toString()));
        containerd = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(root.resolve("containerd.log").toFile())
                .start();
        containerdCommand = command;
        await("containerd answers on " + socket, Duration.ofSeconds(60), () -> {
            if (!containerd.isAlive())
                throw new IllegalStateException("containerd exited: " + tail(root.resolve("containerd.log")));
            return Files.exists(socket) && ctr("version").exit == 0;
        });
    }

    /** The project's image and a pause image (catatonit's pause mode in a one-file image) into the k8s.io namespace. */
    private void importImages(Path imageTar, String imageName, String imageReference) throws Exception {
        if (!Files.isRegularFile(imageTar))
            throw new AssertionError(imageTar + " is missing: build it with -Pimage (see docs/node.md)");
        ctr("images", "import", pauseImage().toString()).check("import the pause image");
        ctr("images", "import", imageTar.toString()).check("import " + imageTar);
        String imported = imageName.contains("/") ? imageName : "docker.io/library/" + imageName;
        // the manifests name the image by its registry reference: the same image under that name, so nothing is pulled
        ctr("images", "tag", "--force", imported, imageReference).check("tag " + imported);
    }

    /** A Docker-format archive with /catatonit and ENTRYPOINT ["/catatonit","-P"] (its pause mode). */
    private Path pauseImage() throws Exception {
        Path dir = Files.createDirectories(root.resolve("pause-image"));
        Path layerRoot = Files.createDirectories(dir.resolve("rootfs"));
        Files.copy(Path.of("/usr/bin/catatonit"), layerRoot.resolve("catatonit"), StandardCopyOption.REPLACE_EXISTING);
        Path archive = Files.createDirectories(dir.resolve("archive"));
        Path layer = archive.resolve("layer.tar");
        run(
                        List.of(
                                "tar",
                                "--numeric-owner",
                                "--owner=0",
                                "--group=0",
                                "--mode=0755",
                                "-C",
                                layerRoot.toString(),
                                "-cf",
                                layer.toString(),
                                "catatonit"),
                        Duration.ofMinutes(1))
                .check("tar the pause layer");
        String layerDigest = sha256(Files.readAllBytes(layer));
        Path layerDir = Files.createDirectories(archive.resolve(layerDigest));
        Files.move(layer, layerDir.resolve("layer.tar"));
        String config = """
                {"architecture":"amd64","os":"linux","config":{"Entrypoint":["/catatonit","-P"]},\
                "rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}""".formatted(layerDigest);
        String configName = sha256(config.getBytes(StandardCharsets.UTF_8)) + ".json";
        Files.writeString(archive.resolve(configName), config);
        Files.writeString(archive.resolve("manifest.json"), """
                [{"Config":"%s","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]""".formatted(configName, PAUSE_IMAGE, layerDigest));
        Path tar = dir.resolve("pause.tar");
        run(
                        List.of(
                                "tar",
                                "--numeric-owner",
                                "--owner=0",
                                "--group=0",
                                "-C",
                                archive.toString(),
                                "-cf",
                                tar.toString(),
                                "."),
                        Duration.ofMinutes(1))
                .check("tar the pause image");
        return tar;
    }

    private void startApiServer(Path apiServerBinary) throws Exception {
        apiEtcd = HostEtcd.start("3.6.16", root.resolve("api-etcd"));
        api = KubeApiServer.start(
                apiServerBinary, apiEtcd.clientUrl(), root.resolve("apiserver"), Duration.ofMinutes(3));
        ownsApi = true;
    }

    private Path kubeconfig(String server, Path ca, String tlsServerName, String token) throws IOException {
        Path kubeconfig = root.resolve("kubelet.kubeconfig");
        Files.writeString(kubeconfig, """
                apiVersion: v1
                kind: Config
                clusters:
                - name: node-it
                  cluster:
                    server: %s
                    certificate-authority: %s%s
                users:
                - name: kubelet
                  user:
                    token: %s
                contexts:
                - name: node-it
                  context: {cluster: node-it, user: kubelet}
                current-context: node-it
                """.formatted(
                        server, ca, tlsServerName == null ? "" : "\n    tls-server-name: " + tlsServerName, token));
        return kubeconfig;
    }

    private Process startKubelet(Path binary, Path kubeconfig, boolean awaitRegistration) throws Exception {
        Files.createDirectories(manifests);
        Files.createDirectories(podLogs);
        Path kubeletRoot = Files.createDirectories(root.resolve("kubelet"));
        // in a namespace of its own the kubelet keeps its default ports, on the node's address
        boolean own = !enter.isEmpty();
        int port = own ? 10250 : port();
        readOnlyPort = own ? 10255 : port();
        int healthz = own ? 10248 : port();
        // cgroupfs without QoS cgroups, failCgroupV1: false: this machine has cgroup v1 and no systemd; a production
        // node runs cgroup v2 with the systemd driver (docs/node.md).
        Path config = root.resolve("kubelet.yaml");
        Files.writeString(config, """
                apiVersion: kubelet.config.k8s.io/v1beta1
                kind: KubeletConfiguration
                address: %s
                port: %d
                readOnlyPort: %d
                healthzBindAddress: %s
                healthzPort: %d
                staticPodPath: %s
                fileCheckFrequency: 1s
                podLogsDir: %s
                volumePluginDir: %s
                containerRuntimeEndpoint: unix://%s
                cgroupDriver: cgroupfs
                cgroupsPerQOS: false
                enforceNodeAllocatable: []
                failSwapOn: false
                failCgroupV1: false
                evictionHard: {}
                imageGCHighThresholdPercent: 100
                imageGCLowThresholdPercent: 99
                makeIPTablesUtilChains: false
                localStorageCapacityIsolation: false
                authentication:
                  anonymous: {enabled: true}
                  webhook: {enabled: false}
                authorization:
                  mode: AlwaysAllow
                """.formatted(
                        address,
                        port,
                        readOnlyPort,
                        address,
                        healthz,
                        manifests,
                        podLogs,
                        root.resolve("volume-plugins"),
                        socket));
        List<String> command = new ArrayList<>(enter);
        command.addAll(List.of(
                binary.toString(),
                "--config=" + config,
                "--root-dir=" + kubeletRoot,
                "--cert-dir=" + root.resolve("kubelet-pki"),
                "--hostname-override=" + name,
                "--kubeconfig=" + kubeconfig,
                "--v=2"));
        if (own) command.add("--node-ip=" + address);
        kubelet = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        root.resolve("kubelet.log").toFile()))
                .start();
        URI healthzUrl = URI.create("http://" + address + ":" + healthz + "/healthz");
        await(
                "the kubelet of " + name + " is healthy" + (awaitRegistration ? " and registered" : ""),
                Duration.ofMinutes(2),
                () -> {
                    if (!kubelet.isAlive())
                        throw new IllegalStateException("kubelet exited: " + tail(root.resolve("kubelet.log")));
                    return get(healthzUrl).map(r -> r.statusCode() == 200).orElse(false)
                            && (!awaitRegistration || api.client().status("/api/v1/nodes/" + name) == 200);
                });
        kubeletCommand = command;
        return kubelet;
    }

    private List<String> kubeletCommand;
    private List<String> containerdCommand;

    /**
     * A node reboot as far as this machine allows: the kubelet, containerd, every shim and container process of
     * the node SIGKILLed together, then containerd and the kubelet started again on the same dirs (the kubelet
     * starts the static pods anew; the dead containers' mounts are left to containerd as after a power cut,
     * unmounted at tear-down).
     */
    void crashAndRestart() throws Exception {
        List<ProcessHandle> victims = new ArrayList<>();
        victims.add(kubelet.toHandle());
        victims.add(containerd.toHandle());
        for (String task : ctr("tasks", "ls", "-q").lines().toList()) {
            ctr("tasks", "ls")
                    .lines()
                    .filter(l -> l.startsWith(task + " "))
                    .map(l -> l.trim().split("\\s+")[1])
                    .filter(pid -> pid.matches("\\d+"))
                    .forEach(pid -> ProcessHandle.of(Long.parseLong(pid)).ifPresent(victims::add));
        }
        // the shims (their command line names this node's socket); by command line only: the containers of the other
        // nodes are in the same /k8s.io/ cgroups
        for (String p : processesOf(root, java.util.Set.of()))
            ProcessHandle.of(Long.parseLong(p.split(" ", 2)[0])).ifPresent(victims::add);
        for (ProcessHandle h : victims) h.destroyForcibly();
        for (ProcessHandle h : victims) h.onExit().get(30, TimeUnit.SECONDS);
        containerd = new ProcessBuilder(containerdCommand)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        root.resolve("containerd.log").toFile()))
                .start();
        await("containerd answers again on " + socket, Duration.ofSeconds(60), () -> {
            if (!containerd.isAlive())
                throw new IllegalStateException("containerd exited: " + tail(root.resolve("containerd.log")));
            return ctr("version").exit == 0;
        });
        kubelet = new ProcessBuilder(kubeletCommand)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(
                        root.resolve("kubelet.log").toFile()))
                .start();
    }

    /** Writes a static pod manifest the way an editor saves it: a new file renamed over the old one. */
    void writeManifest(String file, String yaml) throws IOException {
        Path tmp = root.resolve(file + ".new");
        Files.writeString(tmp, yaml);
        Files.move(tmp, manifests.resolve(file), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    void removeManifest(String file) throws IOException {
        Files.deleteIfExists(manifests.resolve(file));
    }

    /** The mirror pod of static pod NAME as the API server serves it, or null while there is none. */
    JsonNode mirrorPod(String pod) throws Exception {
        HttpResponse<String> r =
                api.client().raw("GET", "/api/v1/namespaces/" + NAMESPACE + "/pods/" + pod + "-" + name, null);
        return r.statusCode() == 200 ? JSON.readTree(r.body()) : null;
    }

    /** The pods the kubelet runs, from its read-only /pods (the kubelet's own view, used for tear-down). */
    List<JsonNode> kubeletPods() throws Exception {
        HttpResponse<String> r = get(URI.create("http://" + address + ":" + readOnlyPort + "/pods"))
                .orElseThrow(() -> new IOException("kubelet /pods does not answer"));
        List<JsonNode> pods = new ArrayList<>();
        JSON.readTree(r.body()).path("items").forEach(pods::add);
        return pods;
    }

    /** A container's CRI log files (the kubelet's pod log dir), newest restart last; for failure messages. */
    String containerLogs(String pod) throws IOException {
        StringBuilder out = new StringBuilder();
        try (Stream<Path> files = Files.walk(podLogs)) {
            for (Path f : files.filter(p -> p.toString().contains("_" + pod + "-" + name + "_")
                            && p.toString().endsWith(".log"))
                    .sorted()
                    .toList()) {
                List<String> lines = Files.readAllLines(f);
                out.append("== ").append(podLogs.relativize(f)).append('\n');
                lines.subList(Math.max(0, lines.size() - 30), lines.size())
                        .forEach(l -> out.append(l).append('\n'));
            }
        }
        return out.toString();
    }

    KubeApiServer apiServer() {
        return api;
    }

    /** containerd's CRI socket: crictl's CONTAINER_RUNTIME_ENDPOINT on this node. */
    Path socket() {
        return socket;
    }

    /** Ports a test gave to pods on this node: checked to be free after tear-down. */
    void ownsPorts(int... more) {
        for (int p : more) extraPorts.add(p);
    }

    private int port() {
        int p = FreePorts.pick().client();
        ports.add(p);
        return p;
    }

    /** What the tear-down found and had to clean up itself (reported, not failed, unless something is still left). */
    List<String> teardownNotes() {
        return teardownNotes;
    }

    /**
     * Steps 1 and 2 of {@link #close()}: the pods away, the kubelet stopped, the containers removed, containerd
     * stopped. Several nodes on one machine each do this first, as close()'s process check sees every node's
     * containers (all in containerd's /k8s.io/ cgroups).
     */
    void stopDaemons() throws Exception {
        List<String> left = new ArrayList<>();
        stopDaemons(left);
        if (!left.isEmpty()) throw new AssertionError(name + " left behind: " + left);
    }

    private void stopDaemons(List<String> left) throws Exception {
        // 1. every static pod away through the kubelet (SIGTERM to etcd, then the sandbox)
        if (kubelet != null && kubelet.isAlive()) {
            try (Stream<Path> files = Files.list(manifests)) {
                for (Path f : files.toList()) Files.delete(f);
            }
            try {
                await(
                        "the kubelet runs no pod",
                        Duration.ofSeconds(90),
                        () -> kubeletPods().isEmpty());
            } catch (Exception | AssertionError e) {
                teardownNotes.add("pods still listed by the kubelet after 90 s: " + e.getMessage());
            }
        }
        stop(kubelet, "kubelet");
        // 2. what the kubelet left to its garbage collector: the stopped sandboxes and containers
        if (containerd != null && containerd.isAlive()) {
            for (String task : ctr("tasks", "ls", "-q").lines().toList()) {
                ctr("tasks", "kill", "-s", "SIGKILL", task);
                await(
                        "task " + task + " stopped",
                        Duration.ofSeconds(30),
                        () -> ctr("tasks", "delete", task).exit == 0
                                || ctr("tasks", "ls", "-q").lines().noneMatch(task::equals));
            }
            List<String> containers = ctr("containers", "ls", "-q").lines().toList();
            containerIds.addAll(containers);
            for (String c : containers) ctr("containers", "rm", c);
            if (!containers.isEmpty())
                teardownNotes.add(containers.size() + " stopped containers/sandboxes removed (kubelet GC had not yet)");
            List<String> still = ctr("containers", "ls", "-q").lines().toList();
            if (!still.isEmpty()) left.add("containers: " + still);
        }
        stop(containerd, "containerd");
    }

    @Override
    public void close() throws Exception {
        List<String> left = new ArrayList<>();
        stopDaemons(left);
        if (api != null && ownsApi) api.close();
        if (apiEtcd != null) apiEtcd.close();
        // 3. mounts under the node's dirs (sandbox /dev/shm, rootfs): deepest first
        List<String> mounts = mountsUnder(root);
        for (String m : mounts.reversed()) run(List.of("umount", m), Duration.ofSeconds(30));
        if (!mounts.isEmpty()) teardownNotes.add(mounts.size() + " mounts unmounted after containerd stopped");
        List<String> stillMounted = mountsUnder(root);
        if (!stillMounted.isEmpty()) left.add("mounts: " + stillMounted);
        // 4. processes: a shim or a container process (its root is inside containerd's state dir). A shim exits on its
        // own once containerd deleted its task; on a loaded machine that takes moments after containerd stopped
        try {
            await(
                    "the node's shims and containers gone",
                    Duration.ofSeconds(15),
                    () -> ownProcesses().isEmpty());
        } catch (Exception | AssertionError stillThere) {
            // judged below
        }
        List<String> processes = ownProcesses();
        if (!processes.isEmpty()) {
            left.add("processes: " + processes);
            for (String p : processes) run(List.of("kill", "-9", p.split(" ", 2)[0]), Duration.ofSeconds(5));
        }
        // 5. ports
        List<String> bound = new ArrayList<>();
        List<String> nodeProcesses = ownProcesses();
        for (int p : Stream.concat(ports.stream(), extraPorts.stream()).toList()) {
            if (bindable(p)) continue;
            // a port the node released may be taken since by another process of the machine (a test running
            // beside this one picks free ports too): only a holder of the node's own counts as left behind
            String holders = run(List.of("ss", "-Htanp", "sport = :" + p), Duration.ofSeconds(10))
                    .output()
                    .strip();
            java.util.regex.Matcher pid =
                    java.util.regex.Pattern.compile("pid=(\\d+)").matcher(holders);
            boolean others = pid.find()
                    && nodeProcesses.stream().noneMatch(n -> n.startsWith(pid.group(1) + " "))
                    && !pid.group(1)
                            .equals(Long.toString(ProcessHandle.current().pid()));
            if (others) teardownNotes.add("port " + p + " taken since by another process: " + holders);
            else bound.add(p + " (" + (holders.isEmpty() ? "no socket listed by ss" : holders) + ")");
        }
        if (!bound.isEmpty()) left.add("ports still bound: " + bound);
        // /var/log/containers: the kubelet's symlinks into this node's pod log dir, which its container GC would
        // have removed with the containers removed above
        int links = 0;
        try (Stream<Path> all = Files.exists(CONTAINER_LOG_LINKS) ? Files.list(CONTAINER_LOG_LINKS) : Stream.empty()) {
            for (Path l : all.filter(Files::isSymbolicLink).toList()) {
                if (Files.readSymbolicLink(l).startsWith(root)) {
                    Files.delete(l);
                    links++;
                }
            }
        }
        if (links > 0) teardownNotes.add(links + " log links removed from " + CONTAINER_LOG_LINKS);
        if (stillMounted.isEmpty() && ownProcesses().isEmpty()) {
            deleteTree(root);
        } else {
            left.add("kept " + root + " (something is still mounted or running in it)");
        }
        if (!left.isEmpty()) throw new AssertionError("the node left behind: " + left);
    }

    private static void stop(Process p, String what) throws InterruptedException {
        if (p == null || !p.isAlive()) return;
        p.destroy();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Mount points at or below dir, in mount order. */
    static List<String> mountsUnder(Path dir) throws IOException {
        List<String> found = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
            String point = line.split(" ")[4].replace("\\040", " ");
            if (point.equals(dir.toString()) || point.startsWith(dir + "/")) found.add(point);
        }
        return found;
    }

    /**
     * This node's processes: the one node on the machine owns every container process; one of several, only those of
     * its own containers.
     */
    private List<String> ownProcesses() throws IOException {
        return enter.isEmpty() ? processesOf(root) : processesOf(root, containerIds);
    }

    static List<String> processesOf(Path dir) throws IOException {
        return processesOf(dir, null);
    }

    /**
     * "PID cmdline" of processes whose command line names dir (containerd, its shims) or that run in a container of
     * this node: in a cgroup under containerd's CRI default parent /k8s.io/ (the kubelet runs without QoS cgroups
     * here; a container's /proc/PID/root reads "/" from outside its mount namespace, so the root alone cannot tell).
     */
    static List<String> processesOf(Path dir, java.util.Set<String> containers) throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit))
                    .toList()) {
                try {
                    String cmd = new String(Files.readAllBytes(p.resolve("cmdline")), StandardCharsets.UTF_8)
                            .replace('\0', ' ')
                            .trim();
                    String procRoot = Files.readSymbolicLink(p.resolve("root")).toString();
                    if (p.getFileName()
                            .toString()
                            .equals(Long.toString(ProcessHandle.current().pid()))) continue;
                    String cgroup = Files.readString(p.resolve("cgroup"));
                    boolean inPod = containers == null
                            ? cgroup.contains(":/k8s.io/")
                            : containers.stream().anyMatch(id -> cgroup.contains(":/k8s.io/" + id));
                    if (cmd.contains(dir.toString()) || procRoot.startsWith(dir.toString()) || inPod)
                        found.add(p.getFileName() + " " + cmd);
                } catch (IOException gone) {
                    // exited meanwhile
                }
            }
        }
        return found;
    }

    static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    private static void deleteTree(Path dir) throws IOException {
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : all.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(p);
        }
    }

    Result ctr(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of("ctr", "--address", socket.toString(), "--namespace", "k8s.io"));
        command.addAll(List.of(args));
        return run(command, Duration.ofMinutes(10));
    }

    record Result(int exit, String output) {
        Result check(String what) {
            if (exit != 0) throw new AssertionError(what + " failed (exit " + exit + "): " + output);
            return this;
        }

        Stream<String> lines() {
            return output.lines().map(String::strip).filter(l -> !l.isEmpty());
        }
    }

    static Result run(List<String> command, Duration timeout) throws Exception {
        ProcessBuilder b = new ProcessBuilder(command).redirectErrorStream(true);
        b.environment().put("DEBIAN_FRONTEND", "noninteractive");
        Process p = b.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly().waitFor();
            return new Result(-1, new String(out, StandardCharsets.UTF_8) + " (timeout)");
        }
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }

    static java.util.Optional<HttpResponse<String>> get(URI url) {
        try {
            return java.util.Optional.of(HTTP.send(
                    HttpRequest.newBuilder(url).timeout(Duration.ofSeconds(5)).build(),
                    HttpResponse.BodyHandlers.ofString()));
        } catch (IOException e) {
            return java.util.Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return java.util.Optional.empty();
        }
    }

    interface Check {
        boolean ok() throws Exception;
    }

    /** Polls check every 200 ms until it holds, or fails with what after the deadline. */
    static void await(String what, Duration deadline, Check check) throws Exception {
        Poll.untilTrue(deadline, Duration.ofMillis(200), what, () -> {
            try {
                return check.ok();
            } catch (IllegalStateException fatal) {
                throw new AssertionError(what + ": " + fatal.getMessage(), fatal); // can never turn out right
            }
        });
    }

    static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }
}
