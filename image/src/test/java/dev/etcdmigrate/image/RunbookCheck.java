package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.cluster.RecordValue;
import dev.etcdmigrate.cluster.RolloutCoordinator;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.image.ThreeNodes.Member;
import dev.etcdmigrate.it.support.EtcdGateway;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.k8s.KubeApiServer;
import dev.etcdmigrate.version.MinorLine;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * The runbooks of docs/runbooks/ run as written ({@link Runbook}: the marked blocks, in order, each where its marker
 * says) on a control-plane node of their own: one node of {@link ThreeNodes} (a network namespace with its own
 * address, containerd, a kubelet; the member etcd-cp-1 runs the image's static pod with kubeadm's TLS file names and
 * the shipped ports; a kube-apiserver on that member, as kubeadm's stacked etcd has it). `node` blocks run as root in
 * the node's network namespace with `crictl` (built by scripts/build-kubernetes.sh) on the node's containerd;
 * `operator` blocks run on the machine with `kubectl` (built the same way) and an admin kubeconfig. A block that
 * fails fails the check: a block that cannot run as written is a defect of the runbook. Between blocks the check
 * plants what a runbook reacts to and reads the outcome itself, through the runbook's own shell functions where
 * they exist (e.g. `STATUS -o json`).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@EnabledIfSystemProperty(
        named = "node.check",
        matches = "true",
        disabledReason = "the node profile's execution runs it")
class RunbookCheck {

    static final Path RUNBOOKS = Path.of(System.getProperty("runbooks.dir", "../docs/runbooks"));
    static final String OLD = "3.5.35";
    static final String TOP = "3.7.3";
    static final String PREFIX = "/runbook-check/";
    /** The keys the snapshot holds (written at 3.5 before it). */
    static final Map<String, String> SNAPPED = new java.util.TreeMap<>();

    static Path snapshot;
    static final Duration SERVE = Duration.ofMinutes(5);
    static final Duration BLOCK = Duration.ofMinutes(15);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final List<String> REPORT = new ArrayList<>();

    static ThreeNodes cluster;
    static Member member;
    static KubeApiServer api;
    static Path kubectl;
    static Path crictl;
    static Path kubeconfig;

    @BeforeAll
    static void startNode() throws Exception {
        long t0 = System.nanoTime();
        Path kubelet = NodeCheck.kubernetesTool("kubelet");
        kubectl = NodeCheck.kubernetesTool("kubectl");
        crictl = NodeCheck.kubernetesTool("crictl");
        long tools = ms(t0);
        long t1 = System.nanoTime();
        cluster = ThreeNodes.start(
                1, kubelet, KubeApiServer.binary(), NodeCheck.IMAGE_TAR, NodeCheck.IMAGE, NodeCheck.IMAGE_REFERENCE);
        member = cluster.members.getFirst();
        // a new one-member cluster at 3.5 (the runner records the target, etcd bootstraps), its API server
        cluster.writeManifest(member, manifest(OLD));
        awaitServing(OLD);
        api = cluster.startApiServer();
        awaitMirrorPodReady();
        kubeconfig = cluster.adminKubeconfig();
        long up = ms(t1);
        // the snapshot an operator takes before an upgrade: this cluster's own data at 3.5 (its API objects too)
        long t2 = System.nanoTime();
        for (int i = 0; i < 30; i++) {
            SNAPPED.put(PREFIX + "snap-" + i, "snap-" + i);
            member.etcd().put(PREFIX + "snap-" + i, "snap-" + i, 0);
        }
        snapshot = cluster.dir.resolve("etcd-snapshot-3.5.db");
        Path pki = member.pki;
        KubeletNode.run(
                        List.of(
                                NodeCheck.BIN_DIR.resolve("etcdctl-" + OLD).toString(),
                                "--endpoints=" + member.clientUrl(),
                                "--cacert=" + pki.resolve("ca.crt"),
                                "--cert=" + pki.resolve("server.crt"),
                                "--key=" + pki.resolve("server.key"),
                                "snapshot",
                                "save",
                                snapshot.toString()),
                        Duration.ofMinutes(1))
                .check("etcdctl " + OLD + " snapshot save");
        // then the upgrade: one edit to the top line
        cluster.writeManifest(member, manifest(TOP));
        awaitServing(TOP);
        awaitMirrorPodReady();
        report(
                "node %s up, etcd %s serving, API server ready, mirror pod Ready in %d ms (kubectl, crictl, kubelet: %d ms);"
                                .formatted(member.name, OLD, up, tools)
                        + " %d keys written, snapshot saved, upgraded to %s (mirror pod Ready) in %d ms"
                                .formatted(SNAPPED.size(), TOP, ms(t2)));
    }

    /**
     * The shipped entrypoint manifest for the member at `target`, with a CPU request of a whole core instead of
     * 100m: a command exec'd into the container (status) runs in the container's cgroup, and with a tenth of a
     * core's weight on a machine this check shares with other suites, the JVM's start and TLS handshake can outlast
     * status's own request timeouts.
     */
    static String manifest(String target) throws Exception {
        String y = cluster.render(member, target);
        assertTrue(y.contains("cpu: 100m"), "the shipped CPU request");
        return y.replace("cpu: 100m", "cpu: \"1\"");
    }

    static void awaitServing(String version) throws Exception {
        KubeletNode.await(
                member.name + " serves " + version,
                SERVE,
                () -> member.etcd().serverVersion().map(version::equals).orElse(false)
                        && member.etcd().serving());
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
            if (file != null) Files.writeString(Path.of(file).resolveSibling("runbook-report.txt"), text);
        }
    }

    /**
     * status.md: `STATUS` through `kubectl exec` into the member's pod and through `crictl exec` on the node (done:
     * exit 0, the member at the target in the JSON); the bounded wait; then a stale record planted by the test (a
     * restart 3.5 -> 3.6 of the member, which serves 3.7): exit 5 and the record stale; the removal block; exit 0 and
     * no record.
     */
    @Test
    @Order(1)
    void statusRunbook(@TempDir Path work) throws Exception {
        long t0 = System.nanoTime();
        Runbook book = open("status.md", work, Map.of());
        for (Runbook.Block b : book.blocks) {
            if (b.place().equals("env")) continue;
            boolean removal = b.script().contains(RolloutCoordinator.RECORD_KEY);
            if (removal) {
                member.etcd()
                        .put(
                                RolloutCoordinator.RECORD_KEY,
                                new RecordValue(
                                                member.name,
                                                MinorLine.parse("3.5"),
                                                MinorLine.parse("3.6"),
                                                Instant.now())
                                        .toJson(),
                                0);
                Status stale = status(book, b.place(), "stuck");
                assertEquals(exitThrough(b.place(), 5), stale.exit(), "a stale record: stuck; " + stale.json());
                assertEquals("stuck", stale.json().path("state").asText());
                assertTrue(
                        stale.json().path("record").has("stale"), stale.json().toString());
                report("status.md: record planted: %s exit %d, record stale (%s)"
                        .formatted(
                                b.place(),
                                stale.exit(),
                                stale.json().path("record").path("stale").asText()));
            }
            Runbook.Run run = book.run(b, BLOCK).check();
            report("status.md: block %d (%s, %s) ran in %d ms"
                    .formatted(b.index(), b.place(), b.firstLine(), run.millis()));
            if (b.script().contains("STATUS()") || removal) {
                Status s = status(book, b.place(), "done");
                assertEquals(0, s.exit(), b.place() + ": status after block " + b.index() + ": " + s.json());
                assertEquals("done", s.json().path("state").asText());
                JsonNode m = s.json().path("members").path(0);
                assertEquals(member.name, m.path("name").asText(), s.json().toString());
                assertEquals(TOP, m.path("etcdVersion").asText(), s.json().toString());
                assertTrue(s.json().path("record").isNull(), s.json().toString());
                report("status.md: %s STATUS -o json: exit 0, state done, %s at %s, no record, in %d ms"
                        .formatted(b.place(), member.name, TOP, s.millis()));
            }
        }
        assertTrue(
                member.etcd().range(RolloutCoordinator.RECORD_KEY).isEmpty(), "the removal block removed the record");
        report("status.md: %d blocks in %d ms".formatted(book.blocks.size(), ms(t0)));
    }

    /**
     * restore.md: the cluster's own snapshot, taken at 3.5.35 before its upgrade, restored into the member, which
     * serves 3.7.3 with keys written since. Every block as written, in order; the test stops its API server where step 1 parks
     * kube-apiserver.yaml and starts it where step 5 puts it back (the fixture's API server is a process, not a static
     * pod). After the wait: exactly the snapshot's keys at 3.7.3, a new write's revision above the bump, the member
     * `restored` in STATUS's JSON; the time from the edit to that and to the API server ready is reported. After the
     * manifest without the additions: the restored data still (no second restore). After the way back: the keys
     * written since the snapshot again, revisions below the bump.
     */
    @Test
    @Order(3)
    void restoreRunbook(@TempDir Path work) throws Exception {
        long t0 = System.nanoTime();
        // the data the restore keeps is the way back's: a restart record in it (status.md's check planted one and
        // failed before its removal block) makes the way back's member stuck, and its bounded wait fails
        assertTrue(
                member.etcd().range(RolloutCoordinator.RECORD_KEY).isEmpty(),
                "a restart record before the restore: " + member.etcd().range(RolloutCoordinator.RECORD_KEY));
        // written after the snapshot, at 3.7: lost by the restore, back after the way back
        Map<String, String> own = new java.util.TreeMap<>(SNAPPED);
        for (int i = 0; i < 20; i++) {
            own.put(PREFIX + "own-" + i, "own-" + i);
            member.etcd().put(PREFIX + "own-" + i, "own-" + i, 0);
        }
        Map<String, String> snapped = SNAPPED;
        String sha256 = java.util.HexFormat.of()
                .formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(snapshot)));
        Map<String, String> overrides = new java.util.LinkedHashMap<>();
        overrides.put("SNAPSHOT", snapshot.toString());
        overrides.put("SNAPSHOT_SHA256", sha256);
        overrides.put("RESTORE_DIR", member.node.root.resolve("etcd-restore").toString());
        overrides.put("DATA", member.data.toString());
        overrides.put("MANIFESTS", member.node.manifests.toString());
        overrides.put("PARKED", member.node.root.resolve("etcd-restore-parked").toString());
        Runbook book = open("restore.md", work.resolve("shell"), overrides);
        long edit = 0;
        long restoredMs = -1;
        long apiMs = -1;
        for (Runbook.Block b : book.blocks) {
            if (b.place().equals("env")) continue;
            String text = b.script();
            boolean parksApi = text.contains("mv \"$MANIFESTS/kube-apiserver.yaml\"");
            boolean editsManifest = text.contains("RESTORE_SNAPSHOT") && text.contains("awk");
            boolean waits = text.contains("mv \"$PARKED/kube-apiserver.yaml\"");
            boolean after = text.contains("etcd.yaml.before-restore") && text.contains("with_restore");
            boolean wayBack = text.contains("restore-backups");
            if (parksApi) api.close();
            if (editsManifest) edit = System.nanoTime();
            Runbook.Run run = book.run(b, BLOCK).check();
            report("restore.md: block %d (%s, %s) ran in %d ms"
                    .formatted(b.index(), b.place(), b.firstLine(), run.millis()));
            if (waits) {
                restoredMs = ms(edit);
                assertEquals(TOP, member.etcd().serverVersion().orElse(""), "the restored member's etcd");
                assertEquals(snapped, values(member.etcd().range(PREFIX)), "exactly the snapshot's keys");
                long revision = member.etcd().put(PREFIX + "after-restore", "written after the restore", 0);
                assertTrue(revision > 1_000_000_000L, "a write after the restore at revision " + revision);
                Status s = status(book, "node", "done");
                assertEquals(0, s.exit(), s.json().toString());
                assertEquals(
                        "restored",
                        s.json()
                                .path("restore")
                                .path("members")
                                .path(0)
                                .path("state")
                                .asText(),
                        s.json().toString());
                long t = System.nanoTime();
                api = cluster.startApiServer();
                apiMs = restoredMs + ms(t);
                report("restore.md: "
                        + "edit -> etcd %s restored, serving the snapshot's %d keys (STATUS done, member restored): %d ms;"
                                .formatted(TOP, snapped.size(), restoredMs)
                        + " -> API server ready: %d ms; a new write at revision %d".formatted(apiMs, revision));
            }
            if (after) {
                Map<String, String> expected = new java.util.TreeMap<>(snapped);
                expected.put(PREFIX + "after-restore", "written after the restore");
                assertEquals(expected, values(member.etcd().range(PREFIX)), "the restored data, not restored again");
            }
            if (wayBack) {
                assertEquals(own, values(member.etcd().range(PREFIX)), "the member's own keys after the way back");
                long revision = member.etcd().put(PREFIX + "after-way-back", "x", 0);
                assertTrue(revision < 1_000_000_000L, "the old data's revisions: " + revision);
                member.etcd().delete(PREFIX + "after-way-back");
            }
        }
        assertTrue(restoredMs > 0 && apiMs > 0, "the runbook has the wait and the API server's return");
        report(
                "restore.md: %d blocks in %d ms (the cluster's %s snapshot, %d keys of the check's, sha256 %s..., into %s)"
                        .formatted(book.blocks.size(), ms(t0), OLD, snapped.size(), sha256.substring(0, 12), TOP));
    }

    /**
     * exit-codes.md on a refusal met the way an operator meets one: the member's etcd container ends (stopped through
     * the runtime, as a crash or a node's restart ends it), and the kubelet's restart of the same pod finds a
     * malformed version.txt (a hand edit naming the minor line, not the release): exit 2, nothing touched. The
     * kubelet is held while the container stops, the member dir is digested and the label is written, so that the
     * digest is of the data before the refusal's first run. The exit code and the reason come from the facts (the
     * ended container's exit code, the termination message the kubelet keeps); the `node` block, run while etcd
     * (so the API server's storage) is down, must print both; then the fix of the table's row (version.txt removed),
     * the member serving the top line with every key as it was (revisions too), and the `operator` block, which
     * must print both from the same pod's last state.
     */
    @Test
    @Order(2)
    void exitCodesRunbook(@TempDir Path work) throws Exception {
        long t0 = System.nanoTime();
        Map<String, EtcdGateway.Kv> keys = member.etcd().range(PREFIX);
        assertTrue(keys.keySet().containsAll(SNAPPED.keySet()), "the earlier checks' keys: " + keys.keySet());
        Runbook book = open("exit-codes.md", work, Map.of("NODE", member.name));
        Path label = member.data.resolve("version.txt");
        JsonNode pod = awaitMirrorPodReady();
        String configHash = pod.path("metadata")
                .path("annotations")
                .path("kubernetes.io/config.hash")
                .asText();
        int restarts = pod.path("status")
                .path("containerStatuses")
                .path(0)
                .path("restartCount")
                .asInt();
        JsonNode serving = newestEtcd();
        String servingId = serving.path("status").path("id").asText();
        assertEquals("CONTAINER_RUNNING", serving.path("status").path("state").asText(), serving.toString());

        ProcessHandle kubelet = kubelet();
        Map<String, String> before;
        long stopped;
        KubeletNode.run(List.of("kill", "-STOP", Long.toString(kubelet.pid())), Duration.ofSeconds(10))
                .check("kill -STOP the kubelet");
        try {
            cri("stop", "--timeout", "30", servingId);
            stopped = System.nanoTime();
            before = TreeDigest.of(member.data.resolve("member"));
            Files.writeString(label, "3.7/etcd3\n");
        } finally {
            KubeletNode.run(List.of("kill", "-CONT", Long.toString(kubelet.pid())), Duration.ofSeconds(10))
                    .check("kill -CONT the kubelet");
        }
        JsonNode[] ended = {null};
        KubeletNode.await("the restarted etcd container ended", SERVE, () -> {
            JsonNode c = newestEtcd();
            ended[0] = c;
            return !c.path("status").path("id").asText().equals(servingId)
                    && c.path("status").path("state").asText().equals("CONTAINER_EXITED");
        });
        long refusedMs = ms(stopped);
        JsonNode refused = ended[0].path("status");
        int code = refused.path("exitCode").asInt();
        String message = terminationMessage(refused).strip();
        assertEquals(ExitStatus.USAGE.code(), code, "the runner's exit code (the container's): " + refused);
        assertFalse(message.isEmpty(), "a termination message: " + refused);
        assertEquals(before, TreeDigest.of(member.data.resolve("member")), "the member dir after the refusal");
        assertEquals("3.7/etcd3\n", Files.readString(label), "the label as planted");
        report("exit-codes.md: etcd stopped, version.txt 3.7/etcd3 -> the same pod's next container ended in %d ms:"
                        .formatted(refusedMs)
                + " exit %d, termination message of %d chars (the runtime's own message: \"%s\"); member/ ("
                        .formatted(
                                code, message.length(), refused.path("message").asText())
                + "%d paths, modes and contents) unchanged".formatted(before.size()));

        long fixed = 0;
        for (Runbook.Block b : book.blocks) {
            if (b.place().equals("env")) continue;
            if (b.place().equals("operator")) {
                // the table's row: remove version.txt, the runner reads the data itself
                Files.delete(label);
                fixed = System.nanoTime();
                awaitServing(TOP);
                long servingMs = ms(fixed);
                assertEquals(keys, member.etcd().range(PREFIX), "every key as it was, revisions too");
                String running = newestEtcd().path("status").path("id").asText();
                JsonNode[] seen = {null};
                try {
                    KubeletNode.await(
                            "mirror pod etcd-" + member.name + " shows the restarted container", SERVE, () -> {
                                JsonNode p = member.mirrorPod();
                                JsonNode s = p == null
                                        ? null
                                        : p.path("status")
                                                .path("containerStatuses")
                                                .path(0);
                                seen[0] = s;
                                return s != null
                                        && s.path("ready").asBoolean()
                                        && s.path("containerID").asText().endsWith("://" + running)
                                        && s.path("restartCount").asInt() > restarts;
                            });
                } catch (AssertionError e) {
                    throw new AssertionError(
                            e.getMessage() + "; running " + running + ", restarts before " + restarts
                                    + "; the mirror pod's last container status: " + seen[0] + "; containers: "
                                    + cri("ps", "-a"),
                            e);
                }
                JsonNode now = member.mirrorPod();
                assertEquals(
                        configHash,
                        now.path("metadata")
                                .path("annotations")
                                .path("kubernetes.io/config.hash")
                                .asText(),
                        "the same static pod");
                report("exit-codes.md: version.txt removed -> etcd %s serving the %d keys as they were in %d ms,"
                                .formatted(TOP, keys.size(), servingMs)
                        + " the mirror pod's status in %d ms (restarts %d -> %d); version.txt now: %s"
                                .formatted(
                                        ms(fixed),
                                        restarts,
                                        now.path("status")
                                                .path("containerStatuses")
                                                .path(0)
                                                .path("restartCount")
                                                .asInt(),
                                        Files.exists(label)
                                                ? Files.readString(label).strip()
                                                : "none"));
            }
            Runbook.Run run = book.run(b, BLOCK).check();
            assertTrue(
                    run.output().contains(code + " " + message),
                    b.place() + " block " + b.index() + " must print the exit code and the termination message (" + code
                            + " " + message + "):\n" + run.output());
            report("exit-codes.md: block %d (%s, %s) ran in %d ms, printed exit %d and the message"
                    .formatted(b.index(), b.place(), b.firstLine(), run.millis(), code));
        }
        assertTrue(fixed > 0, "the runbook has an operator block");
        report("exit-codes.md: %d blocks in %d ms".formatted(book.blocks.size(), ms(t0)));
    }

    /** The newest etcd container of the node, as `crictl inspect` shows it. */
    static JsonNode newestEtcd() throws Exception {
        String id = cri("ps", "-a", "--name", "^etcd$", "-q")
                .lines()
                .map(String::strip)
                .filter(l -> l.matches("[0-9a-f]{12,}"))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no etcd container on " + member.name));
        String out = cri("inspect", id);
        return JSON.readTree(out.substring(out.indexOf('{')));
    }

    /** The termination message of an ended container: the file the kubelet mounts as /dev/termination-log. */
    static String terminationMessage(JsonNode status) throws Exception {
        for (JsonNode m : status.path("mounts"))
            if (m.path("containerPath").asText().equals("/dev/termination-log"))
                return Files.readString(Path.of(m.path("hostPath").asText()));
        throw new AssertionError("no /dev/termination-log mount: " + status);
    }

    /** crictl on the member's node's containerd, its output. */
    static String cri(String... args) throws Exception {
        String endpoint = "unix://" + member.node.socket();
        List<String> command = new ArrayList<>(
                List.of(crictl.toString(), "--runtime-endpoint", endpoint, "--image-endpoint", endpoint));
        command.addAll(List.of(args));
        return KubeletNode.run(command, Duration.ofMinutes(1))
                .check("crictl " + String.join(" ", args))
                .output();
    }

    /** The member's node's kubelet (its command line names the node's own kubelet.yaml). */
    static ProcessHandle kubelet() throws Exception {
        String config = "--config=" + member.node.root.resolve("kubelet.yaml");
        List<ProcessHandle> found = KubeletNode.processesOf(member.node.root, java.util.Set.of()).stream()
                .filter(p -> p.contains(" " + config))
                .map(p -> ProcessHandle.of(Long.parseLong(p.split(" ", 2)[0])))
                .flatMap(java.util.Optional::stream)
                .toList();
        assertEquals(1, found.size(), "the kubelet of " + member.name + ": " + found);
        return found.getFirst();
    }

    static Map<String, String> values(Map<String, EtcdGateway.Kv> kvs) {
        Map<String, String> values = new java.util.TreeMap<>();
        kvs.forEach((k, v) -> values.put(k, v.value()));
        return values;
    }

    record Status(int exit, JsonNode json, long millis) {}

    /**
     * The exit code status's {@code code} comes back as through a place's exec: `crictl exec` turns any non-zero exit
     * into its own 1 ("command terminated with exit code N"); `kubectl exec` passes it on.
     */
    static int exitThrough(String place, int code) {
        return place.equals("node") && code != 0 ? 1 : code;
    }

    /**
     * The runbook's own STATUS function of a place, with `-o json`, until its JSON says {@code state} (a
     * deadline-bound poll: a JVM started in the etcd container on a loaded machine answers late).
     */
    static Status status(Runbook book, String place, String state) throws Exception {
        Status[] last = {null};
        String[] output = {""};
        try {
            KubeletNode.await(place + " STATUS -o json says " + state, Duration.ofMinutes(3), () -> {
                Runbook.Run r = book.probe(
                                place, "rc=0; STATUS -o json || rc=$?; echo \"exit=$rc\"", Duration.ofMinutes(2))
                        .check();
                output[0] = r.output();
                String json = r.output()
                        .lines()
                        .filter(l -> l.startsWith("{"))
                        .reduce((a, b) -> b)
                        .orElse(null);
                String exit = r.output()
                        .lines()
                        .filter(l -> l.startsWith("exit="))
                        .reduce((a, b) -> b)
                        .orElseThrow();
                if (json == null) return false;
                last[0] = new Status(Integer.parseInt(exit.substring(5)), JSON.readTree(json), r.millis());
                return last[0].json().path("state").asText().equals(state);
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\nlast reading:\n" + output[0], e);
        }
        return last[0];
    }

    /** A runbook with the node's and the operator's places. */
    static Runbook open(String name, Path work, Map<String, String> overrides) throws Exception {
        Runbook book = new Runbook(RUNBOOKS.resolve(name), work, overrides);
        String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
        String runtime = "unix://" + member.node.socket();
        book.place(
                "node",
                new Runbook.Place(
                        cluster.lab.enter(member.index),
                        Map.of(
                                "CONTAINER_RUNTIME_ENDPOINT", runtime,
                                "IMAGE_SERVICE_ENDPOINT", runtime,
                                "PATH", crictl.getParent() + ":" + path)));
        book.place(
                "operator",
                new Runbook.Place(
                        List.of(),
                        Map.of("KUBECONFIG", kubeconfig.toString(), "PATH", kubectl.getParent() + ":" + path)));
        return book;
    }

    static JsonNode awaitMirrorPodReady() throws Exception {
        JsonNode[] pod = new JsonNode[1];
        KubeletNode.await("mirror pod etcd-" + member.name + " Ready", SERVE, () -> {
            pod[0] = member.mirrorPod();
            return pod[0] != null
                    && pod[0].path("status")
                            .path("containerStatuses")
                            .path(0)
                            .path("ready")
                            .asBoolean();
        });
        return pod[0];
    }

    static long ms(long since) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }

    static void report(String line) {
        System.out.println("[RunbookCheck] " + line);
        synchronized (REPORT) {
            REPORT.add(line);
        }
    }
}
