package dev.etcdmigrate.it.restore;

import static dev.etcdmigrate.it.support.Jetcd.bytes;
import static dev.etcdmigrate.it.support.Jetcd.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.InProcess;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.it.cluster.ClusterLab;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.data.DataClaimsIT;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.restore.RestoreIdentity;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.maintenance.StatusResponse;
import io.etcd.jetcd.options.GetOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A whole cluster taken from 3.5 down to 3.4 by the restore mode (docs/restore.md, "Into an older line"), the row a
 * member cannot take in place: a snapshot of a live 3.5 cluster (peer TLS), every member restored one at a time by
 * 3.4's own restore tool with the snapshot's revisions kept, the cluster forming on 3.4 under the IDs the restore
 * derives; a member left on its 3.5 data meanwhile answers for its old cluster, which {@code status} reports without
 * being told of the restore, and the restored cluster never hears from it.
 */
class RestoreDowngradeIT {

    private static final Duration DEADLINE = Duration.ofMinutes(6);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<Client> clients = new ArrayList<>();
    private ClusterLab cluster;

    @AfterEach
    void stopAll() throws Exception {
        for (Client client : clients) client.close();
        if (cluster != null) cluster.close();
    }

    @Test
    void a35ClusterRestoredInto34MemberByMemberKeepsTheSnapshotsRevisions(@TempDir Path dir) throws Exception {
        Release from = ClusterLab.line("3.5");
        Release to = ClusterLab.line("3.4");
        cluster = ClusterLab.create(dir, 3, ClusterLab.Layout.ONE_HOST, "restore-down", ClusterLab.Tls.PEER);
        List<Member> members = cluster.members();
        List<RunnerProcess> serving = new ArrayList<>();
        for (Member m : members) serving.add(cluster.start(m, from));
        for (int i = 0; i < members.size(); i++) ClusterLab.awaitServing(members.get(i), serving.get(i), DEADLINE);
        Client old = client(members.stream().map(Member::clientUrl).toArray(String[]::new));
        for (int k = 0; k < 150; k++) put(old, "/registry/before/" + k, "value-" + k);
        for (int k = 0; k < 40; k++) put(old, "/registry/before/" + (k * 3), "again-" + k); // mod != create revision
        long oldClusterId = clusterId(old);

        Path snapshot = dir.resolve("snapshot.db");
        RestoreIT.etcdctl(from, members.getFirst().clientUrl(), "snapshot", "save", snapshot.toString());
        Keyspace inSnapshot = Keyspace.read(old);
        for (int k = 0; k < 30; k++) put(old, "/registry/after/" + k, "lost-" + k);
        String sha = RestoreIT.sha256(snapshot);
        String token = RestoreIdentity.token(sha);

        // in place, a member of the 3.5 cluster is refused 3.4, and the refusal names the restore mode as the way
        try (RunnerProcess plan = cluster.run("plan", members.get(0), to)) {
            assertEquals(ExitStatus.REFUSED.code(), plan.exitCode(), plan.output());
            String reason = plan.ending().path("reason").asText();
            assertTrue(
                    reason.contains("RESTORE_SNAPSHOT") && reason.contains("TARGET_VERSION=" + to.version()), reason);
        }

        // m0 and m1 stop for their restore; m2 keeps serving its 3.5 data, alone
        for (int i = 0; i < 2; i++) {
            serving.get(i).process().toHandle().destroy();
            serving.get(i).awaitExit(Duration.ofSeconds(30));
        }
        Member stale = members.get(2);

        // 3.4's restore tool cannot raise the revision: the default bump is refused before anything changes
        Map<String, String> untouched = TreeDigest.of(members.get(0).data());
        try (RunnerProcess refused = restoreRunner(members.get(0), to, snapshot, sha)) {
            assertEquals(ExitStatus.REFUSED.code(), refused.awaitExit(DEADLINE), refused.output());
            String reason = refused.ending().path("reason").asText();
            assertTrue(reason.contains("RESTORE_BUMP_REVISION=0") && reason.contains("into etcd 3.4"), reason);
        }
        assertEquals(untouched, TreeDigest.of(members.get(0).data()), "the refused restore changed nothing");

        // plan previews the restore by 3.4's tool, revisions kept, and no walk after it
        try (RunnerProcess plan = cluster.run(
                "plan",
                members.get(0),
                to,
                "-o",
                "json",
                "--restore-snapshot",
                snapshot.toString(),
                "--restore-sha256",
                sha,
                "--restore-bump-revision",
                "0")) {
            assertEquals(0, plan.exitCode(), plan.output());
            JsonNode planned = JSON.readTree(plan.output()
                    .lines()
                    .filter(l -> l.startsWith("{\"restore\""))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(plan.output())));
            JsonNode restore = planned.path("restore");
            assertTrue(restore.path("line").asText().startsWith("3.5."), restore.toString()); // its cluster version
            assertEquals("etcdctl " + to.version(), restore.path("restoreWith").asText(), restore.toString());
            assertEquals(
                    to.version() + "/etcd3", restore.path("restoredVersion").asText(), restore.toString());
            assertEquals(0, restore.path("bumpRevision").asLong(), restore.toString());
            assertEquals(to.version() + "/etcd3", planned.path("current").asText(), planned.toString());
            assertEquals(0, planned.path("steps").size(), planned.toString());
        }
        assertEquals(untouched, TreeDigest.of(members.get(0).data()), "plan changed nothing");

