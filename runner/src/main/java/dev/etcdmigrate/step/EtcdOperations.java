package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * What steps ask of etcd, and nothing else: the one port between the step scripts and the bundled
 * binaries. Its adapter ({@code etcd.EtcdAdapter}) owns the private etcd processes, the tool runner,
 * the write probe and every etcdctl/etcdutl flag; step unit tests use a fake. Every private etcd
 * listens on loopback only (a rejoining cluster member: its own peer URL).
 */
public interface EtcdOperations {

    /** A private etcd that has accepted a write through the data's API. */
    interface Running extends AutoCloseable {
        Release release();

        /** Polls until another write succeeds (e.g. after the cluster version moved). */
        void awaitWrite() throws IOException, InterruptedException, MigrateException;

        /** SIGTERM and a clean exit within the stop grace, else the step fails. */
        void stop() throws IOException, InterruptedException, MigrateException;

        /** Leaves nothing running (failure paths); a no-op after {@link #stop()}. */
        @Override
        void close();
    }

    /**
     * How a step wants its etcd to behave beyond serving the data: snapshot after this many applied entries
     * (0: etcd's default; 1: right after the first writes, so no older WAL entry is replayed after it), and
     * whether the downgrade monitor should look at once (where the line has one).
     */
    record Tuning(long snapshotCount, boolean quickDowngradeCheck) {
        public static final Tuning NONE = new Tuning(0, false);

        public static Tuning snapshotAtOnce() {
            return new Tuning(1, false);
        }

        public static Tuning snapshotAfter(long entries) {
            return new Tuning(entries, false);
        }

        public Tuning withQuickDowngradeCheck() {
            return new Tuning(snapshotCount, true);
        }
    }

    /**
     * Starts {@code release}'s etcd on the existing data in {@code dir}, and returns once a write through
     * {@code api} succeeded (a NOSPACE alarm found on arrival is disarmed only where safe).
     */
    Running start(Release release, Path dir, Tuning tuning, StorageApi api)
            throws IOException, InterruptedException, MigrateException;

    default Running start(Release release, Path dir) throws IOException, InterruptedException, MigrateException {
        return start(release, dir, Tuning.NONE, StorageApi.ETCD3);
    }

    /** Starts a new member in the empty dir {@code dir}, as this member of its real cluster (name and peer URLs). */
    Running startNewMember(Release release, Path dir, Tuning tuning, StorageApi api)
            throws IOException, InterruptedException, MigrateException;

    /** The minor-step core: start until a write succeeds, check it raised no alarm, stop cleanly. */
    void runUntilWrite(Release release, Path dir, Tuning tuning, StorageApi api)
            throws IOException, InterruptedException, MigrateException;

    default void runUntilWrite(Release release, Path dir, Tuning tuning)
            throws IOException, InterruptedException, MigrateException {
        runUntilWrite(release, dir, tuning, StorageApi.ETCD3);
    }

    /**
     * {@link #runUntilWrite} for etcd3 data, except that where the etcd exits before a write having said one of its
     * line's v2 refusals (catalog: {@code line.v2Refusals}), that refusal is returned instead of a failure; empty
     * when the etcd accepted a write. The etcd has exited either way.
     */
    Optional<String> runUntilWriteUnlessV2Refused(Release release, Path dir, Tuning tuning)
            throws IOException, InterruptedException, MigrateException;

    /** {@code etcdctl snapshot save} against the running etcd. */
    void saveSnapshot(Running etcd, Path file) throws IOException, InterruptedException, MigrateException;

    /**
     * Restores {@code snapshot} with {@code release}'s restore tool into the new data dir {@code into}, as this
     * member of its real cluster (name and peer URLs); {@code fromDataDirDb}: a data dir's db, which has no
     * snapshot hash.
     */
    void restoreSnapshot(Release release, Path snapshot, Path into, boolean fromDataDirDb)
            throws IOException, InterruptedException, MigrateException;

