package dev.etcdmigrate.it.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A member replaced as kubeadm replaces a node: removed from its cluster, its data dir emptied, added again and its
 * pod started with {@code --initial-cluster-state=existing}. etcd takes it only at the cluster's line, and its data is
 * the leader's snapshot whatever the target: the runner labels nothing before its etcd ran, and a target on another
 * line joins at the cluster's line first, then walks its legs from the data it received.
 */
class ReplacedMemberIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration DEADLINE = Duration.ofMinutes(3);
    private static final int KEYS = 40;
    private static final String PREFIX = "replaced/";

    private ClusterLab lab;

    @AfterEach
    void stopAll() throws Exception {
        if (lab != null) lab.close();
    }

    @Test
    void aReplacedMemberAtTheClustersLineJoinsWithoutALabelBeforeItsDataExists(@TempDir Path dir) throws Exception {
        Release line = ClusterLab.line("3.6");
        Member m2 = replaced(dir, line);
        RunnerProcess runner = lab.start(m2, line);
        runner.awaitEvent("exec", DEADLINE);
        ClusterLab.awaitServing(m2, runner, DEADLINE);
        assertFalse(
                Files.exists(m2.data().resolve("version.txt")),
                "no version.txt written on the empty dir before its etcd ran: " + runner.output());
        assertEveryKeyOn(m2);
    }

    @Test
    void aReplacedMemberWhoseTargetIsOlderJoinsAtTheClustersLineThenWalksDown(@TempDir Path dir) throws Exception {
        Release cluster = ClusterLab.line("3.6");
        Release target = ClusterLab.line("3.5");
        Member m2 = replaced(dir, cluster);
        RunnerProcess runner = lab.start(m2, target);
        runner.awaitEvent("exec", Duration.ofMinutes(6));
        ClusterLab.awaitServing(m2, runner, DEADLINE);
        JsonNode joining = runner.awaitEvent("joining-at-cluster-line", Duration.ZERO);
        assertEquals("3.6", joining.path("line").asText(), joining.toString());
        assertEquals(cluster.version(), joining.path("version").asText(), joining.toString());
        JsonNode joined = runner.awaitEvent("joined-at-cluster-line", Duration.ZERO);
        System.out.printf(
                "replaced member, target %s in a %s cluster: joined at %s, caught up in %d ms%n",
                target.version(),
                cluster.version(),
                joined.path("version").asText(),
                joined.path("millis").asLong());
        assertEquals(
                target.version(),
                JSON.readTree(lab.request("get", m2.clientUrl(), "/version"))
                        .path("etcdserver")
                        .asText(),
                "m2 serves the target");
        assertEquals(
                target.version() + "/etcd3",
                Files.readString(m2.data().resolve("version.txt")).trim(),
                "version.txt: the target, written once the data reached it");
        assertEveryKeyOn(m2);
        assertNextStartAgrees(m2, runner, target);
    }

    @Test
    void aReplacedMemberWhoseTargetIsNewerJoinsAtTheClustersLineThenTakesItsFirstLeg(@TempDir Path dir)
            throws Exception {
        Release cluster = ClusterLab.line("3.5");
        Release between = ClusterLab.line("3.6");
        Release target = ClusterLab.line("3.7");
        Member m2 = replaced(dir, cluster);
        RunnerProcess runner = lab.start(m2, target);
        // the cluster stays at 3.5 (the others are not edited): m2 serves 3.6 between its legs and waits for them
        runner.awaitEvent(
                "member-serving", e -> e.path("version").asText().equals(between.version()), Duration.ofMinutes(6));
        JsonNode joining = runner.awaitEvent("joining-at-cluster-line", Duration.ZERO);
        assertEquals("3.5", joining.path("line").asText(), joining.toString());
        Poll.untilTrue(
                DEADLINE,
                Duration.ofMillis(200),
                "m2 answers at " + between.version(),
                () -> between.version()
                        .equals(JSON.readTree(lab.request("get", m2.clientUrl(), "/version"))
                                .path("etcdserver")
                                .asText()));
        assertEquals(
                between.version() + "/etcd3",
                Files.readString(m2.data().resolve("version.txt")).trim(),
                "version.txt: the line its first leg reached");
        assertEveryKeyOn(m2);
    }

    @Test
    void aReplacedMemberDuringADowngradeJobAtItsTargetIsRefusedWithItsDirLeftEmpty(@TempDir Path dir) throws Exception {
        Release cluster = ClusterLab.line("3.6");
        Release target = ClusterLab.line("3.5");
        // enabled while every member serves: the leader lowers the cluster version to the job's target at once (with
        // a member listed that does not answer it keeps the cluster version, and a member at the target joins)
        Member m2 = replaced(dir, cluster, "3.5");
        try (RunnerProcess runner = lab.start(m2, target)) {
            assertEquals(3, runner.awaitExit(DEADLINE), runner.output());
            String reason = runner.ending().path("reason").asText();
            assertTrue(reason.contains("downgrade job to 3.5"), reason);
            assertEquals(0, runner.count("exec"), runner.output());
        }
        assertFalse(Files.exists(m2.data().resolve("member")), "no etcd ran on the empty dir");
        assertFalse(Files.exists(m2.data().resolve("version.txt")), "no label on the empty dir");
    }

    /**
     * Three members at {@code line} through their runners, {@value #KEYS} keys written, then m2 replaced: its etcd
     * stopped, removed through m0, its data dir emptied, added again through m0, and every runner started from then
     * on with {@code --initial-cluster-state=existing}. Returns m2, not started.
     */
    private Member replaced(Path dir, Release line) throws Exception {
        return replaced(dir, line, null);
    }

    /** The same, with a downgrade job to {@code downgradeTo} enabled first (null: none) and the cluster version at it. */
    private Member replaced(Path dir, Release line, String downgradeTo) throws Exception {
        lab = ClusterLab.create(dir, 3, ClusterLab.Layout.ONE_HOST, "replaced-it", ClusterLab.Tls.PEER);
        List<Member> members = lab.members();
        List<RunnerProcess> runners = new ArrayList<>();
        for (Member m : members) runners.add(lab.start(m, line));
        for (int i = 0; i < members.size(); i++) {
            runners.get(i).awaitEvent("exec", DEADLINE);
            ClusterLab.awaitServing(members.get(i), runners.get(i), DEADLINE);
        }
        Member m0 = members.getFirst();
        for (int i = 0; i < KEYS; i++) {
            lab.request(
                    "post",
                    m0.clientUrl(),
                    "/v3/kv/put",
                    "{\"key\":\"" + b64(PREFIX + i) + "\",\"value\":\"" + b64("v-" + i) + "\"}");
        }
        if (downgradeTo != null) {
            lab.request(
                    "post",
                    m0.clientUrl(),
                    "/v3/maintenance/downgrade",
                    "{\"action\":\"ENABLE\",\"version\":\"" + downgradeTo + "\"}");
            lab.awaitClusterVersion(downgradeTo, DEADLINE);
        }
        Member m2 = members.get(2);
        RunnerProcess old = runners.get(2);
        old.process().toHandle().destroy(); // SIGTERM to the etcd it exec'd
        int code = old.awaitExit(Duration.ofSeconds(30));
        assertTrue(code == 0 || code == 143, "m2's etcd stopped with " + code);
        String id = lab.memberWithPeer(m0, m2.peerUrl()).orElseThrow();
        lab.request("post", m0.clientUrl(), "/v3/cluster/member/remove", "{\"ID\":\"" + id + "\"}");
        try (Stream<Path> files = Files.walk(m2.data())) {
            for (Path f : files.sorted(Comparator.reverseOrder()).toList()) {
                if (!f.equals(m2.data())) Files.delete(f);
            }
        }
        lab.request("post", m0.clientUrl(), "/v3/cluster/member/add", "{\"peerURLs\":[\"" + m2.peerUrl() + "\"]}");
        lab.etcdFlags(List.of("--initial-cluster-state=existing"));
        return m2;
    }

    /** Every key written before the replacement on the member (its own copy), with m0's value and revisions. */
    private void assertEveryKeyOn(Member m) throws Exception {
        Map<String, JsonNode> expected = ours(lab.keysOn(lab.members().getFirst()));
        assertEquals(KEYS, expected.size(), "m0's keys");
        Map<String, JsonNode> actual = ours(lab.keysOn(m));
        for (Map.Entry<String, JsonNode> e : expected.entrySet()) {
            assertEquals(e.getValue(), actual.get(e.getKey()), e.getKey() + " on " + m.name());
        }
        assertEquals(expected.keySet(), actual.keySet(), "no other key under " + PREFIX + " on " + m.name());
    }

    /**
     * The member stopped, its next start's plan from the same data and version.txt: no refusal (version.txt agrees
     * with the data) and nothing left to do.
     */
    private void assertNextStartAgrees(Member m, RunnerProcess serving, Release target) throws Exception {
        serving.process().toHandle().destroy();
        int code = serving.awaitExit(Duration.ofSeconds(30));
        assertTrue(code == 0 || code == 143, m.name() + "'s etcd stopped with " + code);
        try (RunnerProcess plan = lab.run("plan", m, target, "-o", "json")) {
            assertEquals(0, plan.exitCode(), plan.output());
            List<JsonNode> printed = new ArrayList<>();
            for (String line : plan.lines()) { // stdout's line passes through as printed
                if (!line.startsWith("{")) continue;
                JsonNode json = JSON.readTree(line);
                if (!json.has("source") && json.has("steps")) printed.add(json);
            }
            assertEquals(1, printed.size(), "one plan on stdout: " + plan.output());
            JsonNode made = printed.getFirst();
            assertEquals(target.version() + "/etcd3", made.path("current").asText(), made.toString());
            assertEquals(0, made.path("steps").size(), made.toString());
        }
    }

    private static Map<String, JsonNode> ours(Map<String, JsonNode> keys) {
        Map<String, JsonNode> ours = new TreeMap<>();
        keys.forEach((k, v) -> {
            if (k.startsWith(PREFIX)) ours.put(k, v);
        });
        return ours;
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }
}