        // one at a time: m0, then m1; a quorum of restored members forms the 3.4 cluster
        List<RunnerProcess> restored = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            restored.add(restoreRunner(members.get(i), to, snapshot, sha, "--restore-bump-revision", "0"));
            JsonNode done = restored.get(i).awaitEvent("snapshot-restored", DEADLINE);
            assertEquals(
                    to.version(), done.path("version").asText(), restored.get(i).output());
            assertEquals(0, done.path("bumpRevision").asLong());
            if (i > 0) continue;
            // m0 alone waits for a quorum, its db still records the snapshot's 3.5 cluster version: inspect and a
            // restarted pod take version.txt 3.4.23 as the restore wrote it, and nothing is restored again
            restored.get(0).awaitEvent("exec", DEADLINE);
            JsonNode inspected = DataClaimsIT.inspect(members.get(0).data(), to.version());
            assertEquals("agrees", inspected.path("label").path("verdict").asText(), inspected.toString());
            restored.get(0).process().toHandle().destroy();
            restored.get(0).awaitExit(Duration.ofSeconds(30));
            restored.set(0, restoreRunner(members.get(0), to, snapshot, sha, "--restore-bump-revision", "0"));
            restored.get(0).awaitEvent("exec", DEADLINE);
            assertEquals(
                    1,
                    restored.get(0).count("already-restored"),
                    restored.get(0).output());
            assertEquals(
                    0,
                    restored.get(0).count("snapshot-restored"),
                    restored.get(0).output());
        }
        for (int i = 0; i < 2; i++) {
            restored.get(i).awaitEvent("exec", DEADLINE);
            ClusterLab.awaitServing(members.get(i), restored.get(i), DEADLINE);
        }

        // status told nothing of the restore: two clusters answer, each member with its cluster ID; not done
        InProcess.Result twoClusters = status(members);
        JsonNode report = JSON.readTree(twoClusters.out());
        assertEquals(ExitStatus.ROLLING.code(), twoClusters.exit(), twoClusters.out() + twoClusters.err());
        long restoredClusterId = clusterId(client(members.get(0).clientUrl()));
        Map<String, String> answered = new HashMap<>();
        for (JsonNode a : report.path("answers"))
            answered.put(a.path("url").asText(), a.path("clusterId").asText());
        for (int i = 0; i < 2; i++)
            assertEquals(
                    Long.toHexString(restoredClusterId),
                    answered.get(members.get(i).clientUrl()),
                    report.path("answers").toString());
        assertEquals(Long.toHexString(oldClusterId), answered.get(stale.clientUrl()), report.toString());
        assertEquals(2, java.util.Set.copyOf(answered.values()).size(), "two clusters answer: " + report);

        // the member on its 3.5 data is not part of the restored cluster: listed there as never started, and its
        // own cluster still has it (its raft messages carry the old cluster ID, which the restored members drop)
        Client fresh = client(members.get(0).clientUrl(), members.get(1).clientUrl());
        io.etcd.jetcd.cluster.Member listed =
                fresh.getClusterClient().listMember().get(30, TimeUnit.SECONDS).getMembers().stream()
                        .filter(m -> m.getPeerURIs().stream()
                                .anyMatch(u -> u.toString().equals(stale.peerUrl())))
                        .findFirst()
                        .orElseThrow();
        assertEquals(List.of(), listed.getClientURIs(), "m2 never joined the restored cluster");
        assertTrue(serving.get(2).process().isAlive(), "m2 ran on its old data all along");
        long probe = put(fresh, "/registry/restored/while-m2-old", "new");
        // alone, m2 has no leader: a serializable read answers from its own data
        long onStale = client(stale.clientUrl())
                .getKVClient()
                .get(
                        bytes("/registry/restored/while-m2-old"),
                        GetOption.builder().withSerializable(true).build())
                .get(30, TimeUnit.SECONDS)
                .getCount();
        assertEquals(0, onStale, "m2 never saw the restored cluster's write");

        // m2 restored too: the three form the cluster on 3.4
        serving.get(2).process().toHandle().destroy();
        serving.get(2).awaitExit(Duration.ofSeconds(30));
        restored.add(restoreRunner(stale, to, snapshot, sha, "--restore-bump-revision", "0"));
        restored.get(2).awaitEvent("exec", DEADLINE);
        ClusterLab.awaitServing(stale, restored.get(2), DEADLINE);

        Map<Long, String> expectedIds = new HashMap<>();
        for (Member m : members) expectedIds.put(RestoreIdentity.memberId(List.of(m.peerUrl()), token), m.name());
        long expectedCluster = RestoreIdentity.clusterId(expectedIds.keySet());
        assertEquals(expectedCluster, restoredClusterId, "the cluster ID the restore derives");
        assertNotEquals(oldClusterId, restoredClusterId, "a new cluster ID");
        Map<Long, String> ids = new HashMap<>();
        for (io.etcd.jetcd.cluster.Member m :
                fresh.getClusterClient().listMember().get(30, TimeUnit.SECONDS).getMembers())
            ids.put(m.getId(), m.getName());
        assertEquals(expectedIds, ids, "the member IDs the restore derives, every member started");

        for (int i = 0; i < 3; i++) {
            Member m = members.get(i);
            assertEquals(to.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
            Client one = client(m.clientUrl());
            StatusResponse st =
                    one.getMaintenanceClient().statusMember(m.clientUrl()).get(30, TimeUnit.SECONDS);
            assertEquals(to.version(), st.getVersion(), m.name() + " runs 3.4");
            assertEquals(expectedCluster, st.getHeader().getClusterId(), m.name());
            Keyspace onMember = Keyspace.read(one);
            Map<String, Keyspace.Entry> snapshotKeys = new HashMap<>(onMember.entries());
            snapshotKeys.remove("/registry/restored/while-m2-old");
            // every key of the snapshot, with its value, create and mod revision and version; nothing written after
            assertEquals(inSnapshot.entries(), snapshotKeys, "exactly the snapshot's keys on " + m.name());
            assertFalse(onMember.entries().containsKey("/registry/after/1"), m.name());
        }
        assertTrue(probe > inSnapshot.revision(), "revisions go on from the snapshot's: " + probe);
        long written = put(client(stale.clientUrl()), "/registry/restored/all", "new");
        assertTrue(written > probe, "a write through the last restored member: " + written);
    }

    private RunnerProcess restoreRunner(Member m, Release to, Path snapshot, String sha, String... more)
            throws Exception {
        List<String> flags =
                new ArrayList<>(List.of("--restore-snapshot", snapshot.toString(), "--restore-sha256", sha));
        flags.addAll(List.of(more));
        return cluster.start(
                m, to, cluster.certificates().caFile(), m.listenPeerUrl(), false, flags.toArray(String[]::new));
    }

    /** {@code status -o json} over every member's client URL, told nothing of a restore. */
    private static InProcess.Result status(List<Member> members) {
        return InProcess.run(
                List.of(
                        "status",
                        "-o",
                        "json",
                        "--endpoints",
                        String.join(",", members.stream().map(Member::clientUrl).toList())),
                Map.of());
    }

    private static long clusterId(Client client) throws Exception {
        return client.getKVClient()
                .get(bytes("/"))
                .get(30, TimeUnit.SECONDS)
                .getHeader()
                .getClusterId();
    }

    private Client client(String... endpoints) {
        Client client = Client.builder().endpoints(endpoints).build();
        clients.add(client);
        return client;
    }
}