    /**
     * Restores {@code snapshot} with {@code release}'s restore tool into the new data dir {@code into} as this member
     * of a new cluster: its name and peer URLs, the cluster token {@code token} (a new cluster ID), and where
     * {@code bumpRevision} is above 0 the revision raised by that much with the older ones marked compacted (only
     * where the catalog says the line's tool can). {@code hashAppended}: the file ends in etcd's integrity hash.
     */
    void restoreNewCluster(
            Release release, Path snapshot, Path into, String token, long bumpRevision, boolean hashAppended)
            throws IOException, InterruptedException, MigrateException;

    /** {@code etcdctl migrate}: the v2 keys of the data dir become v3 keys, revision = v2 modified index. */
    void migrateV2Keys(Release release, Path dataDir) throws IOException, InterruptedException, MigrateException;

    /** What {@code etcdutl check v2store} reports as v2 content in the data dir; empty when it finds none. */
    Optional<String> v2ContentIn(Release checker, Path dataDir)
            throws IOException, InterruptedException, MigrateException;

    /** The line a cluster-wide downgrade is enabled to, if one is (3.6+ report it). */
    Optional<MinorLine> enabledDowngrade(Running etcd) throws IOException, InterruptedException, MigrateException;

    boolean clusterVersionIs(Running etcd, MinorLine line) throws IOException, InterruptedException, MigrateException;

    /** {@code etcdctl downgrade validate} then {@code enable}. */
    void enableDowngrade(Running etcd, MinorLine target) throws IOException, InterruptedException, MigrateException;

    void awaitClusterVersion(Running etcd, MinorLine line) throws IOException, InterruptedException, MigrateException;

    void awaitStorageVersion(Running etcd, MinorLine line) throws IOException, InterruptedException, MigrateException;

    /** Until no downgrade is enabled any more (the server's monitor ended the job). */
    void awaitDowngradeFinished(Running etcd) throws IOException, InterruptedException, MigrateException;

    /** True for a member of a multi-member cluster (its private etcd rejoins the peers). */
    boolean rejoinsCluster();

    // the v3 keyspace (probe key excluded)

    /** Applies a conversion's fix-ups (see v2.ConversionPlan); returns how many keys were put with a lease. */
    long applyFixes(Running etcd, Path fixes) throws IOException, InterruptedException, MigrateException;

    /** Digest (see v2.KeySetDigest) of every key and value, and how many keys carry a lease. */
    KeyspaceDigest digestV3(Running etcd) throws IOException, InterruptedException, MigrateException;

    record KeyspaceDigest(String digest, long leased) {}

    /** A key, its value and its lease's remaining TTL in seconds (0: no lease, -1: the lease ran out). */
    record DumpedKey(byte[] key, byte[] value, long leaseTtl) {}

    interface DumpedKeyConsumer {
        void accept(DumpedKey key) throws IOException;
    }

    void dumpV3(Running etcd, DumpedKeyConsumer consumer) throws IOException, InterruptedException, MigrateException;

    // the v2 keyspace (probe key excluded)

    interface V2Loader extends AutoCloseable {
        void put(String key, String value, long ttl) throws IOException, InterruptedException, MigrateException;

        /** Waits for every put in flight. */
        @Override
        void close() throws IOException, InterruptedException, MigrateException;
    }

    /** Puts through /v2/keys with up to {@code inFlight} requests outstanding (the server batches them). */
    V2Loader loadV2(Running etcd, int inFlight);

    interface V2KeyConsumer {
        void accept(String key, String value) throws java.io.IOException;
    }

    /** Every key a recursive listing shows (hidden keys are never listed). */
    void listV2(Running etcd, V2KeyConsumer consumer) throws IOException, InterruptedException, MigrateException;

    /** One key's value, or null when it does not exist. */
    String getV2(Running etcd, String key) throws IOException, InterruptedException, MigrateException;
}
