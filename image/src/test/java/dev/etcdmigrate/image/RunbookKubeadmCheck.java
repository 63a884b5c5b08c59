package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.image.ThreeNodes.Member;
import dev.etcdmigrate.k8s.KubeApiServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/runbooks/kubeadm-one-node.md, then rollback.md, run as written ({@link Runbook}) on a control-plane node whose
 * etcd static pod kubeadm wrote: one node of {@link ThreeNodes} (a network namespace with its own address, containerd,
 * a kubelet), kubeadm's own etcd certificates and its `init phase etcd local` pod for etcd 3.5.35, run from an image of
 * kubeadm's name (`registry.k8s.io/etcd:3.5.35-0`, built here: etcd, etcdctl and etcdutl 3.5.35 only) and serving 3.5
 * data it wrote itself (no version.txt); a kube-apiserver on that member, as kubeadm's stacked etcd has it.
 *
 * <p>kubeadm's fixed paths: each `node` block runs as root in the node's network namespace and in a mount namespace
 * of its own, where /etc is an overlay of the machine's (its writes on a tmpfs that ends with the block),
 * /etc/kubernetes the node's own directory and /etc/kubernetes/manifests the kubelet's static pod directory. So
 * kubeadm, run by a block without `--rootfs`, writes the manifest the kubelet reads, and nothing reaches the
 * machine's /etc. kubeadm's configuration names the node's own data and certificate directories (the kubelet,
 * outside that namespace, resolves the pod's hostPaths), so the runbooks' DATA, PKI, ETCD_CERTS, KUBEADM_CONFIG,
 * SNAPSHOTS and BACKUP take the test's values; IMAGE is the image as this build tags it. `build` blocks are not run:
 * the image and the rendered patch are this build's, and the patch is copied to PATCHES as the runbook says.
 *
 * <p>After the upgrade: etcd 3.7.3 serves, and every key written at 3.5 reads back with its value, revisions, version
 * and lease; the backup holds the snapshot, kubeadm's manifest and the data. After the rollback's edit: the same at
 * 3.5.35, a key written at 3.7 included; after its return to the copy: the backup's keys. The runbooks' default paths
 * on the machine ({@link #MACHINE}) are as they were.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@EnabledIfSystemProperty(
        named = "node.check",
        matches = "true",
        disabledReason = "the node profile's execution runs it")
class RunbookKubeadmCheck {

    static final String OLD = "3.5.35";
    static final String TOP = "3.7.3";
    /** The image kubeadm's pod names for etcd {@link #OLD} (its etcd.local.imageTag). */
    static final String KUBEADM_TAG = OLD + "-0";

    static final String KUBEADM_IMAGE = "registry.k8s.io/etcd:" + KUBEADM_TAG;
    static final String PREFIX = "/runbook-kubeadm/";
    static final Duration SERVE = Duration.ofMinutes(5);
    static final Duration BLOCK = Duration.ofMinutes(15);
    /** What the machine itself must not get from a block (the runbook's defaults for a real node). */
    static final List<Path> MACHINE = List.of(
            Path.of("/etc/kubernetes"),
            Path.of("/var/lib/etcd"),
            Path.of("/var/backups/etcd-before-3.7"),
            Path.of("/var/backups/before-rollback.snap"),
            Path.of("/root/kubeadm.yaml"));

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> REPORT = new ArrayList<>();

    static ThreeNodes cluster;
    static Member member;
    static Path crictl;
    static Path kubeadm;
    /** The node's /etc/kubernetes, its kubeadm configuration and its certificates dir (kubeadm's certificatesDir). */
    static Path etcKubernetes;

    static Path kubeadmConfig;
    static Path certificates;
    /** kubeadm's etcd pod as the node runs it before the runbook. */
    static String kubeadmPod;
    /** The check's keys as the backup holds them (at 3.5, before the upgrade). */
    static Map<String, String> backedUp;

    static Map<String, Boolean> machineBefore = new LinkedHashMap<>();

    @BeforeAll
    static void startNode() throws Exception {
        for (Path p : MACHINE) machineBefore.put(p.toString(), Files.exists(p));
        long t0 = System.nanoTime();
        Path kubelet = NodeCheck.kubernetesTool("kubelet");
        crictl = NodeCheck.kubernetesTool("crictl");
        kubeadm = KubeadmCheck.kubeadm(KubeApiServer.VERSION);
        long tools = ms(t0);
        long t1 = System.nanoTime();
        cluster = ThreeNodes.start(
                1, kubelet, KubeApiServer.binary(), NodeCheck.IMAGE_TAR, NodeCheck.IMAGE, NodeCheck.IMAGE_REFERENCE);
        member = cluster.members.getFirst();
        Path root = member.node.root;
        etcKubernetes = Files.createDirectories(root.resolve("etc-kubernetes"));
        Files.createDirectories(etcKubernetes.resolve("manifests"));
        Files.createDirectories(root.resolve("etc-overlay"));
        member.node
                .ctr(
                        "images",
                        "import",
                        kubeadmEtcdImage(root.resolve("kubeadm-etcd-image")).toString())
                .check("import " + KUBEADM_IMAGE);

        // kubeadm's configuration of this node (as `kubeadm config print init-defaults` orders it: the
        // InitConfiguration first), its etcd certificates and its etcd pod, all written by kubeadm
        certificates = root.resolve("kubeadm-pki");
        KubeadmRender.Node config = KubeadmRender.Node.of(
                        KubeApiServer.VERSION, member.name, member.address, certificates, member.data)
                .imageTag(Optional.of(KUBEADM_TAG));
        kubeadmConfig = root.resolve("kubeadm.yaml");
        Files.writeString(kubeadmConfig, config.yaml(false));
        KubeadmRender render = new KubeadmRender(kubeadm, root.resolve("kubeadm-rootfs")).configure(config);
        render.certificates();
        // the API server's etcd client certificate, as `kubeadm init` makes it (on the node: kubeadm's own paths)
        onNode(
                kubeadm.toString(),
                "init",
                "phase",
                "certs",
                "apiserver-etcd-client",
                "--config",
                kubeadmConfig.toString());
        String rendered = Files.readString(render.etcdLocal());
        assertTrue(rendered.contains("image: " + KUBEADM_IMAGE), rendered);
        kubeadmPod = for35(rendered);
        assertFalse(Files.exists(member.data.resolve("version.txt")), "no version.txt before etcd 3.5 starts");
        member.node.writeManifest("etcd.yaml", kubeadmPod);
        awaitServing(OLD);
        long up = ms(t1);
        // a kube-apiserver on the member, as kubeadm's stacked etcd has it: the kubelet acts on a removed manifest only
        // once its API source has synced, as on a real node
        long t3 = System.nanoTime();
        cluster.startApiServer(
                certificates.resolve("etcd/ca.crt"),
                certificates.resolve("apiserver-etcd-client.crt"),
                certificates.resolve("apiserver-etcd-client.key"));
        // the mirror pod Ready: the kubelet's API source has synced (before that the kubelet keeps a pod whose
        // manifest is gone, "sources aren't ready")
        KubeletNode.await("mirror pod etcd-" + member.name + " Ready", SERVE, () -> {
            JsonNode pod = member.mirrorPod();
            return pod != null
                    && pod.path("status")
                            .path("containerStatuses")
                            .path(0)
                            .path("ready")
                            .asBoolean();
        });
        long api = ms(t3);

        // 3.5 data: keys written, some rewritten, some deleted, one with a lease
        long t2 = System.nanoTime();
        for (int i = 0; i < 40; i++) etcdctl(OLD, "put", PREFIX + "key-" + i, "value-" + i);
        for (int i = 0; i < 10; i++) etcdctl(OLD, "put", PREFIX + "key-" + i, "value-" + i + "-again");
        for (int i = 30; i < 35; i++) etcdctl(OLD, "del", PREFIX + "key-" + i);
        String lease = JSON.readTree(etcdctl(OLD, "lease", "grant", "86400", "-w", "json"))
                .path("ID")
                .asText();
        etcdctl(OLD, "put", "--lease=" + Long.toHexString(Long.parseLong(lease)), PREFIX + "leased", "leased");
        report(("node %s: kubeadm %s's etcd pod (%s), etcd %s serving in %d ms (kubelet, crictl, kubeadm: %d ms),"
                                + " API server on it, node registered and mirror pod Ready in %d ms;")
                        .formatted(member.name, KubeApiServer.VERSION, KUBEADM_IMAGE, OLD, up, tools, api)
                + " %d keys (40 written, 10 rewritten, 5 deleted, 1 with a lease) in %d ms"
                        .formatted(keys(OLD).size(), ms(t2)));
    }

    @AfterAll
    static void stopNode() throws Exception {
        try {
            if (cluster != null) {
                long t0 = System.nanoTime();
                cluster.close();
                report("torn down in %d ms, nothing left; %s".formatted(ms(t0), cluster.teardownNotes()));
            }
        } finally {
            String text = String.join("\n", REPORT) + "\n";
            System.out.print(text);
            String file = System.getProperty("node.report");
            if (file != null) Files.writeString(Path.of(file).resolveSibling("runbook-kubeadm-report.txt"), text);
        }
    }

    /**
     * kubeadm-one-node.md, every `node` block in order: the patch's target, the backup (snapshot through etcd, the
     * manifest moved away and back, the data copied), `kubeadm init phase etcd local --config` with the patches
     * directory added to the configuration, the watch. Then every key at 3.7.3 as it was at 3.5.
     */
    @Test
    @Order(1)
    void kubeadmOneNodeRunbook(@TempDir Path work) throws Exception {
        long t0 = System.nanoTime();
        Map<String, String> before = keys(OLD);
        backedUp = before;
        Path backup = member.node.root.resolve("backups/etcd-before-3.7");
        Map<String, String> overrides = new LinkedHashMap<>();
        overrides.put("REGISTRY", NodeCheck.IMAGE_REFERENCE.substring(0, NodeCheck.IMAGE_REFERENCE.indexOf('/')));
        overrides.put("IMAGE", NodeCheck.IMAGE_REFERENCE);
        overrides.put("KUBEADM_CONFIG", kubeadmConfig.toString());
        overrides.put("DATA", member.data.toString());
        overrides.put("BACKUP", backup.toString());
        overrides.put("ETCD_CERTS", String.join(" ", etcdctlTls()));
        Runbook book = open("kubeadm-one-node.md", work, overrides);
        // "Copy ... to the node as $PATCHES/etcd+json.yaml": the node's /etc/kubernetes is etcKubernetes
        Path patches = Files.createDirectories(etcKubernetes.resolve("etcd-migrate-patches"));
        Files.copy(
                NodeCheck.MANIFESTS.resolve("kubeadm/entrypoint/etcd+json.yaml"),
                patches.resolve("etcd+json.yaml"),
                StandardCopyOption.REPLACE_EXISTING);
        long edit = 0;
        boolean watched = false;
        for (Runbook.Block b : book.blocks) {
            if (b.place().equals("env")) continue;
            if (b.place().equals("build")) {
                report("kubeadm-one-node.md: block %d (build, %s) not run: this build's image and rendered patch"
                        .formatted(b.index(), b.firstLine()));
                continue;
            }
            String text = b.script();
            boolean backs = text.contains("snapshot save");
            boolean edits = text.contains("kubeadm init phase etcd local");
            boolean watches = text.contains("version.txt");
            if (edits) edit = System.nanoTime();
            Runbook.Run run = book.run(b, BLOCK).check();
            report("kubeadm-one-node.md: block %d (%s, %s) ran in %d ms"
                    .formatted(b.index(), b.place(), b.firstLine(), run.millis()));
            if (backs) checkBackup(backup, before);
            if (edits) {
                String pod = Files.readString(member.node.manifests.resolve("etcd.yaml"));
                assertTrue(pod.contains(NodeCheck.IMAGE_REFERENCE), "the patched pod names the image:\n" + pod);
                assertTrue(
                        java.util.regex.Pattern.compile(
                                        "name: TARGET_VERSION\\s+value: \"?" + TOP.replace(".", "\\.") + "\"?\\n")
                                .matcher(pod)
                                .find(),
                        "the patched pod's TARGET_VERSION:\n" + pod);
                assertTrue(
                        Files.readString(kubeadmConfig).contains("directory: /etc/kubernetes/etcd-migrate-patches"),
                        "the configuration names the patches");
            }
            if (watches) {
                watched = true;
                assertEquals(
                        TOP + "/etcd3",
                        Files.readString(member.data.resolve("version.txt")).strip());
                assertEquals(TOP, version(TOP), "the member's etcd");
                Map<String, String> after = keys(TOP);
                assertEquals(before, after, "every key with its value, revisions, version and lease");
                String summary = run.output()
                        .lines()
                        .filter(l -> l.contains("summary:"))
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("the watch shows no summary:\n" + run.output()));
                report("kubeadm-one-node.md: the watch printed %s"
                        .formatted(
                                summary.substring(summary.indexOf("summary:")).strip()));
                report("kubeadm-one-node.md: kubeadm's edit -> etcd %s serving: %d ms; %d keys checked one by one"
                                .formatted(TOP, ms(edit), after.size())
                        + " (value, create and mod revision, version, lease) as written at %s".formatted(OLD));
            }
        }
        assertTrue(edit > 0 && watched, "the runbook has kubeadm's edit and the watch");
        for (var p : machineBefore.entrySet())
            assertEquals(p.getValue(), Files.exists(Path.of(p.getKey())), "the machine's " + p.getKey());
        report("kubeadm-one-node.md: %d blocks in %d ms; the machine's %s untouched"
                .formatted(book.blocks.size(), ms(t0), machineBefore.keySet()));
    }

    /**
     * rollback.md on the same node (NODES the one node): step 1's snapshot, the one edit back to 3.5.35 through kubeadm
     * (the block waits for a new etcd container that answers), the watch on STATUS until done; every key then as it
     * was at 3.7.3, one written there included, at 3.5.35. Then "To the copy instead": kubeadm's own pod on the backup's
     * data, serving the keys as backed up (the one written since gone), the patches gone from the configuration.
     */
    @Test
    @Order(2)
    void rollbackRunbook(@TempDir Path work) throws Exception {
        long t0 = System.nanoTime();
        assertEquals(TOP, version(TOP), "the member after kubeadm-one-node.md");
        etcdctl(TOP, "put", PREFIX + "written-at-3.7", "lost by the return to the copy");
        Map<String, String> before = keys(TOP);
        Path root = member.node.root;
        Map<String, String> overrides = new LinkedHashMap<>();
        overrides.put("NODES", member.name);
        overrides.put("KUBEADM_CONFIG", kubeadmConfig.toString());
        overrides.put("DATA", member.data.toString());
        overrides.put("PKI", certificates.resolve("etcd").toString());
        overrides.put("ETCD_CERTS", String.join(" ", etcdctlTls()));
        overrides.put("SNAPSHOTS", root.resolve("backups").toString());
        overrides.put("BACKUP", root.resolve("backups/etcd-before-3.7").toString());
        Runbook book = open("rollback.md", work, overrides);
        long edit = 0;
        boolean watched = false;
        boolean copied = false;
        for (Runbook.Block b : book.blocks) {
            if (b.place().equals("env")) continue;
            String text = b.script();
            boolean edits = text.contains("kubeadm init phase etcd local");
            boolean watches = text.contains("STATUS()");
            boolean copies = text.contains("var-lib-etcd");
            if (edits) edit = System.nanoTime();
            Runbook.Run run = book.run(b, BLOCK).check();
            report("rollback.md: block %d (%s, %s) ran in %d ms"
                    .formatted(b.index(), b.place(), b.firstLine(), run.millis()));
            if (text.contains("snapshot save"))
                assertTrue(Files.size(root.resolve("backups/before-rollback.snap")) > 0, "step 1's snapshot");
            if (watches) {
                watched = true;
                assertEquals(OLD, version(OLD), "the member's etcd after the watch");
                assertEquals(before, keys(OLD), "every key with its value, revisions, version and lease");
                report("rollback.md: kubeadm's edit -> STATUS done at %s: %d ms; %d keys checked one by one as at %s"
                        .formatted(OLD, ms(edit), before.size(), TOP));
            }
            if (copies) {
                copied = true;
                assertEquals(kubeadmPod, Files.readString(member.node.manifests.resolve("etcd.yaml")), "kubeadm's pod");
                assertFalse(Files.readString(kubeadmConfig).contains("patches:"), "the patches dropped");
                assertEquals(OLD, version(OLD), "kubeadm's etcd");
                assertEquals(backedUp, keys(OLD), "the keys as backed up");
                report(
                        "rollback.md: to the copy: kubeadm's pod (%s) serving the backup's %d keys as they were, the key written at %s gone"
                                .formatted(KUBEADM_IMAGE, backedUp.size(), TOP));
            }
        }
        assertTrue(edit > 0 && watched && copied, "the runbook has the edit, the watch and the return to the copy");
        for (var p : machineBefore.entrySet())
            assertEquals(p.getValue(), Files.exists(Path.of(p.getKey())), "the machine's " + p.getKey());
        report("rollback.md: %d blocks in %d ms".formatted(book.blocks.size(), ms(t0)));
    }

    /**
     * kubeadm v1.37's etcd pod with the 3.5 names of two flags: it writes etcd 3.6's names whatever the tag, which
     * etcd 3.5 refuses; kubeadm up to v1.33 (and v1.34 for a 3.5 tag: KubeadmCheck's recorded pod) writes these.
     */
    static String for35(String rendered) {
        Map<String, String> older = Map.of(
                "--feature-gates=InitialCorruptCheck=true", "--experimental-initial-corrupt-check=true",
                "--watch-progress-notify-interval=5s", "--experimental-watch-progress-notify-interval=5s");
        String pod = rendered;
        for (var flag : older.entrySet()) {
            assertTrue(rendered.contains("- " + flag.getKey() + "\n"), "kubeadm's " + flag.getKey() + ":\n" + rendered);
            pod = pod.replace("- " + flag.getKey() + "\n", "- " + flag.getValue() + "\n");
        }
        return pod;
    }

    /** etcdutl's status of a snapshot file (its key count, revision, size), read with the old line's etcdutl. */
    static JsonNode snapshotStatus(Path snapshot) throws Exception {
        return JSON.readTree(KubeletNode.run(
                        List.of(
                                NodeCheck.BIN_DIR.resolve("etcdutl-" + OLD).toString(),
                                "snapshot",
                                "status",
                                snapshot.toString(),
                                "-w",
                                "json"),
                        Duration.ofMinutes(1))
                .check("etcdutl snapshot status")
                .output());
    }

    /** The backup step's result: the snapshot (its keys), kubeadm's manifest, the data, and the pod back. */
    static void checkBackup(Path backup, Map<String, String> keys) throws Exception {
        assertEquals(kubeadmPod, Files.readString(backup.resolve("etcd.yaml")), "kubeadm's manifest in the backup");
        assertEquals(
                kubeadmPod,
                Files.readString(member.node.manifests.resolve("etcd.yaml")),
                "kubeadm's manifest back in place");
        assertTrue(Files.isDirectory(backup.resolve("var-lib-etcd/member/snap")), "the data in the backup");
        assertFalse(Files.exists(backup.resolve("etcd.yaml.stopped")), "the stopped manifest put back");
        Path snapshot = backup.resolve("before-3.7.snap");
        JsonNode status = snapshotStatus(snapshot);
        assertTrue(status.path("totalKey").asLong() >= keys.size(), "the snapshot's keys: " + status);
        assertEquals(OLD, version(OLD), "etcd back after the copy");
        assertEquals(keys, keys(OLD), "the keys after the copy");
        report("kubeadm-one-node.md: backup: snapshot of %d bytes (revision %d, %d keys), kubeadm's manifest, the data;"
                        .formatted(
                                Files.size(snapshot),
                                status.path("revision").asLong(),
                                status.path("totalKey").asLong())
                + " kubeadm's pod back, serving %d keys as before".formatted(keys.size()));
    }

    /**
     * A runbook whose `node` blocks run in the node's network namespace and a mount namespace of their own: /etc an
     * overlay of the machine's on a tmpfs, /etc/kubernetes the node's, its manifests/ the kubelet's static pod dir.
     */
    static Runbook open(String name, Path work, Map<String, String> overrides) throws Exception {
        Runbook book = new Runbook(RunbookCheck.RUNBOOKS.resolve(name), work, overrides);
        String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        String runtime = "unix://" + member.node.socket();
        book.place(
                "node",
                new Runbook.Place(
                        nodePrefix(),
                        Map.of(
                                "CONTAINER_RUNTIME_ENDPOINT", runtime,
                                "IMAGE_SERVICE_ENDPOINT", runtime,
                                "PATH", crictl.getParent() + ":" + kubeadm.getParent() + ":" + path)));
        return book;
    }

    /** A command as root on the node (its network namespace, its mount namespace as a `node` block's). */
    static String onNode(String... command) throws Exception {
        List<String> all = new ArrayList<>(nodePrefix());
        all.addAll(List.of(command));
        return KubeletNode.run(all, Duration.ofMinutes(2))
                .check(String.join(" ", command))
                .output();
    }

    /** The prefix that enters the node's network namespace and a new mount namespace with the node's paths. */
    static List<String> nodePrefix() {
        return nodePrefix(cluster, member, etcKubernetes);
    }

    /**
     * The same for member m of any {@link ThreeNodes}: its /etc/kubernetes is etcKubernetes, its overlay's upper dir
     * on a tmpfs at the node's etc-overlay (which must exist).
     */
    static List<String> nodePrefix(ThreeNodes cluster, Member member, Path etcKubernetes) {
        Path root = member.node.root;
        Path overlay = root.resolve("etc-overlay");
        String mounts = """
                set -e
                mount -t tmpfs -o mode=0700 etc-upper %1$s
                mkdir %1$s/upper %1$s/work
                mount -t overlay etc-overlay -o lowerdir=/etc,upperdir=%1$s/upper,workdir=%1$s/work /etc
                mkdir /etc/kubernetes
                mount --bind %2$s /etc/kubernetes
                mount --bind %3$s /etc/kubernetes/manifests
                exec "$@"
                """.formatted(
                        Runbook.quote(overlay.toString()),
                        Runbook.quote(etcKubernetes.toString()),
                        Runbook.quote(member.node.manifests.toString()));
        List<String> prefix = new ArrayList<>(cluster.lab.enter(member.index));
        prefix.addAll(List.of("unshare", "--mount", "--propagation", "private", "--", "bash", "-c", mounts, "node"));
        return prefix;
    }

    /** etcdctl's TLS flags with kubeadm's health-check client certificate (the paths on the node and in the pod). */
    static List<String> etcdctlTls() {
        Path etcd = certificates.resolve("etcd");
        return List.of(
                "--cacert",
                etcd.resolve("ca.crt").toString(),
                "--cert",
                etcd.resolve("healthcheck-client.crt").toString(),
                "--key",
                etcd.resolve("healthcheck-client.key").toString());
    }

    /** etcdctl VERSION against the member's client URL; its output, failing on a non-zero exit. */
    static String etcdctl(String version, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(
                NodeCheck.BIN_DIR.resolve("etcdctl-" + version).toString(),
                "--endpoints=" + member.clientUrl(),
                "--command-timeout=10s"));
        command.addAll(etcdctlTls());
        command.addAll(List.of(args));
        return KubeletNode.run(command, Duration.ofMinutes(1))
                .check("etcdctl " + String.join(" ", args))
                .output();
    }

    /** The member's etcd version, or "" while it does not answer. */
    static String version(String etcdctl) {
        try {
            return JSON.readTree(etcdctl(etcdctl, "endpoint", "status", "-w", "json"))
                    .path(0)
                    .path("Status")
                    .path("version")
                    .asText();
        } catch (Exception | AssertionError notYet) {
            return "";
        }
    }

    static void awaitServing(String version) throws Exception {
        KubeletNode.await(member.name + " serves " + version, SERVE, () -> version.equals(version(version)));
    }

    /** key -> "value createRevision modRevision version lease" of the check's keys. */
    static Map<String, String> keys(String etcdctl) throws Exception {
        Map<String, String> keys = new TreeMap<>();
        for (JsonNode kv : JSON.readTree(etcdctl(etcdctl, "get", PREFIX, "--prefix", "-w", "json"))
                .path("kvs")) {
            keys.put(
                    unb64(kv.path("key").asText()),
                    String.join(
                            " ",
                            unb64(kv.path("value").asText()),
                            kv.path("create_revision").asText(),
                            kv.path("mod_revision").asText(),
                            kv.path("version").asText(),
                            kv.path("lease").asText("0")));
        }
        assertFalse(keys.isEmpty(), "no key under " + PREFIX);
        return keys;
    }

    private static String unb64(String s) {
        return new String(Base64.getDecoder().decode(s), StandardCharsets.UTF_8);
    }

    /**
     * A Docker-format archive of kubeadm's etcd image name holding etcd, etcdctl and etcdutl {@link #OLD} in
     * /usr/local/bin (where registry.k8s.io's image has them); kubeadm's pod gives the command.
     */
    static Path kubeadmEtcdImage(Path dir) throws Exception {
        Path bin = Files.createDirectories(dir.resolve("rootfs/usr/local/bin"));
        for (String tool : List.of("etcd", "etcdctl", "etcdutl"))
            Files.copy(NodeCheck.BIN_DIR.resolve(tool + "-" + OLD), bin.resolve(tool));
        Path archive = Files.createDirectories(dir.resolve("archive"));
        Path layer = archive.resolve("layer.tar");
        KubeletNode.run(
                        List.of(
                                "tar",
                                "--numeric-owner",
                                "--owner=0",
                                "--group=0",
                                "--mode=0755",
                                "-C",
                                dir.resolve("rootfs").toString(),
                                "-cf",
                                layer.toString(),
                                "usr"),
                        Duration.ofMinutes(1))
                .check("tar the etcd layer");
        String layerDigest = sha256(Files.readAllBytes(layer));
        Path layerDir = Files.createDirectories(archive.resolve(layerDigest));
        Files.move(layer, layerDir.resolve("layer.tar"));
        String config = """
                {"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/local/bin:/usr/bin:/bin"]},\
                "rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}""".formatted(layerDigest);
        String configName = sha256(config.getBytes(StandardCharsets.UTF_8)) + ".json";
        Files.writeString(archive.resolve(configName), config);
        Files.writeString(archive.resolve("manifest.json"), """
                [{"Config":"%s","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]""".formatted(configName, KUBEADM_IMAGE, layerDigest));
        Path tar = dir.resolve("etcd-image.tar");
        KubeletNode.run(
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
                .check("tar the etcd image");
        return tar;
    }

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    static long ms(long since) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }

    static void report(String line) {
        System.out.println("[RunbookKubeadmCheck] " + line);
        synchronized (REPORT) {
            REPORT.add(line);
        }
    }
}
