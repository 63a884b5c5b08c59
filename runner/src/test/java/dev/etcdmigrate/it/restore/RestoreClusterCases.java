package dev.etcdmigrate.it.restore;

import static dev.etcdmigrate.it.support.Jetcd.bytes;
import static dev.etcdmigrate.it.support.Jetcd.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.InProcess;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.it.cluster.ClusterLab;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import io.grpc.netty.GrpcSslContexts;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;

/**
 * A whole three-member cluster restored from one snapshot through the runner (docs/restore.md), on real etcd, on the
 * layout and with the TLS its subclass gives ({@link RestoreIT}: one host, peer TLS; {@link RestoreHaIT}: network
 * namespaces, peer and client TLS). The test's own process is the client (with namespaces, on a host of its own on
 * the members' network): it writes, saves the snapshot, reads and asks {@code status} over the client URLs, through
 * TLS with the clients' certificate where the members serve it.
 */
abstract class RestoreClusterCases {

    static final Duration DEADLINE = Duration.ofMinutes(6);
    static final long BUMP = 1_000_000_000L;
    static final ObjectMapper JSON = new ObjectMapper();

    private final List<Client> clients = new ArrayList<>();
    ClusterLab cluster;

    /** Where the members run. */
    abstract ClusterLab.Layout layout();

    /** What the members encrypt. */
    abstract ClusterLab.Tls tls();

    @AfterEach
    void stopAll() throws Exception {
        for (Client client : clients) client.close();
        if (cluster != null) cluster.close();
    }

    private ClusterLab lab(Path dir, String token) throws Exception {
        return ClusterLab.create(dir, 3, layout(), token, tls(), true);
    }

    /** The live cluster the snapshot is saved from, and what it held before and after the snapshot. */
    record Live(
            List<RunnerProcess> serving, Client client, Path snapshot, String sha, Keyspace inSnapshot, long lastOld) {}

    /**
     * Every member serving {@code from} through its runner, {@code before} keys written through the client URLs, a
     * snapshot saved from {@code saveFrom}, then {@code after} keys more (the writes the restore loses).
     */
    private Live live(Path dir, Release from, int before, int after, Member saveFrom) throws Exception {
        List<Member> members = cluster.members();
        List<RunnerProcess> serving = new ArrayList<>();
        for (Member m : members) serving.add(cluster.start(m, from));
        for (int i = 0; i < members.size(); i++) cluster.awaitMemberServing(members.get(i), serving.get(i), DEADLINE);
        Client old = client(members.stream().map(Member::clientUrl).toArray(String[]::new));
        for (int k = 0; k < before; k++) put(old, "/registry/before/" + k, "value-" + k);
        Path snapshot = dir.resolve("snapshot.db");
        etcdctl(from, saveFrom, "snapshot", "save", snapshot.toString());
        Keyspace inSnapshot = Keyspace.read(old);
        for (int k = 0; k < after; k++) put(old, "/registry/after/" + k, "lost-" + k);
        long lastOld = Keyspace.read(old).revision();
        return new Live(serving, old, snapshot, sha256(snapshot), inSnapshot, lastOld);
    }

    /** The exec'd etcds stop as under the kubelet (SIGTERM). */
    private static void stop(List<RunnerProcess> serving) throws Exception {
        for (RunnerProcess r : serving) {
            r.process().toHandle().destroy();
            r.awaitExit(Duration.ofSeconds(30));
        }
    }

