package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.v2.ConversionPlan;
import dev.etcdmigrate.v2.V2SnapshotFiles;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The steps' port without processes: it records each call as a line ("start 3.6.16 data snapshot-count=1"),
 * makes the files a real etcd or tool would leave where a step reads them (a restored member dir, a saved
 * snapshot, a v2 snapshot after an etcd2 start, the db `etcdctl migrate` writes), and can crash at the
 * n-th call, as a SIGKILL would interrupt the step there. What etcd keeps in the data across runs (an
 * enabled downgrade, the cluster version) lives in {@link Cluster}, which outlives a crashed fake.
 */
final class FakeEtcd implements EtcdOperations {

    /** Thrown at the call chosen to crash at: the step is interrupted there, with nothing cleaned up. */
    static final class Crash extends RuntimeException {
        Crash(String at) {
            super("crash at " + at);
        }
    }

    /** What the data remembers between runs: a downgrade once enabled stays enabled (and the cluster version moved). */
    static final class Cluster {
        Optional<MinorLine> downgradeEnabled = Optional.empty();
        Optional<MinorLine> clusterVersion = Optional.empty();
        /** Another member's runner enables the downgrade just before this one's enable (members edited at once). */
        boolean raceToEnable;
    }

    private final Path dataDir;
    private final Cluster cluster;
    final List<String> calls = new ArrayList<>();
    private int crashAt;
    /** Answers of successive `check v2store` calls; none left means "no v2 content". */
    final Deque<Optional<String>> v2Findings = new ArrayDeque<>();
    /** Answers of successive starts that judge v2 content themselves; none left means "accepted a write". */
    final Deque<Optional<String>> v2Refusals = new ArrayDeque<>();
    /** The v2 store JSON an etcd2 start snapshots (ConvertToV3), and the keys the v3 keyspace holds (RollbackToV2). */
    String v2StoreJson;

    final List<DumpedKey> v3Keys = new ArrayList<>();
    final Map<String, String> v2Store = new LinkedHashMap<>();
    boolean rejoins;
    private KeyspaceDigest converted = new KeyspaceDigest("", 0);

    FakeEtcd(Path dataDir, Cluster cluster) {
        this.dataDir = dataDir;
        this.cluster = cluster;
    }

    /** Crash at the n-th call (1-based); 0: never. */
    FakeEtcd crashingAt(int n) {
        this.crashAt = n;
        return this;
    }

    private void call(String what) {
        calls.add(what);
        if (calls.size() == crashAt) {
            throw new Crash(what);
        }
    }

    /** A path as the calls name it: relative to the data dir ("." for the data dir itself). */
    private String name(Path p) {
        Path rel = dataDir.relativize(p);
        return rel.toString().isEmpty() ? "." : rel.toString();
    }

    private static String tuning(Tuning t) {
        return (t.snapshotCount() > 0 ? " snapshot-count=" + t.snapshotCount() : "")
                + (t.quickDowngradeCheck() ? " quick-downgrade-check" : "");
    }

    private final class Handle implements Running {
        private final Release release;
        private boolean stopped;

        Handle(Release release) {
            this.release = release;
        }

        @Override
        public Release release() {
            return release;
        }

        @Override
        public void awaitWrite() {
            call("write " + release.version());
        }

        @Override
        public void stop() {
            call("stop " + release.version());
            stopped = true;
        }

        @Override
        public void close() {
            // a fake has no process to kill; a step that never stopped it is visible in the calls
        }
    }

    @Override
    public Running start(Release release, Path dir, Tuning tuning, StorageApi api) {
        call("start " + release.version() + " " + name(dir) + tuning(tuning) + (api == StorageApi.ETCD2 ? " v2" : ""));
        return new Handle(release);
    }

    @Override
    public Running startNewMember(Release release, Path dir, Tuning tuning, StorageApi api) throws IOException {
        call("start new member " + release.version() + " " + name(dir) + tuning(tuning)
                + (api == StorageApi.ETCD2 ? " v2" : ""));
        Files.createDirectories(dir.resolve("member/wal"));
        return new Handle(release);
    }

    @Override
    public void runUntilWrite(Release release, Path dir, Tuning tuning, StorageApi api) throws IOException {
        call("run " + release.version() + " " + name(dir) + tuning(tuning) + (api == StorageApi.ETCD2 ? " v2" : ""));
        if (api == StorageApi.ETCD2 && v2StoreJson != null) {
            // etcd snapshots its v2 store after the replay (the step asked for one snapshot)
            Path snap = Files.createDirectories(dir.resolve("member/snap"));
            Path file = snap.resolve("0000000000000002-0000000000000009.snap");
            Files.write(file, V2SnapshotFiles.snapshotFile(v2StoreJson.getBytes(StandardCharsets.UTF_8)));
            Path fixes = Files.createTempFile("fixes", ".bin");
            try {
                ConversionPlan.Summary s =
                        ConversionPlan.write(file, fixes, "/registry/events", Duration.ofHours(1), Instant.now());
                converted = new KeyspaceDigest(s.digest(), s.leased());
            } finally {
                Files.delete(fixes);
            }
        }
    }

