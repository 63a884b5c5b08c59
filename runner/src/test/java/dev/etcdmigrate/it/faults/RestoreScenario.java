package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.demo.SampleData;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.it.data.DataClaimsIT;
import dev.etcdmigrate.it.restore.RestoreIT;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.ondisk.DbSnapshot;
import dev.etcdmigrate.restore.RestoreIdentity;
import dev.etcdmigrate.restore.RestoreMarker;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import io.etcd.jetcd.Client;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A lone member restored from a snapshot of a live 3.5 member (docs/restore.md), as the power-cut and I/O-error
 * suites drive it: the data dir holds the member's own 3.5 data (keys of its own), the snapshot (keys the data dir
 * does not hold) lies on the same mount beside it, so the runner's reads of it are recorded and can fail too. Restored
 * into 3.5 (the restore alone) and into 3.6 (the restore, then the walk's minor upgrade).
 *
 * <p>A run converges to the restored member: version.txt at the target, the marker saying restored from this
 * snapshot, exactly the snapshot's keys and values with the revision raised, the member and cluster IDs the
 * snapshot's token gives, and the member's data before the restore kept whole in its one backup. A crash state never
 * mixes the two: member/ is the old data (then no backup and no marker saying restored), the restore (then the old
 * data kept whole beside it), or absent while the backup holds the old data and the marker says restoring.
 */
enum RestoreScenario implements CutScenario {
    RESTORE_INTO_35("3.5.35/etcd3"),
    RESTORE_INTO_36("3.5.35/etcd3", "3.6.16/etcd3");

    /** The runner's default bump of the revision. */
    static final long BUMP = 1_000_000_000L;

    /** The snapshot's line, and the line of the member's data before the restore. */
    private static final String LINE = "3.5.35";

    private static final int KEYS = 300;

    /** The member's peer URL as the runner's defaults give it (--name it, no --initial-cluster). */
    private static final String PEER_URL = "http://localhost:2380";

    private final List<DataVersion> versions;

    RestoreScenario(String... versions) {
        this.versions =
                java.util.Arrays.stream(versions).map(DataVersion::parse).toList();
    }

    DataVersion target() {
        return versions.getLast();
    }

    /** The snapshot beside the data dir: {@code base/restore/snapshot.db} when seeded, on the mount when run. */
    static Path snapshotOf(Path data) {
        return data.resolveSibling("restore").resolve("snapshot.db");
    }

    /** Where the member's data before the restore is kept. */
    static Path backupOf(Path data, String sha256) {
        return data.resolve(".etcd-migrate/restore-backups/" + sha256.substring(0, 12) + "/member");
    }

    @Override
    public List<String> args(FaultScenario.Seeded seeded, Path data) {
        List<String> args =
                new ArrayList<>(RunnerArgs.migrate(data, target().version().toString()));
        args.addAll(List.of(
                "--restore-snapshot", snapshotOf(data).toString(), "--restore-sha256", ((Seeded) seeded).sha256()));
        return args;
    }

    /**
     * The member's own data (the sample and keys under /old/), then a snapshot saved by etcdctl from a live member of
     * the same line holding the sample and keys under /snapshot/ (etcd's integrity hash appended).
     */
    @Override
    public FaultScenario.Seeded seed(EtcdFixture etcd, Path data) throws Exception {
        Release line = EtcdFixture.release(LINE);
        Permissions.ownerOnlyDir(data);
        etcd.withClient(line, data, client -> {
            SampleData.seed(client, KEYS / 3, 3600);
            for (int k = 0; k < 20; k++) put(client, "/old/only-" + k, "old-" + k);
        });
        new DataDir(data).writeVersion(new DataVersion(line.etcdVersion(), StorageApi.ETCD3));

        Path source = data.getParent().resolveSibling("snapshot-source");
        Permissions.ownerOnlyDir(source);
        Path snapshot = snapshotOf(data);
        Files.createDirectories(snapshot.getParent());
        Keyspace inSnapshot;
        try (PrivateEtcd live = etcd.start(line, source)) {
            try (Client client =
                    Client.builder().endpoints(live.gateway().baseUrl()).build()) {
                SampleData.seed(client, KEYS, 3600);
                for (int k = 0; k < 20; k++) put(client, "/snapshot/only-" + k, "restored-" + k);
                inSnapshot = Keyspace.read(client);
            }
            // etcd decides the cluster version through raft after its election, apart from the writes: a snapshot
            // saved before that records no line, and the runner refuses it as of no known line
            Poll.untilTrue(
                    Duration.ofSeconds(30),
                    Duration.ofMillis(50),
                    "the live member's cluster version decided",
                    () -> live.gateway()
                            .version()
                            .path("etcdcluster")
                            .asText("")
                            .startsWith(LINE.substring(0, 4)));
            RestoreIT.etcdctl(line, live.gateway().baseUrl().toString(), "snapshot", "save", snapshot.toString());
            live.stop(Duration.ofSeconds(20));
        }
        assertEquals(32, Files.size(snapshot) % 512, "etcdctl appended its integrity hash");
        return new Seeded(
                RestoreIT.sha256(snapshot),
                inSnapshot,
                TreeDigest.of(data.resolve("member")),
                EtcdFixture.release(target().version().toString()));
    }

    /** What a restore scenario seeded: the snapshot's hash and keys, the member's data before the restore. */
    record Seeded(String sha256, Keyspace snapshot, Map<String, String> oldMember, Release target)
            implements FaultScenario.Seeded {

        long memberId() {
            return RestoreIdentity.memberId(List.of(PEER_URL), RestoreIdentity.token(sha256));
        }

        /** The target serves exactly the snapshot's keys, the revision raised, as the member the restore made. */
        @Override
        public void assertServedByTarget(EtcdFixture etcd, Path data) throws Exception {
            etcd.withClient(target, data, client -> {
                Keyspace after = Keyspace.read(client);
                assertEquals(values(snapshot), values(after), "exactly the snapshot's keys and values");
                assertTrue(
                        after.revision() > snapshot.revision() + BUMP / 2,
                        "revision " + after.revision() + " raised above " + snapshot.revision());
                var members = client.getClusterClient().listMember().get(30, TimeUnit.SECONDS);
                assertEquals(1, members.getMembers().size(), "one member");
                assertEquals(
                        RestoreIdentity.hex(memberId()),
                        RestoreIdentity.hex(members.getMembers().getFirst().getId()),
                        "the member ID the snapshot's token gives");
                assertEquals(
                        RestoreIdentity.hex(RestoreIdentity.clusterId(List.of(memberId()))),
                        RestoreIdentity.hex(members.getHeader().getClusterId()),
                        "the cluster ID the snapshot's token gives");
            });
        }
    }

    @Override
    public void assertConverged(FaultScenario.Seeded seeded, EtcdFixture etcd, Path data) throws Exception {
        Seeded s = (Seeded) seeded;
        assertEquals(target().format(), Files.readString(data.resolve("version.txt")));
        RestoreMarker marker = RestoreMarker.read(data.resolve(".etcd-migrate/restore"))
                .orElseThrow(() -> new AssertionError("no restore marker"));
        assertTrue(marker.restoredFrom(s.sha256()), "the marker says restored from this snapshot: " + marker);
        assertEquals(
                Optional.of(data.relativize(backupOf(data, s.sha256()))),
                marker.backup(),
                "the marker names the kept data");
        assertEquals(
                s.oldMember(), TreeDigest.of(backupOf(data, s.sha256())), "the member's data before the restore, kept");
        assertEquals(
                List.of(s.sha256().substring(0, 12)),
                names(data.resolve(".etcd-migrate/restore-backups")),
                "one backup per snapshot");
        assertEquals(List.of("member"), names(backupOf(data, s.sha256()).getParent()), "the backup holds member/");
        List<String> leftovers = new ArrayList<>(DataDirLeftovers.unexpected(data));
        leftovers.removeAll(List.of(".etcd-migrate/restore", ".etcd-migrate/restore-backups"));
        assertEquals(List.of(), leftovers, "leftovers:" + DataDirLeftovers.describe(data));
        s.assertServedByTarget(etcd, data);
    }

    /**
     * Never a mix: member/ is the member's old data byte for byte (no backup beside it, no marker saying restored), or
     * a whole restore of this snapshot (its db's revision raised, its WAL present; the old data kept whole, a
     * marker), or absent (the old data kept whole, the marker saying restoring); version.txt names a version of the
     * plan, not ahead of the db.
     */
    @Override
    public void assertConsistentCutState(FaultScenario.Seeded seeded, Path data) throws Exception {
        Seeded s = (Seeded) seeded;
        Optional<RestoreMarker> marker = RestoreMarker.read(data.resolve(".etcd-migrate/restore"));
        Optional<DataVersion> recorded = new DataDir(data).readVersion();
        if (recorded.isEmpty() || !versions.contains(recorded.get()))
            throw new AssertionError("version.txt names " + recorded + ", not a version of " + versions);
        Path member = data.resolve("member");
        Path kept = backupOf(data, s.sha256());
        boolean keptWhole = Files.isDirectory(kept) && s.oldMember().equals(TreeDigest.of(kept));
        if (Files.isDirectory(kept) && !keptWhole)
            throw new AssertionError("the backup differs from the member's data before the restore");
        boolean restoredMarker = marker.filter(m -> m.restoredFrom(s.sha256())).isPresent();
        if (!Files.isDirectory(member)) {
            if (!keptWhole) throw new AssertionError("member/ gone and the data before the restore not kept");
            if (marker.isEmpty() || restoredMarker)
                throw new AssertionError("member/ gone, the marker " + marker + " does not say restoring");
        } else if (s.oldMember().equals(TreeDigest.of(member))) {
            if (Files.isDirectory(kept)) throw new AssertionError("the old member/ and its backup side by side");
            if (restoredMarker) throw new AssertionError("a marker saying restored over the old data");
        } else {
            Path db = member.resolve("snap/db");
            if (!Files.isRegularFile(db)) throw new AssertionError("member/ is not the old data and has no db");
            long revision = DbSnapshot.read(db).revision();
            if (revision <= s.snapshot().revision() + BUMP / 2)
                throw new AssertionError("member/ is neither the old data nor the restore: the db's revision is "
                        + revision + ", not raised above the snapshot's "
                        + s.snapshot().revision());
            boolean wal;
            try (Stream<Path> files = Files.list(member.resolve("wal"))) {
                wal = files.anyMatch(p -> p.getFileName().toString().endsWith(".wal"));
            }
            if (!wal) throw new AssertionError("a restored member/ without its WAL");
            if (!keptWhole) throw new AssertionError("a restored member/ without the data before it kept");
            if (marker.isEmpty()) throw new AssertionError("a restored member/ without a marker");
            PowerCutIT.assertNotAheadOfTheData(versions, recorded.get(), db);
        }
    }

    /** EIO, ENOSPC or a refusal: a restore stops failed (1) or refused (3, its checks). */
    @Override
    public Set<Integer> failureExits() {
        return Set.of(1, 3);
    }

    /**
     * The member's data before the restore is whole: still member/ (the restore did not begin, or the rename is
     * undone), or the kept backup, which inspect lists.
     */
    @Override
    public void assertNothingLost(FaultScenario.Seeded seeded, Path data) throws Exception {
        Seeded s = (Seeded) seeded;
        Path member = data.resolve("member");
        Path kept = backupOf(data, s.sha256());
        if (Files.isDirectory(member) && s.oldMember().equals(TreeDigest.of(member))) return;
        assertEquals(s.oldMember(), TreeDigest.of(kept), "the member's data before the restore, kept whole");
        JsonNode report = DataClaimsIT.inspect(data, LINE);
        assertTrue(
                report.path("backups").findValuesAsText("path").contains(kept.toString()),
                "inspect lists the kept member dir: " + report.path("backups"));
    }

    private static List<String> names(Path dir) throws Exception {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    private static Map<String, String> values(Keyspace keyspace) {
        Map<String, String> values = new TreeMap<>();
        keyspace.entries().forEach((k, v) -> values.put(k, HexFormat.of().formatHex(v.value())));
        return values;
    }

    private static void put(Client client, String key, String value) throws Exception {
        client.getKVClient().put(SampleData.bytes(key), SampleData.bytes(value)).get(30, TimeUnit.SECONDS);
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT).replace('_', ' ') + ": a live 3.5 member's snapshot restored, "
                + versions.getFirst() + " -> " + target();
    }
}