    /**
     * A snapshot of a live 3.5 cluster restored into 3.7 members one at a time: {@code plan} first (nothing changed),
     * {@code status} before; m0 and m1 restored while m2 runs its old data (the restored cluster never hears from it:
     * its members list it as never started, {@code status} says not restored), exactly the snapshot's keys with the
     * revision raised, old revisions compacted for reads and watches, a new cluster ID; then m2 restored and every
     * member at 3.7 with the same keys; a restart with the same hash restores nothing.
     */
    void oneAtATime(Path dir) throws Exception {
        Release from = ClusterLab.line("3.5");
        Release to = EtcdFixture.newest();
        cluster = lab(dir, "restore-it");
        List<Member> members = cluster.members();
        Live live = live(dir, from, 200, 50, members.getFirst());
        Client old = live.client();
        long oldClusterId = old.getKVClient()
                .get(bytes("/"))
                .get(30, TimeUnit.SECONDS)
                .getHeader()
                .getClusterId();
        Path snapshot = live.snapshot();
        Keyspace inSnapshot = live.inSnapshot();
        long lastOld = live.lastOld();
        String sha = live.sha();
        // before any member is restored, status shows every member on the old cluster and names the cluster ID the
        // restore will give (etcd's own arithmetic over the peer URLs and the token)
        InProcess.Result before = status(members, sha);
        JsonNode beforeRestore = JSON.readTree(before.out()).path("restore");
        assertEquals(ExitStatus.ROLLING.code(), before.exit(), before.out() + before.err());
        assertEquals(0, beforeRestore.path("restored").asInt(), beforeRestore.toString());
        for (Member m : members) {
            JsonNode row = restoreState(beforeRestore, m.name());
            assertEquals("not-restored", row.path("state").asText(), row.toString());
            assertEquals(
                    Long.toHexString(oldClusterId), row.path("answeredCluster").asText(), row.toString());
        }
        stop(live.serving());
        Member stale = members.get(2);

        // plan shows what the restore would do (the checks, the data kept, the member and token, the walk after it)
        // and changes nothing
        Map<String, String> untouched = TreeDigest.of(members.get(0).data());
        try (RunnerProcess plan = cluster.run(
                "plan",
                members.get(0),
                to,
                "-o",
                "json",
                "--restore-snapshot",
                snapshot.toString(),
                "--restore-sha256",
                sha)) {
            assertEquals(0, plan.exitCode(), plan.output());
            JsonNode planned = JSON.readTree(plan.output()
                    .lines()
                    .filter(l -> l.startsWith("{\"restore\""))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(plan.output())));
            JsonNode restore = planned.path("restore");
            assertEquals(sha, restore.path("sha256").asText(), restore.toString());
            assertEquals("verified", restore.path("integrityHash").asText(), restore.toString());
            assertEquals(inSnapshot.revision(), restore.path("revision").asLong(), restore.toString());
            assertEquals(
                    members.get(0)
                            .data()
                            .resolve(".etcd-migrate/restore-backups/" + sha.substring(0, 12) + "/member")
                            .toString(),
                    restore.path("backup").asText(),
                    restore.toString());
            assertEquals(members.get(0).name(), restore.path("member").asText());
            assertEquals(members.get(0).peerUrl(), restore.path("peerUrls").asText());
            assertEquals(
                    "etcd-restore-" + sha.substring(0, 16),
                    restore.path("token").asText());
            assertEquals(BUMP, restore.path("bumpRevision").asLong());
            assertFalse(restore.path("resumes").asBoolean(true));
            assertEquals(
                    from.version() + "/etcd3", restore.path("restoredVersion").asText());
            // the walk starts from the restored data: the snapshot's line, one leg per minor to the target
            assertEquals(from.version() + "/etcd3", planned.path("current").asText(), planned.toString());
            assertEquals(to.version() + "/etcd3", planned.path("target").asText(), planned.toString());
            assertFalse(planned.path("steps").isEmpty(), planned.toString());
            assertEquals(2, planned.path("legs").size(), planned.toString());
        }
        assertEquals(untouched, TreeDigest.of(members.get(0).data()), "plan changed nothing");