    @Override
    public Optional<String> runUntilWriteUnlessV2Refused(Release release, Path dir, Tuning tuning) {
        call("run judging v2 " + release.version() + " " + name(dir) + tuning(tuning));
        return v2Refusals.isEmpty() ? Optional.empty() : v2Refusals.removeFirst();
    }

    @Override
    public void saveSnapshot(Running etcd, Path file) throws IOException {
        call("snapshot save " + etcd.release().version() + " " + name(file));
        Files.writeString(file, "snapshot of " + dataDir);
    }

    @Override
    public void restoreSnapshot(Release release, Path snapshot, Path into, boolean fromDataDirDb) throws IOException {
        call("restore " + release.version() + " " + name(snapshot) + " into " + name(into)
                + (fromDataDirDb ? " from-db" : ""));
        Files.createDirectories(into.resolve("member/snap"));
        Files.createDirectories(into.resolve("member/wal"));
        Files.writeString(into.resolve("member/snap/db"), "restored " + release.version());
    }

    @Override
    public void restoreNewCluster(
            Release release, Path snapshot, Path into, String token, long bumpRevision, boolean hashAppended)
            throws IOException {
        call("restore-cluster " + release.version() + " " + name(snapshot) + " into " + name(into) + " token " + token
                + " bump " + bumpRevision + (hashAppended ? "" : " from-db"));
        Files.createDirectories(into.resolve("member/snap"));
        Files.createDirectories(into.resolve("member/wal"));
        Files.writeString(into.resolve("member/snap/db"), "restored " + release.version());
    }

    @Override
    public void migrateV2Keys(Release release, Path dir) throws IOException {
        call("migrate " + release.version() + " " + name(dir));
        Files.createDirectories(dir.resolve("member/snap"));
        Files.writeString(dir.resolve("member/snap/db"), "v3 keys from v2");
    }

    @Override
    public Optional<String> v2ContentIn(Release checker, Path dir) {
        call("check v2store " + checker.version() + " " + name(dir));
        return v2Findings.isEmpty() ? Optional.empty() : v2Findings.removeFirst();
    }

    @Override
    public Optional<MinorLine> enabledDowngrade(Running etcd) {
        call("downgrade status " + etcd.release().version());
        return cluster.downgradeEnabled;
    }

    @Override
    public boolean clusterVersionIs(Running etcd, MinorLine line) {
        call("cluster version " + etcd.release().version());
        return cluster.clusterVersion.map(line::equals).orElse(false);
    }

    @Override
    public void enableDowngrade(Running etcd, MinorLine target) throws StepFailedException {
        call("downgrade enable " + etcd.release().version() + " " + target);
        if (cluster.raceToEnable) {
            cluster.raceToEnable = false;
            cluster.downgradeEnabled = Optional.of(target);
            cluster.clusterVersion = Optional.of(target);
            // what etcd answers the second enable
            throw new StepFailedException("etcdserver: cluster has a downgrade job in progress");
        }
        if (cluster.clusterVersion.equals(Optional.of(target))) {
            // what etcd answers: the cluster version is the target already
            throw new StepFailedException("etcdctl downgrade validate: invalid downgrade target version");
        }
        cluster.downgradeEnabled = Optional.of(target);
        cluster.clusterVersion = Optional.of(target);
    }

    @Override
    public void awaitClusterVersion(Running etcd, MinorLine line) {
        call("await cluster version " + line);
    }

    @Override
    public void awaitStorageVersion(Running etcd, MinorLine line) {
        call("await storage version " + line);
    }

    @Override
    public void awaitDowngradeFinished(Running etcd) {
        call("await downgrade finished " + etcd.release().version());
        cluster.downgradeEnabled = Optional.empty();
    }

    @Override
    public boolean rejoinsCluster() {
        return rejoins;
    }

    @Override
    public long applyFixes(Running etcd, Path fixes) {
        call("apply fixes " + etcd.release().version());
        return 0;
    }

    /** The digest a faithful conversion yields: what the v2 snapshot held. */
    @Override
    public KeyspaceDigest digestV3(Running etcd) {
        call("digest v3 " + etcd.release().version());
        return converted;
    }

    @Override
    public void dumpV3(Running etcd, DumpedKeyConsumer consumer)
            throws IOException, InterruptedException, MigrateException {
        call("dump v3 " + etcd.release().version());
        for (DumpedKey key : v3Keys) {
            consumer.accept(key);
        }
    }

    @Override
    public V2Loader loadV2(Running etcd, int inFlight) {
        call("load v2 " + etcd.release().version());
        return new V2Loader() {
            @Override
            public void put(String key, String value, long ttl) {
                v2Store.put(key, value);
            }

            @Override
            public void close() {
                // every put is done
            }
        };
    }

    @Override
    public void listV2(Running etcd, V2KeyConsumer consumer) throws IOException {
        call("list v2 " + etcd.release().version());
        for (var e : v2Store.entrySet()) {
            if (!e.getKey().contains("/_")) consumer.accept(e.getKey(), e.getValue());
        }
    }

    @Override
    public String getV2(Running etcd, String key) {
        return v2Store.get(key);
    }
}
