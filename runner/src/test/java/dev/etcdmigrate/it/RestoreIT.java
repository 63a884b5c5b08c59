package dev.etcdmigrate.it;

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
import dev.etcdmigrate.it.ClusterLab.Member;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.WatchOption;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A whole cluster restored from one snapshot through the runner (docs/restore.md), on real etcd: a snapshot of a
 * live 3.5 cluster (peer TLS) restored into 3.7 members one at a time, a member left on its old data refused by the
 * restored cluster, a restart with the same hash restoring nothing; SIGKILLs at random moments of a restore
 * converging; a 3.4 snapshot refused while its tool cannot raise the revision.
 */
class RestoreIT {

    private static final Duration DEADLINE = Duration.ofMinutes(6);
    private static final long BUMP = 1_000_000_000L;
    private static final ObjectMapper JSON = new ObjectMapper();

    private final List<Client> clients = new ArrayList<>();
    private ClusterLab cluster;

    @AfterEach
    void stopAll() throws Exception {
        for (Client client : clients) client.close();
        if (cluster != null) cluster.close();
    }

    @Test
    void aLive35SnapshotRestoredInto37MembersOneAtATimeFencesTheOldData(@TempDir Path dir) throws Exception {
        Release from = ClusterLab.line("3.5");
        Release to = EtcdFixture.newest();
        cluster = ClusterLab.create(dir, 3, ClusterLab.Layout.ONE_HOST, "restore-it", ClusterLab.Tls.PEER);
        List<Member> members = cluster.members();
        List<RunnerProcess> serving = new ArrayList<>();
        for (Member m : members) serving.add(cluster.start(m, from));
        for (int i = 0; i < members.size(); i++) ClusterLab.awaitServing(members.get(i), serving.get(i), DEADLINE);
        Client old = client(members.stream().map(Member::clientUrl).toArray(String[]::new));
        for (int k = 0; k < 200; k++) put(old, "/registry/before/" + k, "value-" + k);
        long oldClusterId = old.getKVClient()
                .get(bytes("/"))
                .get(30, TimeUnit.SECONDS)
                .getHeader()
                .getClusterId();

        Path snapshot = dir.resolve("snapshot.db");
        etcdctl(from, members.getFirst().clientUrl(), "snapshot", "save", snapshot.toString());
        Keyspace inSnapshot = Keyspace.read(old);
        for (int k = 0; k < 50; k++) put(old, "/registry/after/" + k, "lost-" + k);
        long lastOld = Keyspace.read(old).revision();
        String sha = sha256(snapshot);
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
        for (RunnerProcess r : serving) {
            r.process().toHandle().destroy(); // the exec'd etcd stops as under the kubelet
            r.awaitExit(Duration.ofSeconds(30));
        }
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
            ClusterLab.awaitServing(members.get(i), restored.get(i), DEADLINE);
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
        JsonNode staleRow = restoreState(restore, stale.name());
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
        for (int i = 0; i < 3; i++) {
            Member m = members.get(i);
            restored.get(i).awaitEvent("exec", DEADLINE);
            ClusterLab.awaitServing(m, restored.get(i), DEADLINE);
            assertEquals(to.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
        }
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
        ClusterLab.awaitServing(members.get(0), again, DEADLINE);
        assertEquals(1, again.count("already-restored"), again.output());
        assertEquals(0, again.count("snapshot-restored"), again.output());
        GetResponse kept = client(members.get(0).clientUrl())
                .getKVClient()
                .get(bytes("/registry/restored/probe"))
                .get(30, TimeUnit.SECONDS);
        assertEquals(1, kept.getCount(), "the restored member kept its writes");
    }

    /** Every member's manifest edited at once: the three restore side by side and walk together to the target. */
    @Test
    void allMembersRestoredAtOnceReachTheTarget(@TempDir Path dir) throws Exception {
        Release from = ClusterLab.line("3.5");
        Release to = EtcdFixture.newest();
        cluster = ClusterLab.create(dir, 3, ClusterLab.Layout.ONE_HOST, "restore-all", ClusterLab.Tls.PEER);
        List<Member> members = cluster.members();
        List<RunnerProcess> serving = new ArrayList<>();
        for (Member m : members) serving.add(cluster.start(m, from));
        for (int i = 0; i < members.size(); i++) ClusterLab.awaitServing(members.get(i), serving.get(i), DEADLINE);
        Client old = client(members.stream().map(Member::clientUrl).toArray(String[]::new));
        for (int k = 0; k < 100; k++) put(old, "/registry/before/" + k, "value-" + k);
        Path snapshot = dir.resolve("snapshot.db");
        etcdctl(from, members.get(1).clientUrl(), "snapshot", "save", snapshot.toString());
        Keyspace inSnapshot = Keyspace.read(old);
        for (int k = 0; k < 20; k++) put(old, "/registry/after/" + k, "lost-" + k);
        long lastOld = Keyspace.read(old).revision();
        for (RunnerProcess r : serving) {
            r.process().toHandle().destroy();
            r.awaitExit(Duration.ofSeconds(30));
        }
        String sha = sha256(snapshot);
        List<RunnerProcess> restored = new ArrayList<>();
        for (Member m : members) restored.add(restoreRunner(m, to, snapshot, sha));
        for (int i = 0; i < members.size(); i++) {
            restored.get(i).awaitEvent("exec", DEADLINE);
            ClusterLab.awaitServing(members.get(i), restored.get(i), DEADLINE);
        }
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
     * SIGKILL of the runner and every tool it started at each point of a lone member's restore (the checks done, the
     * member dir moved aside, the restore tool writing its staging dir, the restore recorded), one kill after the
     * other on the same data dir, then at random moments of fresh restores: every rerun converges to the snapshot's
     * keys with the revision raised, the member's data before the restore kept once, byte for byte.
     */
    @Test
    void killsAtEveryPointAndAtRandomMomentsOfARestoreConverge(@TempDir Path dir) throws Exception {
        Release line = ClusterLab.line("3.5");
        Keyspace seeded;
        try (EtcdFixture etcd = new EtcdFixture()) {
            seeded = etcd.seed(line, dir.resolve("source"), 2000);
        }
        Path snapshot = dir.resolve("snapshot.db");
        Files.copy(dir.resolve("source/member/snap/db"), snapshot); // a member's db: no integrity hash appended
        String sha = sha256(snapshot);
        Path template = dir.resolve("template");
        try (EtcdFixture etcd = new EtcdFixture()) {
            etcd.seed(line, template, 20);
        }
        long seed = Long.getLong("restore.kill.seed", System.nanoTime());
        Random random = new Random(seed);

        Path data = copyOf(template, dir.resolve("points"));
        List<String> args = restoreArgs(data, line, snapshot, sha);
        Path staging = data.resolve(".etcd-migrate/restore-staging");
        List<String> points = List.of("snapshot-checked", "restore-backup-kept", "staging", "snapshot-restored");
        for (int trial = 0; trial < points.size(); trial++) {
            // this point, or a later one where an earlier kill landed past it
            List<String> wanted = points.subList(trial, points.size());
            try (RunnerProcess runner = RunnerProcess.startInOwnGroup(args)) {
                Poll.untilTrue(
                        Duration.ofSeconds(60),
                        Duration.ofMillis(2),
                        "the runner at " + wanted,
                        () -> !runner.process().isAlive()
                                || wanted.contains("staging")
                                        && Files.exists(staging)
                                        && runner.count("snapshot-checked") > 0 // this run's staging, not a leftover
                                || runner.events().stream()
                                        .anyMatch(e ->
                                                wanted.contains(e.path("event").asText())));
                runner.killGroup();
                System.out.printf("kill %d (%s): after %s%n", trial, points.get(trial), names(runner));
            }
        }
        long started = System.nanoTime();
        assertConverged(data, template, args, seeded, sha, "after the kills at each point");
        long whole = Math.max(1, (System.nanoTime() - started) / 1_000_000);

        for (int round = 0; round < Integer.getInteger("restore.kills", 3); round++) {
            Path fresh = copyOf(template, dir.resolve("random-" + round));
            List<String> freshArgs = restoreArgs(fresh, line, snapshot, sha);
            long at = random.nextLong(whole);
            try (RunnerProcess runner = RunnerProcess.startInOwnGroup(freshArgs)) {
                Thread.sleep(at); // the moment to kill at, drawn from the seed; not a synchronisation
                runner.killGroup();
                System.out.printf("random kill at %d of %d ms (seed %d): after %s%n", at, whole, seed, names(runner));
            }
            assertConverged(fresh, template, freshArgs, seeded, sha, "seed " + seed + ", round " + round);
        }
    }

    private static List<String> restoreArgs(Path data, Release line, Path snapshot, String sha) {
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, line.version()));
        args.addAll(List.of("--restore-snapshot", snapshot.toString(), "--restore-sha256", sha));
        return args;
    }

    private static List<String> names(RunnerProcess runner) {
        return runner.events().stream()
                .map(e -> e.path("event").asText())
                .filter(n -> !n.equals("child-output"))
                .toList();
    }

    private static Path copyOf(Path template, Path to) throws Exception {
        dev.etcdmigrate.datadir.Trees.copy(template, to);
        return to;
    }

    /** A rerun ends restored: the snapshot's keys, the revision raised, the earlier member dir kept once, whole. */
    private static void assertConverged(
            Path data, Path template, List<String> args, Keyspace seeded, String sha, String what) throws Exception {
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(0, runner.exitCode(), what + ": " + runner.output());
        }
        Path kept = data.resolve(".etcd-migrate/restore-backups/" + sha.substring(0, 12) + "/member");
        assertEquals(
                TreeDigest.of(template.resolve("member")),
                TreeDigest.of(kept),
                what + ": the member's data before the restore, kept whole");
        try (Stream<Path> backups = Files.list(data.resolve(".etcd-migrate/restore-backups"))) {
            assertEquals(1, backups.count(), what + ": one backup per snapshot");
        }
        assertFalse(Files.exists(data.resolve(".etcd-migrate/restore-staging")), what + ": no staging left");
        assertTrue(
                Files.readString(data.resolve(".etcd-migrate/restore")).contains("state=restored"), what + ": marker");
        JsonNode report = DataClaimsIT.inspect(data, ClusterLab.line("3.5").version());
        assertTrue(
                report.path("backups").findValuesAsText("path").contains(kept.toString()),
                what + ": inspect lists the kept member dir: " + report.path("backups"));
        try (EtcdFixture etcd = new EtcdFixture()) {
            Keyspace after = etcd.read(ClusterLab.line("3.5"), data).keyspace();
            assertEquals(new TreeMap<>(values(seeded)), new TreeMap<>(values(after)), what + ": the snapshot's keys");
            assertTrue(after.revision() > seeded.revision() + BUMP / 2, what + ": revision raised " + after.revision());
        }
    }

    /** 3.4.23's restore tool has no --bump-revision: refused with the reason, unless the bump is set to 0. */
    @Test
    void a34SnapshotIsRefusedUnlessItsRevisionsAreKept(@TempDir Path dir) throws Exception {
        Release v34 = ClusterLab.line("3.4");
        Path source = dir.resolve("source");
        Keyspace seeded;
        try (EtcdFixture etcd = new EtcdFixture()) {
            seeded = etcd.seed(v34, source, 50);
        }
        Path snapshot = dir.resolve("snapshot.db");
        Files.copy(source.resolve("member/snap/db"), snapshot);
        String sha = sha256(snapshot);
        Path data = dir.resolve("data");
        List<String> args = new ArrayList<>(RunnerArgs.migrate(data, v34.version()));
        args.addAll(List.of("--restore-snapshot", snapshot.toString(), "--restore-sha256", sha));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(3, runner.exitCode(), runner.output());
            assertTrue(runner.ending().path("reason").asText().contains("--bump-revision"), runner.output());
            assertEquals(0, runner.count("etcd-started"), "nothing started");
        }
        assertFalse(Files.exists(data.resolve("member")), "nothing restored");
        assertFalse(Files.exists(data.resolve(".etcd-migrate/restore")), "no restore begun");

        args.addAll(List.of("--restore-bump-revision", "0"));
        try (RunnerProcess runner = RunnerProcess.run(args)) {
            assertEquals(0, runner.exitCode(), runner.output());
            assertEquals(
                    0,
                    runner.events("snapshot-restored")
                            .getFirst()
                            .path("bumpRevision")
                            .asLong());
        }
        try (EtcdFixture etcd = new EtcdFixture()) {
            Keyspace after = etcd.read(v34, data).keyspace();
            assertEquals(new TreeMap<>(values(seeded)), new TreeMap<>(values(after)), "the snapshot's keys");
            for (Map.Entry<String, Keyspace.Entry> e : seeded.entries().entrySet())
                assertEquals(
                        e.getValue().modRevision(),
                        after.entries().get(e.getKey()).modRevision(),
                        "revisions kept: " + e.getKey());
        }
    }

    private RunnerProcess restoreRunner(Member m, Release to, Path snapshot, String sha) throws Exception {
        return cluster.start(
                m,
                to,
                cluster.certificates().caFile(),
                m.listenPeerUrl(),
                false,
                "--restore-snapshot",
                snapshot.toString(),
                "--restore-sha256",
                sha);
    }

    /** {@code status -o json} over every member's client URL, told the restore's snapshot hash. */
    private static InProcess.Result status(List<Member> members, String sha) {
        return InProcess.run(
                List.of(
                        "status",
                        "-o",
                        "json",
                        "--endpoints",
                        String.join(",", members.stream().map(Member::clientUrl).toList()),
                        "--restore-sha256",
                        sha),
                Map.of());
    }

    private static JsonNode restoreState(JsonNode restore, String name) {
        for (JsonNode m : restore.path("members")) if (m.path("name").asText().equals(name)) return m;
        throw new AssertionError("no member " + name + " in " + restore);
    }

    private static Map<String, String> values(Keyspace keyspace) {
        Map<String, String> values = new TreeMap<>();
        keyspace.entries().forEach((k, v) -> values.put(k, HexFormat.of().formatHex(v.value())));
        return values;
    }

    static void etcdctl(Release release, String endpoint, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(
                EtcdFixture.binDir().resolve("etcdctl-" + release.version()).toString(), "--endpoints", endpoint));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "etcdctl " + List.of(args));
        assertEquals(0, p.exitValue(), output);
    }

    static String sha256(Path file) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        try (InputStream in = Files.newInputStream(file)) {
            sha.update(in.readAllBytes());
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    private Client client(String... endpoints) {
        Client client = Client.builder().endpoints(endpoints).build();
        clients.add(client);
        return client;
    }

    private static long put(Client client, String key, String value) throws Exception {
        return client.getKVClient()
                .put(bytes(key), bytes(value))
                .get(30, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