        // one at a time: m0 restores and waits for a quorum, m1 follows once m0 restored; m2 stays on its old data
        Process staleEtcd = cluster.startEtcd(stale, from, dir.resolve("stale.log"));
        List<RunnerProcess> restored = new ArrayList<>();
        restored.add(restoreRunner(members.get(0), to, snapshot, sha));
        JsonNode done = restored.get(0).awaitEvent("snapshot-restored", DEADLINE);
        assertEquals(
                from.version(), done.path("version").asText(), restored.get(0).output());
        assertEquals(BUMP, done.path("bumpRevision").asLong());
        JsonNode checked = restored.get(0).events("snapshot-checked").getFirst();
        assertEquals("verified", checked.path("integrityHash").asText(), "etcdctl appended its hash");
        assertEquals(inSnapshot.revision(), checked.path("revision").asLong(), "the snapshot's newest revision");
        assertEquals(3, checked.path("members").size(), checked.toString());
        restored.add(restoreRunner(members.get(1), to, snapshot, sha));
        // a quorum of restored members forms the cluster; while m2 is not restored it serves at 3.6, the first leg's
        // line, and waits for every member before the next leg (docs/ha.md)
        for (int i = 0; i < 2; i++) {
            restored.get(i).awaitEvent("member-serving", DEADLINE);
            cluster.awaitMemberServing(members.get(i), restored.get(i), DEADLINE);
        }

        Client fresh = client(members.get(0).clientUrl(), members.get(1).clientUrl());
        for (int i = 0; i < 2; i++) {
            Member m = members.get(i);
            Keyspace onMember = Keyspace.read(client(m.clientUrl()));
            assertEquals(inSnapshot.entries(), onMember.entries(), "exactly the snapshot's keys on " + m.name());
            assertTrue(
                    onMember.revision() > lastOld + BUMP / 2, "revision " + onMember.revision() + " above " + lastOld);
            Path kept = m.data().resolve(".etcd-migrate/restore-backups/" + sha.substring(0, 12) + "/member");
            assertTrue(Files.isDirectory(kept.resolve("snap")), "the old member dir kept on " + m.name());
        }
        long newClusterId = fresh.getKVClient()
                .get(bytes("/"))
                .get(30, TimeUnit.SECONDS)
                .getHeader()
                .getClusterId();
        assertNotEquals(oldClusterId, newClusterId, "a new cluster ID");
        long written = put(fresh, "/registry/restored/probe", "new");
        assertTrue(written > lastOld, "a new write's revision " + written + " above every old one (" + lastOld + ")");
        // revisions before the restore are compacted: a read or a watch from one ends with "compacted"
        Exception compacted = assertThrows(
                Exception.class,
                () -> fresh.getKVClient()
                        .get(
                                bytes("/registry/before/1"),
                                GetOption.builder().withRevision(lastOld).build())
                        .get(30, TimeUnit.SECONDS));
        assertTrue(String.valueOf(compacted.getMessage()).contains("compacted"), compacted.toString());
        CompletableFuture<Throwable> watchEnd = new CompletableFuture<>();
        try (Watch.Watcher watcher = fresh.getWatchClient()
                .watch(
                        bytes("/registry/"),
                        WatchOption.builder()
                                .isPrefix(true)
                                .withRevision(inSnapshot.revision())
                                .build(),
                        response -> {},
                        watchEnd::complete)) {
            Throwable end = watchEnd.get(60, TimeUnit.SECONDS);
            assertTrue(
                    end.getClass().getSimpleName().contains("Compacted")
                            || String.valueOf(end.getMessage()).contains("compacted"),
                    end.toString());
        }

