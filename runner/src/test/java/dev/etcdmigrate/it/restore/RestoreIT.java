package dev.etcdmigrate.it.restore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.it.cluster.ClusterLab;
import dev.etcdmigrate.it.data.DataClaimsIT;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A whole cluster restored from one snapshot through the runner (docs/restore.md), on real etcd, members on one host
 * with peer TLS ({@link RestoreClusterCases}; {@link RestoreHaIT} runs the same cases in network namespaces with
 * client TLS too): a snapshot of a live 3.5 cluster restored into 3.7 members one at a time, a member left on its old
 * data refused by the restored cluster, a restart with the same hash restoring nothing; all at once; SIGKILLs at each
 * point and at random moments of a lone member's restore converging; a 3.4 snapshot refused while its tool cannot
 * raise the revision.
 */
public class RestoreIT extends RestoreClusterCases {

    @Override
    ClusterLab.Layout layout() {
        return ClusterLab.Layout.ONE_HOST;
    }

    @Override
    ClusterLab.Tls tls() {
        return ClusterLab.Tls.PEER;
    }

    @Test
    void aLive35SnapshotRestoredInto37MembersOneAtATimeFencesTheOldData(@TempDir Path dir) throws Exception {
        oneAtATime(dir);
    }

    /** Every member's manifest edited at once: the three restore side by side and walk together to the target. */
    @Test
    void allMembersRestoredAtOnceReachTheTarget(@TempDir Path dir) throws Exception {
        allAtOnce(dir);
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

    private static Map<String, String> values(Keyspace keyspace) {
        Map<String, String> values = new TreeMap<>();
        keyspace.entries().forEach((k, v) -> values.put(k, HexFormat.of().formatHex(v.value())));
        return values;
    }
}
