package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.image.NodeCheck.Seed;
import dev.etcdmigrate.image.ThreeNodes.Member;
import dev.etcdmigrate.it.support.EtcdGateway;
import dev.etcdmigrate.k8s.ClusterObjects;
import dev.etcdmigrate.k8s.KubeApiServer;
import dev.etcdmigrate.k8s.KubeClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * The cluster rollouts of docs/ha.md run by three real kubelets ({@link ThreeNodes}, profile `node`): the operator
 * edits one node's /etc/kubernetes/manifests/etcd.yaml, waits for its mirror pod Ready and the member healthy, then
 * the next node. A writer creates ConfigMaps through the kube-apiserver all along, and a sampler asks each member
 * every 100 ms whether its own etcd answers (a serializable read on its client URL): a member is out of service from
 * its first unanswered sample to its next answered one. After each rollout every seeded key (value, revisions,
 * version, lease) and lease is read back from every member, every object the API server wrote is served with its
 * uid and resourceVersion, and every ConfigMap the writer was acknowledged is in every member's keyspace at the
 * revision the API server answered with.
 *
 * <p>Scenarios, in order on one cluster: the multi-minor rollouts 3.4 -> 3.7 and 3.7 -> 3.5, every manifest edited at
 * once; a rolling upgrade 3.5 -> 3.6 and a rolling downgrade back; the same edits made on all three nodes within a
 * second (the operator's mistake: the kubelets stop all three members together); seeded disruptions during a rolling
 * rollout (`-Dthree.node.seed=N` replays); docs/runbooks/kubeadm-three-nodes.md as written, 3.5 -> 3.7 through
 * kubeadm's patches; last, every member restored from one
 * snapshot by editing the three manifests (docs/runbooks/restore.md), after which the cluster has gone back in time.
 *
 * <p>`-Dthree.node.together=2` is the test-only way to break the operator's procedure: the rolling rollouts then edit
 * two nodes at once, and the sampler's check that never two members are out of service together must fail.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@EnabledIfSystemProperty(
        named = "node.check",
        matches = "true",
        disabledReason = "the node profile's execution runs it")
class ThreeNodeCheck {

    /** The new cluster's line: the multi-minor rollouts start here (3.4 -> 3.7 and back to 3.5). */
    static final String START = "3.4.23";

    static final String TOP = "3.7.3";
    static final String OLD = "3.5.35";
    static final String NEW = "3.6.16";
    static final Duration ROLL = Duration.ofMinutes(5);
    /** A member's wait in a multi-minor rollout: the whole walk of the cluster, every member restarting per leg. */
    static final Duration WALK = Duration.ofMinutes(12);

    static final Duration SAMPLE = Duration.ofMillis(100);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> REPORT = new ArrayList<>();

    static ThreeNodes cluster;
    static KubeApiServer api;
    static Seed seed;
    static ClusterObjects objects;
    /** Every writer's acknowledged ConfigMaps so far: checked after each later scenario too. */
    static final List<ApiWriter> writers = new ArrayList<>();
    /** Edit -> mirror pod Ready of the clean rolling rollouts (the disruption trials' window). */
    static final List<Long> cleanWindows = new ArrayList<>();

    @BeforeAll
    static void startCluster() throws Exception {
        long t0 = System.nanoTime();
        Path kubelet = NodeCheck.kubernetesTool("kubelet");
        Path apiServerBinary = KubeApiServer.binary();
        cluster = ThreeNodes.start(
                kubelet, apiServerBinary, NodeCheck.IMAGE_TAR, NodeCheck.IMAGE, NodeCheck.IMAGE_REFERENCE);
        long nodesUp = ms(t0);
        // a new cluster: the same manifests on empty data dirs (the runner records the target, etcd bootstraps)
        long t1 = System.nanoTime();
        for (Member m : cluster.members) cluster.writeManifest(m, render34(m));
        for (Member m : cluster.members)
            KubeletNode.await(
                    m.name + " serves " + START,
                    ROLL,
                    () -> m.etcd().serverVersion().map(START::equals).orElse(false)
                            && m.etcd().serving());
        long bootstrapped = ms(t1);
        long t2 = System.nanoTime();
        api = cluster.startApiServer();
        long apiReady = ms(t2);
        long t3 = System.nanoTime();
        for (Member m : cluster.members) awaitReady(m, null, START);
        long podsReady = ms(t3);
        long t4 = System.nanoTime();
        seed = Seed.write(cluster.members.get(0).etcd());
        objects = ClusterObjects.write(api.client());
        objects.assertServed(api.client());
        long seeded = ms(t4);
        report(
                "three nodes up in %d ms (lab, 3 x containerd + image import + kubelet); the new cluster %s served %d ms after the manifests; API server ready in %d ms, mirror pods Ready %d ms later; seeded %d keys, %d leases, %d API objects in %d ms; total %d ms"
                        .formatted(
                                nodesUp,
                                START,
                                bootstrapped,
                                apiReady,
                                podsReady,
                                seed.kvs().size(),
                                seed.leases().size(),
                                objects.live.size(),
                                seeded,
                                ms(t0)));
    }

    @AfterAll
    static void stopCluster() throws Exception {
        try {
            if (cluster != null) {
                // the nodes' logs survive the tear-down (it removes the nodes' dirs), for a failure's diagnosis
                String file = System.getProperty("node.report");
                if (file != null) {
                    Path logs = Files.createDirectories(Path.of(file).resolveSibling("three-node-logs"));
                    for (Member m : cluster.members) {
                        Path to = Files.createDirectories(logs.resolve(m.name));
                        for (String f : List.of("kubelet.log", "containerd.log", "pod-logs"))
                            if (Files.exists(m.node.root.resolve(f)))
                                KubeletNode.run(
                                        List.of(
                                                "cp",
                                                "-a",
                                                m.node.root.resolve(f).toString(),
                                                to.toString()),
                                        Duration.ofMinutes(1));
                    }
                }
                long t0 = System.nanoTime();
                cluster.close();
                report(
                        "torn down in %d ms, nothing left (processes, mounts, namespaces, host leg, API server port checked); %s"
                                .formatted(ms(t0), cluster.teardownNotes()));
            }
        } finally {
            String text = String.join("\n", REPORT) + "\n";
            System.out.print(text);
            String file = System.getProperty("node.report");
            if (file != null) Files.writeString(Path.of(file).resolveSibling("three-node-report.txt"), text);
        }
    }

    /**
     * A start that fails half-way (the first node's containerd runs, its image import fails) tears down what it made
     * and checks it: the lab's namespaces and host leg, containerd, its mounts and dirs (a leftover would be a
     * suppressed AssertionError).
     */
    @Test
    @Order(0)
    void aFailedStartLeavesNothing() throws Exception {
        Path missing = cluster.dir.resolve("no-such-image.tar");
        AssertionError failed = org.junit.jupiter.api.Assertions.assertThrows(
                AssertionError.class,
                () -> ThreeNodes.start(
                        Path.of("/bin/false"),
                        Path.of("/bin/false"),
                        missing,
                        NodeCheck.IMAGE,
                        NodeCheck.IMAGE_REFERENCE));
        assertTrue(failed.getMessage().contains(missing.toString()), failed.getMessage());
        assertEquals(List.of(), List.of(failed.getSuppressed()), "what the failed start's tear-down found left");
    }