        // the member on old data is not part of the restored cluster: it never sees the restored writes
        // (the restored members drop its raft messages: another cluster ID): the restored cluster lists it as a member
        // that never started (a member that joined publishes its client URLs through the cluster)
        io.etcd.jetcd.cluster.Member listed =
                fresh.getClusterClient().listMember().get(30, TimeUnit.SECONDS).getMembers().stream()
                        .filter(m -> m.getPeerURIs().stream()
                                .anyMatch(u -> u.toString().equals(stale.peerUrl())))
                        .findFirst()
                        .orElseThrow();
        assertEquals(List.of(), listed.getClientURIs(), "m2 never published its client URLs to the restored cluster");
        assertTrue(staleEtcd.isAlive(), "m2 ran on its old data all along");
        // status tells the two restored members from m2, which is not part of the restored cluster
        InProcess.Result partial = status(members, sha);
        JsonNode report = JSON.readTree(partial.out());
        JsonNode restore = report.path("restore");
        assertEquals(ExitStatus.ROLLING.code(), partial.exit(), partial.out() + partial.err());
        assertEquals("rolling", report.path("state").asText());
        assertEquals(Long.toHexString(newClusterId), restore.path("clusterId").asText(), restore.toString());
        assertEquals(
                restore.path("clusterId").asText(),
                beforeRestore.path("clusterId").asText(),
                "the cluster ID status derived before the restore is the one etcd gave the restored cluster");
        assertEquals(2, restore.path("restored").asInt(), restore.toString());
        assertEquals(3, restore.path("members").size(), restore.toString());
        for (int i = 0; i < 2; i++) {
            JsonNode row = restoreState(restore, members.get(i).name());
            assertEquals("restored", row.path("state").asText(), row.toString());
            assertEquals(
                    Long.toHexString(newClusterId), row.path("answeredCluster").asText(), row.toString());
        }
        // m2's old cluster lost its quorum, and an etcd without one does not answer on its client URL: the restored
        // cluster, which never heard from it, is what says it is not restored
        // named by its old cluster's list when its etcd still answers that, else by the ID the restored cluster gave it
        JsonNode staleRow = restoreState(restore, stale.name(), listed.getId());
        assertEquals("not-restored", staleRow.path("state").asText(), staleRow.toString());
        assertFalse(staleRow.has("answeredCluster"), staleRow.toString());
        assertTrue(
                restore.path("others").toString().contains(stale.clientUrl()),
                "m2's URL, asked, answers for no member of the restored cluster: " + restore);
        assertFalse(
                Keyspace.read(client(members.get(0).clientUrl())).entries().containsKey("/registry/after/1"),
                "nothing of the old data reached the restored cluster");
        cluster.stopEtcd(staleEtcd);

        // m2 restored too: every member walks on to the target
        restored.add(restoreRunner(stale, to, snapshot, sha));
        awaitEveryMemberServing(restored);
        for (Member m : members)
            assertEquals(to.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
        Keyspace reference = Keyspace.read(client(members.get(0).clientUrl()));
        assertTrue(reference.entries().containsKey("/registry/restored/probe"));
        for (Member m : members) {
            Keyspace onMember = Keyspace.read(client(m.clientUrl()));
            assertEquals(reference.entries(), onMember.entries(), "members agree, " + m.name());
        }
        assertEquals(inSnapshot.entries().size() + 1, reference.entries().size(), "the snapshot's keys and one write");
        JsonNode whole = JSON.readTree(status(members, sha).out()).path("restore");
        assertEquals(3, whole.path("restored").asInt(), whole.toString());
        assertEquals(Long.toHexString(newClusterId), whole.path("clusterId").asText(), whole.toString());

        // a restart with the same hash starts the restored data: no second restore
        RunnerProcess first = restored.getFirst();
        first.process().toHandle().destroy();
        first.awaitExit(Duration.ofSeconds(30));
        RunnerProcess again = restoreRunner(members.get(0), to, snapshot, sha);
        again.awaitEvent("exec", DEADLINE);
        cluster.awaitMemberServing(members.get(0), again, DEADLINE);
        assertEquals(1, again.count("already-restored"), again.output());
        assertEquals(0, again.count("snapshot-restored"), again.output());
        GetResponse kept = client(members.get(0).clientUrl())
                .getKVClient()
                .get(bytes("/registry/restored/probe"))
                .get(30, TimeUnit.SECONDS);
        assertEquals(1, kept.getCount(), "the restored member kept its writes");
    }

    /** Every member's manifest edited at once: the three restore side by side and walk together to the target. */
    void allAtOnce(Path dir) throws Exception {
        Release from = ClusterLab.line("3.5");
        Release to = EtcdFixture.newest();
        cluster = lab(dir, "restore-all");
        List<Member> members = cluster.members();
        Live live = live(dir, from, 100, 20, members.get(1));
        stop(live.serving());
        Keyspace inSnapshot = live.inSnapshot();
        long lastOld = live.lastOld();
        Path snapshot = live.snapshot();
        String sha = live.sha();
        List<RunnerProcess> restored = new ArrayList<>();
        for (Member m : members) restored.add(restoreRunner(m, to, snapshot, sha));
        awaitEveryMemberServing(restored);
        for (Member m : members) {
            assertEquals(to.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
            Keyspace onMember = Keyspace.read(client(m.clientUrl()));
            assertEquals(inSnapshot.entries(), onMember.entries(), "exactly the snapshot's keys on " + m.name());
            assertTrue(
                    onMember.revision() > lastOld + BUMP / 2, "revision " + onMember.revision() + " above " + lastOld);
        }
        long written = put(client(members.get(2).clientUrl()), "/registry/restored/all", "new");
        assertTrue(written > lastOld, "a new write's revision " + written + " above every old one (" + lastOld + ")");
    }

    /**
     * Every member's restore SIGKILLed (the runner and every tool it started, one signal to its process group) at a
     * moment drawn from a seed, the three restoring side by side as after every manifest was edited, in rounds on the
     * same data dirs; then every member started once more: the cluster converges to the snapshot's restore at the
     * target, exactly the snapshot's keys on every member with the revision raised, each member's data before the
     * restore kept once, byte for byte, no staging left. The moments lie within the time three restores of the
     * snapshot side by side take on this machine (measured first); {@code -Drestore.kill.seed} replays the draws,
     * {@code -Drestore.kill.rounds} sets the rounds.
     */
    void killsAtRandomMomentsOfEachMembersRestore(Path dir) throws Exception {
        Release from = ClusterLab.line("3.5");
        Release to = EtcdFixture.newest();
        cluster = lab(dir, "restore-kills");
        List<Member> members = cluster.members();
        Live live = live(dir, from, 100, 20, members.get(2));
        stop(live.serving());
        String sha = live.sha();
        Path snapshot = live.snapshot();
        List<Map<String, String>> before = new ArrayList<>();
        for (Member m : members) before.add(TreeDigest.of(m.data().resolve("member")));

        // the time a restore takes here: the snapshot restored into three empty data dirs side by side (as the three
        // members restore), each runner started and waited for as a member's is
        List<RunnerProcess> alone = new ArrayList<>();
        long started = System.nanoTime();
        for (Member m : members) {
            List<String> args = new ArrayList<>(RunnerArgs.migrate(dir.resolve("alone-" + m.name()), from.version()));
            args.addAll(List.of("--restore-snapshot", snapshot.toString(), "--restore-sha256", sha));
            alone.add(RunnerProcess.start(args, Map.of()));
        }
        for (RunnerProcess r : alone) {
            try (r) {
                assertEquals(0, r.awaitExit(DEADLINE), r.output());
            }
        }
        long whole = Math.max(1, (System.nanoTime() - started) / 1_000_000);
        long seed = Long.getLong("restore.kill.seed", System.nanoTime());
        Random random = new Random(seed);
        System.out.printf("restore kills: seed %d, three restores side by side take %d ms%n", seed, whole);
        for (int round = 0; round < Integer.getInteger("restore.kill.rounds", 3); round++) {
            long[] at = members.stream().mapToLong(m -> random.nextLong(whole)).toArray();
            List<RunnerProcess> runners = new ArrayList<>();
            long[] startedAt = new long[members.size()];
            for (int i = 0; i < members.size(); i++) {
                startedAt[i] = System.nanoTime();
                runners.add(restoreRunner(members.get(i), to, snapshot, sha, true));
            }
            for (int i : IntStream.range(0, members.size())
                    .boxed()
                    .sorted(Comparator.comparingLong(i -> startedAt[i] + at[i] * 1_000_000))
                    .toList()) {
                long left = (startedAt[i] + at[i] * 1_000_000 - System.nanoTime()) / 1_000_000;
                if (left > 0) Thread.sleep(left); // the moment to kill at, drawn from the seed; not a synchronisation
                runners.get(i).killGroup();
                System.out.printf(
                        "round %d: %s killed at %d of %d ms (seed %d): after %s%n",
                        round, members.get(i).name(), at[i], whole, seed, names(runners.get(i)));
            }
        }

        List<RunnerProcess> restored = new ArrayList<>();
        for (Member m : members) restored.add(restoreRunner(m, to, snapshot, sha));
        awaitEveryMemberServing(restored);
        String what = "seed " + seed;
        for (int i = 0; i < members.size(); i++) {
            Member m = members.get(i);
            assertEquals(to.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
            Keyspace onMember = Keyspace.read(client(m.clientUrl()));
            assertEquals(
                    live.inSnapshot().entries(), onMember.entries(), what + ": the snapshot's keys on " + m.name());
            assertTrue(
                    onMember.revision() > live.lastOld() + BUMP / 2,
                    what + ": revision " + onMember.revision() + " on " + m.name());
            Path kept = m.data().resolve(".etcd-migrate/restore-backups/" + sha.substring(0, 12) + "/member");
            assertEquals(before.get(i), TreeDigest.of(kept), what + ": " + m.name() + "'s data before, kept whole");
            try (Stream<Path> backups = Files.list(m.data().resolve(".etcd-migrate/restore-backups"))) {
                assertEquals(1, backups.count(), what + ": one backup on " + m.name());
            }
            assertFalse(
                    Files.exists(m.data().resolve(".etcd-migrate/restore-staging")),
                    what + ": no staging left on " + m.name());
        }
        InProcess.Result status = status(members, sha);
        JsonNode restore = JSON.readTree(status.out()).path("restore");
        assertEquals(3, restore.path("restored").asInt(), what + ": " + status.out() + status.err());
        long written = put(client(members.get(0).clientUrl()), "/registry/restored/after-kills", "new");
        assertTrue(written > live.lastOld(), what + ": a new write's revision " + written);
    }

    /**
     * Until every member's runner exec'd its etcd and that serves its client URL. A member's walk waits for the others,
     * so the one waited on may fail for another's sake: the failure shows every runner's own lines and how it ended.
     */
    private void awaitEveryMemberServing(List<RunnerProcess> runners) throws Exception {
        List<Member> members = cluster.members();
        try {
            for (int i = 0; i < members.size(); i++) {
                runners.get(i).awaitEvent("exec", DEADLINE);
                cluster.awaitMemberServing(members.get(i), runners.get(i), DEADLINE);
            }
        } catch (AssertionError e) {
            StringBuilder every = new StringBuilder(e.getMessage());
            for (int i = 0; i < members.size(); i++) {
                RunnerProcess r = runners.get(i);
                every.append("\n--- ")
                        .append(members.get(i).name())
                        .append(
                                r.process().isAlive()
                                        ? " (running)"
                                        : " (exited " + r.process().exitValue() + ")")
                        .append(", its own lines:\n");
                r.lines().stream()
                        .filter(l -> !l.startsWith("["))
                        .forEach(l -> every.append(l).append('\n'));
            }
            throw new AssertionError(every.toString(), e);
        }
    }

    /** The runner's own event names so far (without its children's output lines). */
    static List<String> names(RunnerProcess runner) {
        return runner.events().stream()
                .map(e -> e.path("event").asText())
                .filter(n -> !n.equals("child-output"))
                .toList();
    }

    private RunnerProcess restoreRunner(Member m, Release to, Path snapshot, String sha) throws Exception {
        return restoreRunner(m, to, snapshot, sha, false);
    }

    /** {@code ownGroup}: the runner leads a process group of its own, for {@link RunnerProcess#killGroup}. */
    private RunnerProcess restoreRunner(Member m, Release to, Path snapshot, String sha, boolean ownGroup)
            throws Exception {
        return cluster.start(
                m,
                to,
                cluster.certificates().caFile(),
                m.listenPeerUrl(),
                ownGroup,
                "--restore-snapshot",
                snapshot.toString(),
                "--restore-sha256",
                sha);
    }

    /**
     * {@code status -o json} over every member's client URL, told the restore's snapshot hash; with client TLS, the
     * clients' certificate as etcd's own flags after "--" name it.
     */
    private InProcess.Result status(List<Member> members, String sha) {
        List<String> args = new ArrayList<>(List.of(
                "status",
                "-o",
                "json",
                "--endpoints",
                String.join(",", members.stream().map(Member::clientUrl).toList()),
                "--restore-sha256",
                sha));
        if (tls() == ClusterLab.Tls.PEER_AND_CLIENT) {
            args.addAll(List.of(
                    "--",
                    "--cert-file=" + cluster.clientPem().cert(),
                    "--key-file=" + cluster.clientPem().key(),
                    "--trusted-ca-file=" + cluster.certificates().caFile()));
        }
        return InProcess.run(args, Map.of());
    }

    private static JsonNode restoreState(JsonNode restore, String name) {
        for (JsonNode m : restore.path("members")) if (m.path("name").asText().equals(name)) return m;
        throw new AssertionError("no member " + name + " in " + restore);
    }

    /** The row of the member named {@code name}, or of member ID {@code id} where nothing gave its name. */
    private static JsonNode restoreState(JsonNode restore, String name, long id) {
        for (JsonNode m : restore.path("members")) {
            if (m.path("name").asText().equals(name)
                    || Long.parseUnsignedLong(m.path("memberId").asText("0"), 16) == id) return m;
        }
        throw new AssertionError("no member " + name + " (ID " + Long.toHexString(id) + ") in " + restore);
    }

    /** etcdctl of the release against the member's client URL, with the clients' certificate under client TLS. */
    private void etcdctl(Release release, Member m, String... args) throws Exception {
        List<String> all = new ArrayList<>();
        if (tls() == ClusterLab.Tls.PEER_AND_CLIENT) {
            all.addAll(List.of(
                    "--cacert",
                    cluster.certificates().caFile().toString(),
                    "--cert",
                    cluster.clientPem().cert().toString(),
                    "--key",
                    cluster.clientPem().key().toString()));
        }
        all.addAll(List.of(args));
        etcdctl(release, m.clientUrl(), all.toArray(String[]::new));
    }

    public static void etcdctl(Release release, String endpoint, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(
                EtcdFixture.binDir().resolve("etcdctl-" + release.version()).toString(), "--endpoints", endpoint));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "etcdctl " + List.of(args));
        assertEquals(0, p.exitValue(), output);
    }

    public static String sha256(Path file) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (InputStream in = Files.newInputStream(file)) {
            sha.update(in.readAllBytes());
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    /** A jetcd client of the endpoints; over https with the clients' certificate when the members serve TLS. */
    private Client client(String... endpoints) throws Exception {
        ClientBuilder builder = Client.builder().endpoints(endpoints);
        if (endpoints[0].startsWith("https:")) {
            builder.sslContext(GrpcSslContexts.forClient()
                    .trustManager(cluster.certificates().caFile().toFile())
                    .keyManager(
                            cluster.clientPem().cert().toFile(),
                            cluster.clientPem().key().toFile())
                    .build());
        }
        Client client = builder.build();
        clients.add(client);
        return client;
    }
}