    /**
     * The multi-minor rollouts of docs/ha.md ("Several minors in one rollout"), every manifest edited within a second:
     * 3.4.23 -> 3.7.3 (each runner walks 3.5 and 3.6, serving between legs) and 3.7.3 -> 3.5.35 (two downgrade jobs).
     * The kubelets stop the three members together (the operator's edits: one common restart); after it the runners
     * restart one member at a time under the cluster's restart record, so from the end of the common restart on never
     * two members are out of service at once; the cluster version passes every minor in order.
     */
    @Test
    @Order(1)
    void multiMinorRolloutsAllManifestsEditedAtOnce() throws Exception {
        for (String target : List.of(TOP, OLD)) {
            String from = target.equals(TOP) ? START : TOP;
            String label = "multi-minor all at once " + from + " -> " + target;
            Rollout r = rollout(label, target, ThreeNodes.SIZE, null);
            assertEquals(
                    minorsBetween(from, target), r.clusterMinors, label + ": the cluster version's minors in order");
            assertTrue(
                    r.overlapsAfterCommonRestart.isEmpty(),
                    label + ": after the common restart, two members out of service at once: "
                            + r.overlapsAfterCommonRestart);
        }
    }

    /** docs/ha.md's rolling upgrade 3.5 -> 3.6 and rolling downgrade 3.6 -> 3.5, one node after the other. */
    @Test
    @Order(2)
    void rollingUpgradeAndDowngradeOneNodeAtATime() throws Exception {
        int together = Integer.getInteger("three.node.together", 1);
        for (String target : List.of(NEW, OLD)) {
            String label = "rolling " + (target.equals(NEW) ? "upgrade " + OLD : "downgrade " + NEW) + " -> " + target;
            Rollout r = rollout(label, target, together, null);
            cleanWindows.addAll(r.readyMillis);
            List<String> overlaps = r.overlaps;
            assertTrue(overlaps.isEmpty(), label + ": two members out of service at once: " + overlaps);
        }
    }

    /**
     * The same edits on all three nodes within a second: every member's kubelet stops its etcd together; the runners
     * meet again over their peer URLs and each carries its member. Nothing may be lost; what the operator paid
     * (time without a quorum, failed API requests) is reported (docs/ha.md).
     */
    @Test
    @Order(3)
    void allThreeManifestsEditedWithinOneSecond() throws Exception {
        // the upgrade; the all-at-once downgrade is the multi-minor 3.7 -> 3.5 above (one rollout less in CI)
        String label = "all at once " + OLD + " -> " + NEW;
        Rollout r = rollout(label, NEW, ThreeNodes.SIZE, null);
        assertTrue(
                r.overlapsAfterCommonRestart.isEmpty(),
                label + ": after the common restart, two members out of service at once: "
                        + r.overlapsAfterCommonRestart);
    }

    /**
     * Disruptions at seeded random moments of a rolling downgrade, one per node: the container SIGKILLed, the
     * manifest written again, the node rebooted (its kubelet, containerd and containers killed together and started
     * again), each once in a seeded order. The rollout converges with nothing lost, and never two members are out of service at once:
     * the disruption only hits the node being rolled, which is out of service anyway.
     */
    @Test
    @Order(4)
    void disruptionsAtSeededMomentsConverge() throws Exception {
        long seedValue = Long.getLong("three.node.seed", System.currentTimeMillis());
        report("disruptions: seed %d (replay: -Dthree.node.seed=%d)".formatted(seedValue, seedValue));
        Random random = new Random(seedValue);
        long window = cleanWindows.isEmpty() ? 15_000 : NodeCheck.median(cleanWindows);
        // a rolling downgrade (the cluster is at 3.6 after the all-at-once upgrade), each kind of disruption once
        String label = "disrupted rolling " + NEW + " -> " + OLD;
        Rollout r = rollout(label, OLD, 1, new Disruptions(random, window));
        assertTrue(r.overlaps.isEmpty(), label + ": two members out of service at once: " + r.overlaps);
    }

    /**
     * docs/runbooks/kubeadm-three-nodes.md run as written ({@link Runbook}) on the three kubelets, 3.5.35 -> 3.7.3
     * through kubeadm's patches. What kubeadm made first: each node's etcd pod rendered by `kubeadm init phase etcd
     * local` (KubeApiServer.VERSION, v1.37.2 by default) from a configuration of that node (its name, address, data
     * dir and certificates dir, etcd.local.imageTag 3.5.35-0), cp-1's as `kubeadm init` writes it (its
     * `--initial-cluster` naming only itself), cp-2's and cp-3's with `initial-cluster` (the members before them and
     * themselves) and `initial-cluster-state: existing` as `kubeadm join` writes them; run from an image of kubeadm's
     * name ({@link RunbookKubeadmCheck#kubeadmEtcdImage}) one node at a time, on the data without
     * version.txt; cp-1's configuration uploaded by `kubeadm init phase upload-config kubeadm` to the kubeadm-config
     * ConfigMap.
     *
     * <p>Then every `node` block in order, on each node in turn where the runbook says so (cp-1, cp-2, cp-3), else on
     * cp-1; each in the node's network namespace and a mount namespace where /etc/kubernetes is the node's
     * ({@link RunbookKubeadmCheck#nodePrefix(ThreeNodes, Member, Path)}). The test's values: DATA, PKI, ETCD_CERTS,
     * KUBEADM_CONFIG and BACKUP the node's own paths, IMAGE this build's. Step 4's "YAML edit by hand" is the test's,
     * as an operator makes it: the lines the block printed go under etcd.local; and, since the three nodes share one
     * machine, the node's own dataDir and certificatesDir replace cp-1's from the ConfigMap (on real nodes they are
     * the same path everywhere).
     *
     * <p>Checked: the snapshot's keys; per node, kubeadm's manifest and the data in the backup and kubeadm's pod back;
     * per edit, the patched pod (the image, TARGET_VERSION, cp-1's `--initial-cluster` naming only itself, the joined
     * nodes' flags kept); after the watch, every member serving 3.7.3 with version.txt 3.7.3, the cluster version 3.7;
     * a writer through the API server and the sampler all along: never two members out of service at once; then
     * every check of the data. The machine's own paths the runbook names are as they were.
     */
    @Test
    @Order(5)
    void kubeadmThreeNodesRunbookThroughKubeadmsPatches(@org.junit.jupiter.api.io.TempDir Path work) throws Exception {
        Path kubeadm = KubeadmCheck.kubeadm(KubeApiServer.VERSION);
        Path crictl = NodeCheck.kubernetesTool("crictl");
        Path kubectl = NodeCheck.kubernetesTool("kubectl");
        List<Path> machine = new ArrayList<>(RunbookKubeadmCheck.MACHINE);
        machine.add(Path.of("/root/kubeadm-etcd.yaml"));
        Map<Path, Boolean> machineBefore = new LinkedHashMap<>();
        for (Path p : machine) machineBefore.put(p, Files.exists(p));
        Member first = cluster.members.get(0);
        if (!first.etcd().serverVersion().map(OLD::equals).orElse(false))
            rollout("all at once to " + OLD + " (the runbook's line)", OLD, ThreeNodes.SIZE, null);

        // what kubeadm made: its etcd pods for 3.5.35, one node at a time, and cp-1's configuration uploaded
        long t0 = System.nanoTime();
        Path image = RunbookKubeadmCheck.kubeadmEtcdImage(cluster.dir.resolve("kubeadm-etcd-image"));
        Path admin = cluster.adminKubeconfig();
        Map<Member, String> kubeadmPods = new LinkedHashMap<>();
        Map<Member, Path> certificates = new LinkedHashMap<>();
        Map<Member, Path> etcs = new LinkedHashMap<>();
        Path initConfig = null;
        for (Member m : cluster.members) {
            Path root = m.node.root;
            m.node.ctr("images", "import", image.toString()).check("import " + RunbookKubeadmCheck.KUBEADM_IMAGE);
            // kubeadm's certificate dir: its etcd/ holds the member's certificates in kubeadm's file names (the
            // health-check client's a copy of the server's: the same CA, client auth among its usages)
            Path pki = root.resolve("kubeadm-pki");
            Path etcdCerts = Files.createDirectories(pki.resolve("etcd"));
            try (var files = Files.list(m.pki)) {
                for (Path f : files.toList())
                    Files.copy(f, etcdCerts.resolve(f.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
            for (String ext : List.of("crt", "key"))
                Files.copy(
                        m.pki.resolve("server." + ext),
                        etcdCerts.resolve("healthcheck-client." + ext),
                        StandardCopyOption.REPLACE_EXISTING);
            certificates.put(m, pki);
            KubeadmRender.Node node = KubeadmRender.Node.of(KubeApiServer.VERSION, m.name, m.address, pki, m.data)
                    .imageTag(java.util.Optional.of(RunbookKubeadmCheck.KUBEADM_TAG));
            if (m.index > 0) {
                // as `kubeadm join` writes them
                node = node.extraArg(
                                "initial-cluster",
                                cluster.members.subList(0, m.index + 1).stream()
                                        .map(x -> x.name + "=" + x.peerUrl())
                                        .collect(java.util.stream.Collectors.joining(",")))
                        .extraArg("initial-cluster-state", "existing");
            } else {
                initConfig = Files.writeString(root.resolve("kubeadm-init.yaml"), node.yaml(false));
            }
            String pod = RunbookKubeadmCheck.for35(
                    Files.readString(new KubeadmRender(kubeadm, root.resolve("kubeadm-rootfs"))
                            .configure(node)
                            .etcdLocal()));
            assertEquals(
                    m.index == 0
                            ? List.of("--initial-cluster=" + m.name + "=" + m.peerUrl())
                            : List.of("--initial-cluster="
                                    + cluster.members.subList(0, m.index + 1).stream()
                                            .map(x -> x.name + "=" + x.peerUrl())
                                            .collect(java.util.stream.Collectors.joining(","))),
                    initialCluster(pod),
                    m.name + "'s pod as kubeadm " + (m.index == 0 ? "init" : "join") + " renders it");
            kubeadmPods.put(m, pod);
            // the node's /etc/kubernetes: the kubelet's manifests (bound in), the patch, the admin kubeconfig
            Path etc = Files.createDirectories(root.resolve("etc-kubernetes"));
            Files.createDirectories(etc.resolve("manifests"));
            Files.createDirectories(root.resolve("etc-overlay"));
            Files.createDirectories(etc.resolve("etcd-migrate-patches"));
            Files.copy(
                    NodeCheck.MANIFESTS.resolve("kubeadm/entrypoint/etcd+json.yaml"),
                    etc.resolve("etcd-migrate-patches/etcd+json.yaml"),
                    StandardCopyOption.REPLACE_EXISTING);
            Files.copy(admin, etc.resolve("admin.conf"), StandardCopyOption.REPLACE_EXISTING);
            etcs.put(m, etc);
        }
        // one node at a time, each until its new pod's container runs and the member serves: kubeadm's pod turns Ready
        // only after its startup probe's first period, which the runbook's first step does not need
        long prepared = ms(t0);
        long tw = System.nanoTime();
        for (Member m : cluster.members) {
            String oldHash = hash(m.mirrorPod());
            m.node.writeManifest("etcd.yaml", kubeadmPods.get(m));
            KubeletNode.await(m.name + ": kubeadm's pod running, serving " + OLD, ROLL, () -> {
                JsonNode pod = m.mirrorPod();
                return pod != null
                        && !hash(pod).equals(oldHash)
                        && pod.path("status")
                                .path("containerStatuses")
                                .path(0)
                                .path("state")
                                .has("running")
                        && m.etcd().serverVersion().map(OLD::equals).orElse(false)
                        && m.etcd().serving();
            });
        }
        long switched = ms(tw);
        // kubeadm's etcd writes no version.txt (the runner read it only when it started)
        for (Member m : cluster.members) Files.deleteIfExists(m.data.resolve("version.txt"));
        KubeletNode.run(
                        List.of(
                                kubeadm.toString(),
                                "init",
                                "phase",
                                "upload-config",
                                "kubeadm",
                                "--config",
                                initConfig.toString(),
                                "--kubeconfig",
                                admin.toString()),
                        Duration.ofMinutes(2))
                .check("kubeadm init phase upload-config kubeadm");
        String uploaded = api.client()
                .get("/api/v1/namespaces/kube-system/configmaps/kubeadm-config")
                .path("data")
                .path("ClusterConfiguration")
                .asText();
        assertTrue(uploaded.contains("dataDir: " + first.data), "the uploaded ClusterConfiguration:\n" + uploaded);
        report(("kubeadm %s's etcd pods (%s; cp-1 as init, cp-2 and cp-3 as join write them) serving %s on the data"
                        + " without version.txt, kubeadm-config uploaded: %d ms (rendered and imported in %d ms; one"
                        + " node at a time, manifest -> pod running and serving: %d ms for the three)")
                .formatted(KubeApiServer.VERSION, RunbookKubeadmCheck.KUBEADM_IMAGE, OLD, ms(t0), prepared, switched));

        // the runbook: one shell per node
        Map<Member, Runbook> books = new LinkedHashMap<>();
        for (Member m : cluster.members) {
            Path root = m.node.root;
            Path etcdPki = certificates.get(m).resolve("etcd");
            Map<String, String> overrides = new LinkedHashMap<>();
            overrides.put("REGISTRY", NodeCheck.IMAGE_REFERENCE.substring(0, NodeCheck.IMAGE_REFERENCE.indexOf('/')));
            overrides.put("IMAGE", NodeCheck.IMAGE_REFERENCE);
            overrides.put("KUBEADM_CONFIG", root.resolve("kubeadm-etcd.yaml").toString());
            overrides.put("DATA", m.data.toString());
            overrides.put("BACKUP", root.resolve("backups/etcd-before-3.7").toString());
            overrides.put("PKI", etcdPki.toString());
            overrides.put(
                    "ETCD_CERTS",
                    "--cacert %1$s/ca.crt --cert %1$s/healthcheck-client.crt --key %1$s/healthcheck-client.key"
                            .formatted(etcdPki));
            Runbook book = new Runbook(
                    RunbookCheck.RUNBOOKS.resolve("kubeadm-three-nodes.md"), work.resolve(m.name), overrides);
            String runtime = "unix://" + m.node.socket();
            book.place(
                    "node",
                    new Runbook.Place(
                            RunbookKubeadmCheck.nodePrefix(cluster, m, etcs.get(m)),
                            Map.of(
                                    "CONTAINER_RUNTIME_ENDPOINT", runtime,
                                    "IMAGE_SERVICE_ENDPOINT", runtime,
                                    "PATH",
                                            crictl.getParent() + ":" + kubeadm.getParent() + ":" + kubectl.getParent()
                                                    + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"))));
            books.put(m, book);
        }
        ApiWriter writer = new ApiWriter(api.client(), "w" + writers.size());
        writers.add(writer);
        List<String> perNode = new ArrayList<>();
        boolean snapshot = false;
        int backups = 0;
        int edits = 0;
        boolean watched = false;
        long t1 = System.nanoTime();
        try (OutageSampler sampler = new OutageSampler(cluster.members)) {
            for (Runbook.Block b : books.get(first).blocks) {
                if (b.place().equals("env")) continue;
                assertEquals("node", b.place(), "kubeadm-three-nodes.md's blocks run on the nodes");
                String text = b.script();
                for (Member m : b.eachNode() ? cluster.members : List.of(first)) {
                    long t = System.nanoTime();
                    Runbook.Run run;
                    try {
                        run = books.get(m).run(b, Duration.ofMinutes(20)).check();
                    } catch (AssertionError e) {
                        throw new AssertionError(e.getMessage() + "\n" + m.node.containerLogs("etcd"), e);
                    }
                    report("kubeadm-three-nodes.md: block %d (%s, %s) on %s in %d ms"
                            .formatted(b.index(), b.place(), b.firstLine(), m.name, run.millis()));
                    Path backup = m.node.root.resolve("backups/etcd-before-3.7");
                    if (text.contains("snapshot save")) {
                        snapshot = true;
                        checkSnapshot(backup.resolve("cluster-before-3.7.snap"));
                    }
                    if (text.contains("etcd.yaml.stopped")) {
                        backups++;
                        String pod = kubeadmPods.get(m);
                        assertEquals(
                                pod, Files.readString(backup.resolve("etcd.yaml")), m.name + ": the backup's manifest");
                        assertEquals(
                                pod,
                                Files.readString(m.node.manifests.resolve("etcd.yaml")),
                                m.name + ": kubeadm's manifest back in place");
                        assertTrue(
                                Files.isDirectory(backup.resolve("var-lib-etcd/member/snap")),
                                m.name + ": the data in the backup");
                        assertTrue(!Files.exists(backup.resolve("etcd.yaml.stopped")), m.name + ": put back");
                        perNode.add("%s backup: member out of service %d ms"
                                .formatted(m.name, sampler.outageMillis(m.index, t, System.nanoTime())));
                    }
                    if (text.contains("get cm kubeadm-config")) editByHand(m, run.output(), first, certificates);
                    if (text.contains("kubeadm init phase etcd local")) {
                        edits++;
                        String pod = Files.readString(m.node.manifests.resolve("etcd.yaml"));
                        assertTrue(pod.contains("image: " + NodeCheck.IMAGE_REFERENCE), "the patched pod:\n" + pod);
                        assertTrue(
                                java.util.regex.Pattern.compile("name: TARGET_VERSION\\s+value: \"?"
                                                + TOP.replace(".", "\\.") + "\"?\\n")
                                        .matcher(pod)
                                        .find(),
                                "the patched pod's TARGET_VERSION:\n" + pod);
                        assertEquals(
                                initialCluster(kubeadmPods.get(m)),
                                initialCluster(pod),
                                m.name + "'s --initial-cluster");
                        assertEquals(
                                m.index > 0,
                                pod.contains("--initial-cluster-state=existing"),
                                m.name + "'s --initial-cluster-state");
                        perNode.add(
                                "%s edit -> a new etcd container answering, the cluster healthy: %d ms, out of service %d ms"
                                        .formatted(m.name, ms(t), sampler.outageMillis(m.index, t, System.nanoTime())));
                    }
                    if (text.contains("STATUS()")) watched = true;
                }
            }
            awaitClusterVersion(TOP);
            KubeletNode.await(
                    "the sampler sees cluster version 3.7",
                    Duration.ofMinutes(1),
                    () -> sampler.clusterMinors().contains("3.7"));
            writer.stop();
            List<String> overlaps = sampler.overlaps();
            report(("kubeadm-three-nodes.md %s -> %s through kubeadm's patches: %d ms; writer %d requests, %d failed;"
                            + " %d ms with two or more members out; %s; cluster version %s")
                    .formatted(
                            OLD,
                            TOP,
                            ms(t1),
                            writer.sent.get(),
                            writer.failed.get(),
                            sampler.noQuorumMillis(),
                            overlaps.isEmpty() ? "never two members out at once" : "overlaps " + overlaps,
                            String.join(" -> ", sampler.clusterMinors())));
            perNode.forEach(n -> report("  " + n));
            assertTrue(overlaps.isEmpty(), "the runbook's rollout: two members out of service at once: " + overlaps);
        } finally {
            writer.stop();
        }
        assertTrue(
                snapshot && backups == ThreeNodes.SIZE && edits == ThreeNodes.SIZE && watched,
                "the runbook's snapshot, a backup and an edit per node, the watch");
        for (Member m : cluster.members) {
            assertEquals(TOP, m.etcd().serverVersion().orElse(""), m.name + "'s etcd");
            assertEquals(
                    TOP + "/etcd3",
                    Files.readString(m.data.resolve("version.txt")).strip(),
                    m.name);
        }
        checkEverything("kubeadm-three-nodes.md " + OLD + " -> " + TOP);
        for (var p : machineBefore.entrySet())
            assertEquals(p.getValue(), Files.exists(p.getKey()), "the machine's " + p.getKey());
    }

    /** A pod's `--initial-cluster=` arguments. */
    static List<String> initialCluster(String pod) throws Exception {
        JsonNode tree = new ObjectMapper(new com.fasterxml.jackson.dataformat.yaml.YAMLFactory()).readTree(pod);
        List<String> found = new ArrayList<>();
        for (String part : List.of("command", "args"))
            tree.path("spec").path("containers").path(0).path(part).forEach(a -> {
                if (a.asText().startsWith("--initial-cluster=")) found.add(a.asText());
            });
        return found;
    }

    /**
     * Step 4's edit by hand, as an operator makes it: a joined node's lines, as the block printed them, under etcd.local
     * of its configuration. And the fixture's one difference: the node's own data and certificates dirs in place of
     * cp-1's (the three nodes share one machine).
     */
    static void editByHand(Member m, String printed, Member first, Map<Member, Path> certificates) throws Exception {
        Path file = m.node.root.resolve("kubeadm-etcd.yaml");
        String config = Files.readString(file);
        List<String> lines = printed.lines()
                .dropWhile(l -> !l.startsWith("joined node: add to etcd.local"))
                .skip(1)
                .filter(l -> l.startsWith("    "))
                .toList();
        assertEquals(m.index > 0 ? 3 : 0, lines.size(), m.name + ": the lines step 4 prints\n" + printed);
        if (m.index > 0) {
            assertEquals(
                    "    - {name: initial-cluster, value: \""
                            + cluster.members.subList(0, m.index + 1).stream()
                                    .map(x -> x.name + "=" + x.peerUrl())
                                    .collect(java.util.stream.Collectors.joining(","))
                            + "\"}",
                    lines.get(1),
                    m.name + ": the members `kubeadm join` named");
            assertEquals(1, config.split("\n  local:\n", -1).length - 1, "one etcd.local in\n" + config);
            config = config.replace("\n  local:\n", "\n  local:\n" + String.join("\n", lines) + "\n");
        }
        config = config.replace("dataDir: " + first.data + "\n", "dataDir: " + m.data + "\n")
                .replace(
                        "certificatesDir: " + certificates.get(first) + "\n",
                        "certificatesDir: " + certificates.get(m) + "\n");
        assertTrue(config.contains("dataDir: " + m.data + "\n"), m.name + "'s configuration:\n" + config);
        Files.writeString(file, config);
    }

    /** Step 2's snapshot: etcdutl's status of it holds at least the seeded keys. */
    static void checkSnapshot(Path snapshot) throws Exception {
        JsonNode status = RunbookKubeadmCheck.snapshotStatus(snapshot);
        assertTrue(status.path("totalKey").asLong() >= seed.kvs().size(), "the snapshot's keys: " + status);
        report("kubeadm-three-nodes.md: the cluster's snapshot: %d bytes, revision %d, %d keys"
                .formatted(
                        Files.size(snapshot),
                        status.path("revision").asLong(),
                        status.path("totalKey").asLong()));
    }

    /**
     * docs/runbooks/restore.md on the three kubelets: a snapshot saved from the live cluster (at the line the scenarios
     * before left it: 3.7; run alone, the new cluster's 3.4 is first rolled to 3.5, since 3.4's tool cannot bump the
     * revision), a ConfigMap and keys written before it and after it; the API server stopped; on each node the
     * runbook's node blocks before its wait, as written (steps 1 to 4: the snapshot copied and its hash checked, the
     * manifest edited by its script), applied to the member's manifest at the target 3.7.3, and the three edited
     * manifests written within a second. Measured from the first edit: each member serving 3.7.3 with exactly the
     * snapshot's keys, and the API server (a process of the test, as in the whole class) ready again on the restored
     * cluster. Then the object written before the snapshot is served with its uid, the one written after it is gone,
     * and a new write's resourceVersion is above every one served before the restore. Last scenario: the cluster goes
     * back in time, so no earlier check holds after it.
     */
    @Test
    @Order(6)
    void restoreFromOneSnapshotByEditingTheThreeManifests(@org.junit.jupiter.api.io.TempDir Path work)
            throws Exception {
        Member first = cluster.members.get(0);
        if (first.etcd().serverVersion().map(START::equals).orElse(false))
            rollout("all at once " + START + " -> " + OLD + " (a snapshot line whose tool bumps)", OLD, 3, null);
        long t0 = System.nanoTime();
        String line = first.etcd().serverVersion().orElseThrow();
        KubeClient c = api.client();
        String ns = "restore-check";
        c.create(
                "/api/v1/namespaces",
                JSON.readTree(
                        "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\"," + "\"metadata\":{\"name\":\"" + ns + "\"}}"));
        String configMaps = "/api/v1/namespaces/" + ns + "/configmaps";
        JsonNode before = c.create(configMaps, configMap("before-snapshot"));
        String prefix = "/three-node-restore/";
        Map<String, String> snapped = new java.util.TreeMap<>();
        for (int i = 0; i < 20; i++) {
            snapped.put(prefix + "snap-" + i, "snap-" + i);
            first.etcd().put(prefix + "snap-" + i, "snap-" + i, 0);
        }
        Path snapshot = cluster.dir.resolve("restore-snapshot.db");
        KubeletNode.run(
                        List.of(
                                NodeCheck.BIN_DIR.resolve("etcdctl-" + line).toString(),
                                "--endpoints=" + first.clientUrl(),
                                "--cacert=" + first.pki.resolve("ca.crt"),
                                "--cert=" + first.pki.resolve("server.crt"),
                                "--key=" + first.pki.resolve("server.key"),
                                "snapshot",
                                "save",
                                snapshot.toString()),
                        Duration.ofMinutes(1))
                .check("etcdctl " + line + " snapshot save");
        String sha256 = java.util.HexFormat.of()
                .formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(snapshot)));
        // written after the snapshot: gone after the restore
        JsonNode after = c.create(configMaps, configMap("after-snapshot"));
        first.etcd().put(prefix + "after-snapshot", "x", 0);
        long servedBefore =
                Long.parseLong(after.path("metadata").path("resourceVersion").asText());
        // step 1: the API server stopped (a process of the test: the runbook's step 1 finds no manifest of it)
        api.close();
        Path crictl = NodeCheck.kubernetesTool("crictl");
        // steps 2 and 4 on each node, the runbook's blocks as written; the manifest they edit is the member's at TOP
        Map<Member, String> edited = new LinkedHashMap<>();
        for (Member m : cluster.members) {
            Path staged = Files.createDirectories(work.resolve(m.name + "-manifest"));
            Files.writeString(staged.resolve("etcd.yaml"), cluster.render(m, TOP));
            Map<String, String> overrides = new LinkedHashMap<>();
            overrides.put("NODE", m.name);
            overrides.put("TARGET", TOP);
            overrides.put("SNAPSHOT", snapshot.toString());
            overrides.put("SNAPSHOT_SHA256", sha256);
            overrides.put("RESTORE_DIR", m.node.root.resolve("etcd-restore").toString());
            overrides.put("DATA", m.data.toString());
            overrides.put("MANIFESTS", staged.toString());
            overrides.put("PARKED", m.node.root.resolve("etcd-restore-parked").toString());
            Runbook book = new Runbook(RunbookCheck.RUNBOOKS.resolve("restore.md"), work.resolve(m.name), overrides);
            String runtime = "unix://" + m.node.socket();
            book.place(
                    "node",
                    new Runbook.Place(
                            cluster.lab.enter(m.index),
                            Map.of(
                                    "CONTAINER_RUNTIME_ENDPOINT", runtime,
                                    "IMAGE_SERVICE_ENDPOINT", runtime,
                                    "PATH", crictl.getParent() + ":" + System.getenv("PATH"))));
            // every node block before the wait: the functions, steps 1 to 4
            List<Runbook.Block> steps = book.blocks.stream()
                    .takeWhile(b -> !b.script().contains("restored && break"))
                    .filter(b -> b.place().equals("node"))
                    .toList();
            assertTrue(
                    steps.stream().anyMatch(b -> b.script().contains("awk")),
                    "restore.md's edit comes before its wait");
            for (Runbook.Block b : steps) book.run(b, Duration.ofMinutes(3)).check();
            edited.put(m, Files.readString(staged.resolve("etcd.yaml")));
            assertTrue(edited.get(m).contains("name: RESTORE_SHA256"), edited.get(m));
        }
        long edit = System.nanoTime();
        for (Member m : cluster.members) m.node.writeManifest("etcd.yaml", edited.get(m));
        List<String> perMember = new ArrayList<>();
        for (Member m : cluster.members) {
            try {
                KubeletNode.await(
                        m.name + " serves " + TOP + " with exactly the snapshot's keys",
                        WALK,
                        () -> m.etcd().serverVersion().map(TOP::equals).orElse(false)
                                && m.etcd().serving()
                                && snapped.equals(values(m.etcd().range(prefix))));
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "\n" + m.node.containerLogs("etcd"), e);
            }
            perMember.add("%s %d ms".formatted(m.name, ms(edit)));
        }
        long restored = ms(edit);
        api = cluster.startApiServer();
        long apiReady = ms(edit);
        c = api.client();
        assertEquals(200, c.status("/readyz"), "the API server on the restored cluster");
        JsonNode kept = c.get(configMaps + "/before-snapshot");
        assertEquals(
                before.path("metadata").path("uid").asText(),
                kept.path("metadata").path("uid").asText(),
                "the object written before the snapshot");
        assertEquals(404, c.status(configMaps + "/after-snapshot"), "the object written after the snapshot");
        long written = Long.parseLong(c.create(configMaps, configMap("after-restore"))
                .path("metadata")
                .path("resourceVersion")
                .asText());
        assertTrue(written > servedBefore, "a resourceVersion after the restore " + written + " <= " + servedBefore);
        report(("restore from one %s snapshot (sha256 %s...) into %s, the three manifests edited within a second:"
                        + " every member serving exactly the snapshot's %d keys %d ms after the first edit (%s);"
                        + " API server ready (readyz, nodes registered) %d ms after it; the object written before the"
                        + " snapshot served, the one after it gone, a new resourceVersion %d above the last served"
                        + " before %d; the scenario %d ms")
                .formatted(
                        line,
                        sha256.substring(0, 12),
                        TOP,
                        snapped.size(),
                        restored,
                        String.join(", ", perMember),
                        apiReady,
                        written,
                        servedBefore,
                        ms(t0)));
    }

    static JsonNode configMap(String name) throws Exception {
        return JSON.readTree("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" + name
                + "\"},\"data\":{\"written\":\"" + name + "\"}}");
    }

    static Map<String, String> values(Map<String, EtcdGateway.Kv> kvs) {
        Map<String, String> values = new java.util.TreeMap<>();
        kvs.forEach((k, v) -> values.put(k, v.value()));
        return values;
    }

    /**
     * What a rollout measured: per node edit -> Ready; every instant two members were out together; those after the
     * common restart of an all-at-once edit (the end of the last member's first outage since the edit); the cluster
     * version's minors in the order they first showed.
     */
    record Rollout(
            List<Long> readyMillis,
            List<String> overlaps,
            List<String> overlapsAfterCommonRestart,
            List<String> clusterMinors) {}

    /** The minors from one version's line to another's, in the order a rollout passes them: 3.4.23, 3.7.3 -> [3.4..3.7]. */
    static List<String> minorsBetween(String from, String to) {
        int a = Integer.parseInt(from.split("\\.")[1]);
        int b = Integer.parseInt(to.split("\\.")[1]);
        List<String> minors = new ArrayList<>();
        for (int i = a; ; i += Integer.signum(b - a)) {
            minors.add("3." + i);
            if (i == b) return minors;
        }
    }

    /**
     * The new cluster's manifest at 3.4.23: the shipped one with the probes on etcd 3.4's `/health` (3.4 serves no
     * `/readyz` or `/livez`; kubeadm's manifests for etcd 3.4 probed `/health`), the only difference of a 3.4 node.
     */
    static String render34(Member m) throws Exception {
        String y = cluster.render(m, START);
        assertTrue(y.contains("path: /readyz") && y.contains("path: /livez"), "the shipped probes' paths");
        return y.replace("path: /readyz", "path: /health").replace("path: /livez", "path: /health");
    }

    /**
     * Seeded disruptions: one per node, at a random moment of its expected edit -> Ready window; the three kinds
     * (container SIGKILLed, manifest written again, node rebooted) each once per rollout, in a seeded order.
     */
    record Disruptions(Random random, long window, List<Integer> kinds) {
        Disruptions(Random random, long window) {
            this(random, window, shuffled(random));
        }

        private static List<Integer> shuffled(Random random) {
            List<Integer> kinds = new ArrayList<>(List.of(0, 1, 2));
            Collections.shuffle(kinds, random);
            return kinds;
        }
    }

    /**
     * Edits the members' manifests to target, `together` nodes at a time (1: docs/ha.md's procedure), each group
     * waited for (mirror pod Ready with the new manifest, the member serving the target); then the cluster version,
     * the sampler's verdict and every check of the data.
     */
    static Rollout rollout(String label, String target, int together, Disruptions disruptions) throws Exception {
        List<Long> ready = new ArrayList<>();
        List<String> perNode = new ArrayList<>();
        List<String> overlaps;
        List<String> afterCommonRestart;
        List<String> clusterMinors;
        long noQuorum;
        long t0 = System.nanoTime();
        String from = cluster.members.get(0).etcd().serverVersion().orElse("?");
        Duration wait = minorsBetween(from.equals("?") ? target : from, target).size() > 2 ? WALK : ROLL;
        ApiWriter writer = new ApiWriter(api.client(), "w" + writers.size());
        writers.add(writer);
        try (OutageSampler sampler = new OutageSampler(cluster.members)) {
            List<Member> members = cluster.members;
            for (int g = 0; g < members.size(); g += together) {
                List<Member> group = members.subList(g, Math.min(members.size(), g + together));
                Map<Member, String> oldHash = new LinkedHashMap<>();
                for (Member m : group) oldHash.put(m, hash(m.mirrorPod()));
                long edit = System.nanoTime();
                for (Member m : group) cluster.writeManifest(m, cluster.render(m, target));
                String disrupted = null;
                long disruptedAt = 0;
                if (disruptions != null) {
                    Member m = group.get(0);
                    long delay = (long) (disruptions.random().nextDouble() * disruptions.window());
                    int kind = disruptions.kinds().get(g % disruptions.kinds().size());
                    Thread.sleep(delay); // the seeded moment of this disruption, not a synchronisation
                    disruptedAt = System.nanoTime();
                    disrupted = disrupt(m, kind, target, label) + " at " + delay + " ms";
                }
                for (Member m : group) {
                    awaitReady(m, oldHash.get(m), target, disruptedAt, sampler, wait);
                    long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - edit);
                    ready.add(took);
                    perNode.add("%s edit -> mirror pod Ready and serving %d ms, out of service %d ms%s"
                            .formatted(
                                    m.name,
                                    took,
                                    sampler.outageMillis(m.index, edit, System.nanoTime()),
                                    disrupted == null ? "" : " (" + disrupted + ")"));
                }
            }
            awaitClusterVersion(target);
            // the sampler's history is read only once it saw the target's cluster version too: the probe above saw it
            // on every member, but under load the sampler's round is held back by a slow call and would end the
            // history one minor short
            String line = target.substring(0, target.lastIndexOf('.'));
            KubeletNode.await(
                    "the sampler sees cluster version " + line,
                    Duration.ofMinutes(1),
                    () -> sampler.clusterMinors().contains(line));
            writer.stop();
            overlaps = sampler.overlaps();
            afterCommonRestart = sampler.overlapsAfter(sampler.firstOutagesEnd(t0));
            clusterMinors = sampler.clusterMinors();
            noQuorum = sampler.noQuorumMillis();
        } finally {
            writer.stop();
        }
        long total = ms(t0);
        report("%s: %d ms; writer %d requests, %d failed%s; %d ms with two or more members out; %s; cluster version %s"
                .formatted(
                        label,
                        total,
                        writer.sent.get(),
                        writer.failed.get(),
                        writer.failures.isEmpty() ? "" : " " + writer.failures,
                        noQuorum,
                        overlaps.isEmpty()
                                ? "never two members out at once"
                                : "overlaps " + overlaps + " (after the common restart: " + afterCommonRestart + ")",
                        String.join(" -> ", clusterMinors)));
        perNode.forEach(n -> report("  " + n));
        checkEverything(label);
        return new Rollout(ready, overlaps, afterCommonRestart, clusterMinors);
    }

    /** One disruption of member m's rollout; returns what was done. */
    static String disrupt(Member m, int kind, String target, String label) throws Exception {
        switch (kind) {
            case 0 -> {
                String id = containerId(m);
                if (id != null) {
                    m.node.ctr("tasks", "kill", "-s", "SIGKILL", id);
                    return "container SIGKILLed";
                }
                // no container running yet: the manifest written again instead
            }
            case 2 -> {
                m.node.crashAndRestart();
                return "node rebooted (kubelet, containerd, containers killed, started again)";
            }
            default -> {}
        }
        cluster.writeManifest(
                m,
                cluster.render(m, target)
                        .replaceFirst(
                                "\n  labels:\n",
                                "\n  annotations:\n    node-it/rewritten: \"" + System.nanoTime() + "\"\n  labels:\n"));
        return kind == 0 ? "manifest written again (no container to kill yet)" : "manifest written again";
    }

    /** The etcd container's containerd id from m's mirror pod, or null while none runs. */
    static String containerId(Member m) throws Exception {
        JsonNode pod = m.mirrorPod();
        if (pod == null) return null;
        JsonNode status = pod.path("status").path("containerStatuses").path(0);
        String id = status.path("containerID").asText();
        return id.startsWith("containerd://") && status.path("state").has("running")
                ? id.substring("containerd://".length())
                : null;
    }

    static String hash(JsonNode mirrorPod) {
        return mirrorPod == null
                ? ""
                : mirrorPod
                        .path("metadata")
                        .path("annotations")
                        .path("kubernetes.io/config.hash")
                        .asText();
    }

    static void awaitReady(Member m, String oldHash, String target) throws Exception {
        awaitReady(m, oldHash, target, 0, null, ROLL);
    }

    /**
     * m's mirror pod of a manifest other than oldHash Ready, and m serving target (and after a disruption at
     * disruptedAt: the sampler saw m out of service after it and in service again).
     */
    static void awaitReady(
            Member m, String oldHash, String target, long disruptedAt, OutageSampler sampler, Duration deadline)
            throws Exception {
        try {
            KubeletNode.await(m.name + " Ready with the new manifest, serving " + target, deadline, () -> {
                JsonNode pod = m.mirrorPod();
                return pod != null
                        && (oldHash == null || !hash(pod).equals(oldHash))
                        && pod.path("status")
                                .path("containerStatuses")
                                .path(0)
                                .path("ready")
                                .asBoolean()
                        && m.etcd().serverVersion().map(target::equals).orElse(false)
                        && m.etcd().serving()
                        && (disruptedAt == 0 || sampler.outAndBackSince(m.index, disruptedAt));
            });
        } catch (AssertionError e) {
            JsonNode pod;
            try {
                pod = m.mirrorPod();
            } catch (Exception unanswered) { // the API server without a quorum: keep the wait's own message
                pod = JSON.createObjectNode().put("status", "(the API server did not answer: " + unanswered + ")");
            }
            throw new AssertionError(
                    e.getMessage() + "\nmirror pod status: " + (pod == null ? "(none)" : pod.path("status")) + "\n"
                            + m.node.containerLogs("etcd"),
                    e);
        }
    }

    static void awaitClusterVersion(String target) throws Exception {
        String line = target.substring(0, target.lastIndexOf('.'));
        for (Member m : cluster.members)
            KubeletNode.await(
                    "cluster version " + line + " on " + m.name,
                    Duration.ofMinutes(3),
                    () -> m.etcd()
                            .clusterVersion()
                            .map(v -> v.startsWith(line + "."))
                            .orElse(false));
    }

    /**
     * Every seeded key and lease on every member; every object of the API server's cluster with its uid and
     * resourceVersion; every ConfigMap any writer was acknowledged in every member's keyspace at the revision the
     * API server answered with (mod revision = resourceVersion) and with its uid.
     */
    static void checkEverything(String label) throws Exception {
        int configMaps = 0;
        for (Member m : cluster.members) {
            seed.check(m.etcd(), label + ", " + m.name);
            for (ApiWriter w : writers) configMaps += w.assertIn(m, label);
        }
        int read = objects.assertServed(api.client());
        for (ApiWriter w : writers) w.assertServed(api.client(), label);
        report(
                "  checked: %d keys + %d leases on each of %d members, %d API objects (uid, resourceVersion), %d acknowledged ConfigMaps x %d members (mod revision = resourceVersion, uid)"
                        .formatted(
                                seed.kvs().size(),
                                seed.leases().size(),
                                cluster.members.size(),
                                read,
                                configMaps / cluster.members.size(),
                                cluster.members.size()));
    }

    /**
     * Creates a ConfigMap through the API server every 100 ms in namespace ns; records each acknowledged one (uid,
     * resourceVersion) and counts the failed requests (an error status, a timeout, no connection): what the
     * operator's clients would have seen.
     */
    static final class ApiWriter {
        record Acked(String uid, String resourceVersion) {}

        final String ns;
        final Map<String, Acked> acked = Collections.synchronizedMap(new LinkedHashMap<>());
        final AtomicInteger sent = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();
        final List<String> failures = Collections.synchronizedList(new ArrayList<>());
        private final Thread thread;
        private volatile boolean stop;

        ApiWriter(KubeClient c, String ns) throws Exception {
            this.ns = ns;
            c.expect(
                    201,
                    "POST",
                    "/api/v1/namespaces",
                    JSON.readTree(
                            "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"" + ns + "\"}}"));
            thread = Thread.ofPlatform().daemon().start(() -> {
                int i = 0;
                while (!stop) {
                    long t = System.nanoTime();
                    String name = "cm-%06d".formatted(i++);
                    sent.incrementAndGet();
                    try {
                        HttpResponse<String> r = c.raw(
                                "POST",
                                "/api/v1/namespaces/" + ns + "/configmaps",
                                JSON.readTree("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\""
                                        + name + "\"},\"data\":{\"i\":\"" + i + "\"}}"));
                        if (r.statusCode() == 201) {
                            JsonNode meta = JSON.readTree(r.body()).path("metadata");
                            acked.put(
                                    name,
                                    new Acked(
                                            meta.path("uid").asText(),
                                            meta.path("resourceVersion").asText()));
                        } else {
                            fail(name + ": HTTP " + r.statusCode());
                        }
                    } catch (Exception e) {
                        fail(name + ": " + e.getClass().getSimpleName());
                    }
                    long left = SAMPLE.toNanos() - (System.nanoTime() - t);
                    if (left > 0) {
                        try {
                            TimeUnit.NANOSECONDS.sleep(left); // the writer's pace
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            });
        }

        private void fail(String what) {
            failed.incrementAndGet();
            if (failures.size() < 5) failures.add(what);
        }

        void stop() throws InterruptedException {
            stop = true;
            thread.join(60_000);
        }

        /** Each acknowledged ConfigMap in m's keyspace: mod revision = resourceVersion, the value names its uid. */
        int assertIn(Member m, String label) throws Exception {
            Map<String, EtcdGateway.Kv> kvs = m.etcd().range("/registry/configmaps/" + ns + "/");
            Map<String, Acked> copy;
            synchronized (acked) {
                copy = new LinkedHashMap<>(acked);
            }
            for (Map.Entry<String, Acked> e : copy.entrySet()) {
                EtcdGateway.Kv kv = kvs.get("/registry/configmaps/" + ns + "/" + e.getKey());
                String at = label + ", " + m.name + ": ConfigMap " + ns + "/" + e.getKey();
                assertTrue(kv != null, at + " acknowledged but missing");
                assertEquals(e.getValue().resourceVersion(), Long.toString(kv.modRevision()), at + " mod revision");
                assertTrue(kv.value().contains(e.getValue().uid()), at + ": another uid");
            }
            return copy.size();
        }

        /** Every acknowledged ConfigMap served with its uid and resourceVersion: one list per namespace. */
        void assertServed(KubeClient c, String label) throws Exception {
            Map<String, Acked> copy;
            synchronized (acked) {
                copy = new LinkedHashMap<>(acked);
            }
            Map<String, Acked> served = new LinkedHashMap<>();
            for (JsonNode item :
                    c.list("/api/v1/namespaces/" + ns + "/configmaps", "").path("items")) {
                JsonNode meta = item.path("metadata");
                served.put(
                        meta.path("name").asText(),
                        new Acked(
                                meta.path("uid").asText(),
                                meta.path("resourceVersion").asText()));
            }
            for (Map.Entry<String, Acked> e : copy.entrySet()) {
                assertEquals(
                        e.getValue(),
                        served.get(e.getKey()),
                        label + ": ConfigMap " + ns + "/" + e.getKey() + " (uid, resourceVersion)");
            }
        }
    }

    /**
     * Every 100 ms, per member: does its own etcd answer a serializable read on its client URL within 2 s. A member
     * is out of service from its first unanswered sample to its next answered one. And every 100 ms the cluster
     * version, from the first member that answers /version.
     */
    static final class OutageSampler implements AutoCloseable {
        record Sample(long nanos, boolean up) {}

        private final List<Member> members;
        private final List<List<Sample>> samples = new ArrayList<>();
        private final List<Thread> threads = new ArrayList<>();
        private final long start = System.nanoTime();
        private final List<String> clusterVersions = Collections.synchronizedList(new ArrayList<>());
        private volatile boolean stop;

        OutageSampler(List<Member> members) throws Exception {
            this.members = members;
            List<EtcdGateway> all = new ArrayList<>();
            for (Member m : members) all.add(m.etcd());
            sampleEvery(SAMPLE, () -> {
                for (EtcdGateway etcd : all) {
                    var v = etcd.clusterVersion();
                    if (v.isPresent()) {
                        clusterVersions.add(v.get());
                        return;
                    }
                }
            });
            for (Member m : members) {
                List<Sample> mine = Collections.synchronizedList(new ArrayList<>());
                samples.add(mine);
                EtcdGateway etcd = m.etcd();
                sampleEvery(SAMPLE, () -> mine.add(new Sample(System.nanoTime(), etcd.serving(Duration.ofSeconds(2)))));
            }
        }

        /** A daemon thread that runs `sample` once per period (its own time included) until closed. */
        private void sampleEvery(Duration period, Runnable sample) {
            threads.add(Thread.ofPlatform().daemon().start(() -> {
                while (!stop) {
                    long t = System.nanoTime();
                    sample.run();
                    long left = period.toNanos() - (System.nanoTime() - t);
                    if (left > 0) {
                        try {
                            TimeUnit.NANOSECONDS.sleep(left); // the sampling period
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            }));
        }

        /** Member i's out-of-service intervals [first unanswered sample, next answered sample), in nanos. */
        List<long[]> outages(int i) {
            List<Sample> copy;
            synchronized (samples.get(i)) {
                copy = new ArrayList<>(samples.get(i));
            }
            List<long[]> out = new ArrayList<>();
            long from = -1;
            for (Sample s : copy) {
                if (!s.up() && from < 0) from = s.nanos();
                if (s.up() && from >= 0) {
                    out.add(new long[] {from, s.nanos()});
                    from = -1;
                }
            }
            if (from >= 0) out.add(new long[] {from, copy.getLast().nanos()});
            return out;
        }

        long outageMillis(int i, long from, long to) {
            long sum = 0;
            for (long[] o : outages(i)) sum += Math.max(0, Math.min(to, o[1]) - Math.max(from, o[0]));
            return TimeUnit.NANOSECONDS.toMillis(sum);
        }

        /** Whether member i was out of service at some sample after `since` and answers again since. */
        boolean outAndBackSince(int i, long since) {
            return outages(i).stream().anyMatch(o -> o[1] > since && o[1] > o[0] && lastUp(i) >= o[1]);
        }

        private long lastUp(int i) {
            synchronized (samples.get(i)) {
                List<Sample> s = samples.get(i);
                return s.isEmpty() || !s.getLast().up() ? -1 : s.getLast().nanos();
            }
        }

        /** The cluster version's minors ("3.5") in the order they first showed. */
        List<String> clusterMinors() {
            List<String> minors = new ArrayList<>();
            synchronized (clusterVersions) {
                for (String v : clusterVersions) {
                    String minor = v.substring(0, v.lastIndexOf('.'));
                    if (!minors.contains(minor)) minors.add(minor);
                }
            }
            return minors;
        }

        /**
         * The end of an all-at-once edit's common restart: the latest end among the members' first outages that began
         * after `since` (each member's kubelet stops it once; until the last is back, two out is the edit's doing).
         */
        long firstOutagesEnd(long since) {
            long end = since;
            for (int i = 0; i < members.size(); i++) {
                for (long[] o : outages(i)) {
                    if (o[0] >= since) {
                        end = Math.max(end, o[1]);
                        break;
                    }
                }
            }
            return end;
        }

        /** Every instant two members were out of service together: "cp-1+cp-2 N ms from +T ms". */
        List<String> overlaps() {
            return overlapsAfter(Long.MIN_VALUE);
        }

        /** The overlaps (as {@link #overlaps}) that end after `after` (nanos), cut to their part after it. */
        List<String> overlapsAfter(long after) {
            List<String> found = new ArrayList<>();
            for (int a = 0; a < members.size(); a++) {
                for (int b = a + 1; b < members.size(); b++) {
                    for (long[] x : outages(a)) {
                        for (long[] y : outages(b)) {
                            long from = Math.max(after, Math.max(x[0], y[0]));
                            long to = Math.min(x[1], y[1]);
                            if (to > from)
                                found.add("%s+%s %d ms from +%d ms"
                                        .formatted(
                                                members.get(a).name,
                                                members.get(b).name,
                                                TimeUnit.NANOSECONDS.toMillis(to - from),
                                                TimeUnit.NANOSECONDS.toMillis(from - start)));
                        }
                    }
                }
            }
            return found;
        }

        /** How long two or more of the three were out together (no quorum of members in service). */
        long noQuorumMillis() {
            List<long[]> events = new ArrayList<>();
            for (int i = 0; i < members.size(); i++) {
                for (long[] o : outages(i)) {
                    events.add(new long[] {o[0], 1});
                    events.add(new long[] {o[1], -1});
                }
            }
            events.sort((p, q) -> p[0] != q[0] ? Long.compare(p[0], q[0]) : Long.compare(p[1], q[1]));
            long sum = 0;
            long out = 0;
            long since = 0;
            for (long[] e : events) {
                if (out >= 2) sum += e[0] - since;
                out += e[1];
                since = e[0];
            }
            return TimeUnit.NANOSECONDS.toMillis(sum);
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            for (Thread t : threads) t.join(10_000);
        }
    }

    static long ms(long since) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }

    static void report(String line) {
        System.out.println("[ThreeNodeCheck] " + line);
        synchronized (REPORT) {
            REPORT.add(line);
        }
    }
}
