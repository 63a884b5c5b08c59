package dev.etcdmigrate.etcd;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.etcd.backend.BackendAlarms;
import dev.etcdmigrate.etcd.client.Keyspace;
import dev.etcdmigrate.etcd.client.V2Client;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.process.ToolRunner;
import dev.etcdmigrate.step.EtcdOperations;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The one adapter of the steps' port: private etcds ({@link PrivateEtcd}), one-shot etcdctl/etcdutl runs
 * ({@link EtcdTools}: every flag they take is written there, in this package), the write probe, and the
 * keyspaces through the gateway, jetcd and /v2/keys.
 */
public final class EtcdAdapter implements EtcdOperations {

    /** How soon a line with a downgrade monitor (3.6+) looks whether every member is on the older line. */
    private static final String QUICK_DOWNGRADE_CHECK = "50ms";
    /** How often an etcd that died in its own start race (catalog: line.startRaces) is started again. */
    private static final int START_RACE_RETRIES = 2;

    private final PrivateEtcd.Settings settings;
    private final Member member;
    private final EtcdTools etcdTools;
    private final EtcdReadings readings;
    private final Children children;
    private final Log log;

    /** Who the member is in its real cluster: what a restore or a new member's bootstrap names. */
    public record Member(String name, String initialCluster, String advertisePeerUrls) {
        List<String> bootstrapFlags() {
            return List.of("--initial-advertise-peer-urls", advertisePeerUrls, "--initial-cluster", initialCluster);
        }
    }

    /** @param workDir where tools run (the data dir) */
    public EtcdAdapter(
            PrivateEtcd.Settings settings,
            Member member,
            ToolRunner tools,
            Children children,
            Log log,
            Duration toolTimeout,
            Path workDir) {
        this.settings = settings;
        this.member = member;
        this.etcdTools = new EtcdTools(settings, member, tools, toolTimeout, workDir);
        this.readings = new EtcdReadings(settings.startTimeout(), log);
        this.children = children;
        this.log = log;
    }

    /** A running private etcd as the steps see it. */
    private final class Handle implements Running {
        final PrivateEtcd etcd;

        Handle(PrivateEtcd etcd) {
            this.etcd = etcd;
        }

        @Override
        public Release release() {
            return etcd.release();
        }

        @Override
        public void awaitWrite() throws IOException, InterruptedException, MigrateException {
            etcd.awaitWrite(settings.startTimeout());
        }

        @Override
        public void stop() throws IOException, InterruptedException, MigrateException {
            etcd.stop(settings.stopGrace());
        }

        @Override
        public void close() {
            etcd.close();
        }
    }

    private static PrivateEtcd etcd(Running running) {
        return ((Handle) running).etcd;
    }

    @Override
    public Running start(Release release, Path dir, Tuning tuning, StorageApi api)
            throws IOException, InterruptedException, MigrateException {
        return new Handle(startAndAwaitWrite(release, dir, flags(release, tuning, api), api));
    }

    @Override
    public Running startNewMember(Release release, Path dir, Tuning tuning, StorageApi api)
            throws IOException, InterruptedException, MigrateException {
        List<String> flags = new ArrayList<>(member.bootstrapFlags());
        flags.addAll(flags(release, tuning, api));
        return new Handle(startAndAwaitWrite(release, dir, flags, api));
    }

    @Override
    public void runUntilWrite(Release release, Path dir, Tuning tuning, StorageApi api)
            throws IOException, InterruptedException, MigrateException {
        try (PrivateEtcd etcd = startAndAwaitWrite(release, dir, flags(release, tuning, api), api)) {
            if (api == StorageApi.ETCD3)
                BackendAlarms.checkNoneRaised(
                        etcd.gateway(),
                        etcd.release().version().toString(),
                        settings.startTimeout()); // a step must not leave an alarm it raised
            etcd.stop(settings.stopGrace());
        }
    }

    @Override
    public Optional<String> runUntilWriteUnlessV2Refused(Release release, Path dir, Tuning tuning)
            throws IOException, InterruptedException, MigrateException {
        try {
            runUntilWrite(release, dir, tuning, StorageApi.ETCD3);
            return Optional.empty();
        } catch (PrivateEtcd.V2RefusedException refused) {
            return Optional.of(refused.refusal());
        }
    }

    private static List<String> flags(Release release, Tuning tuning, StorageApi api) {
        List<String> flags = new ArrayList<>();
        if (tuning.snapshotCount() > 0) flags.add("--snapshot-count=" + tuning.snapshotCount());
        String check = release.line().downgradeCheckFlag();
        if (tuning.quickDowngradeCheck() && !check.isEmpty()) flags.add(check + "=" + QUICK_DOWNGRADE_CHECK);
        if (api == StorageApi.ETCD2) flags.addAll(release.line().v2EnableFlags());
        return flags;
    }

    private PrivateEtcd startAndAwaitWrite(Release release, Path dir, List<String> flags, StorageApi api)
            throws IOException, InterruptedException, MigrateException {
        for (int attempt = 1; ; attempt++) {
            try {
                return startOnceAndAwaitWrite(release, dir, flags, api);
            } catch (PrivateEtcd.EtcdFailedException e) {
                // etcd's own start race (catalog: line.startRaces): it died before it wrote anything, so the same
                // etcd on the same data again is safe, for a cluster member too (docs/etcd-start-panic.md)
                Optional<String> race = release.line().startRaces().stream()
                        .filter(String.valueOf(e.getMessage())::contains)
                        .findFirst();
                if (race.isEmpty() || attempt > START_RACE_RETRIES) throw e;
                log.emit(new Event.Note(
                        Event.Level.WARN,
                        "etcd " + release.version() + " died in its own start race (\"" + race.get()
                                + "\"), not on the data: starting it again on the same data (" + attempt + " of "
                                + START_RACE_RETRIES + ")"));
            }
        }
    }

    private PrivateEtcd startOnceAndAwaitWrite(Release release, Path dir, List<String> flags, StorageApi api)
            throws IOException, InterruptedException, MigrateException {
        PrivateEtcd etcd = PrivateEtcd.start(release, dir, settings, flags, log, children);
        try {
            try {
                etcd.awaitWrite(settings.startTimeout(), api);
            } catch (PrivateEtcd.NoSpaceException full) {
                BackendAlarms.disarmOnArrival(
                        etcd.gateway(), etcd.release().version().toString(), dir, settings.extraServerArgs(), log);
                etcd.awaitWrite(settings.startTimeout(), api);
            }
            return etcd;
        } catch (Exception | Error e) {
            etcd.close();
            throw e;
        }
    }

    @Override
    public void saveSnapshot(Running etcd, Path file) throws IOException, InterruptedException, MigrateException {
        etcdTools.saveSnapshot(etcd.release(), file);
    }

    @Override
    public void restoreSnapshot(Release release, Path snapshot, Path into, boolean fromDataDirDb)
            throws IOException, InterruptedException, MigrateException {
        etcdTools.restoreSnapshot(release, snapshot, into, fromDataDirDb);
    }

    @Override
    public void restoreNewCluster(
            Release release, Path snapshot, Path into, String token, long bumpRevision, boolean hashAppended)
            throws IOException, InterruptedException, MigrateException {
        etcdTools.restoreNewCluster(release, snapshot, into, token, bumpRevision, hashAppended);
    }

    @Override
    public void migrateV2Keys(Release release, Path dataDir)
            throws IOException, InterruptedException, MigrateException {
        etcdTools.migrateV2Keys(release, dataDir);
    }

    @Override
    public Optional<String> v2ContentIn(Release checker, Path dataDir)
            throws IOException, InterruptedException, MigrateException {
        return etcdTools.v2ContentIn(checker, dataDir);
    }

    @Override
    public Optional<MinorLine> enabledDowngrade(Running etcd)
            throws IOException, InterruptedException, MigrateException {
        return readings.enabledDowngrade(etcd(etcd));
    }

    @Override
    public boolean clusterVersionIs(Running etcd, MinorLine line)
            throws IOException, InterruptedException, MigrateException {
        return readings.clusterVersionIs(etcd(etcd), line);
    }

    @Override
    public void enableDowngrade(Running etcd, MinorLine target)
            throws IOException, InterruptedException, MigrateException {
        etcdTools.enableDowngrade(etcd.release(), target);
    }

    @Override
    public void awaitClusterVersion(Running etcd, MinorLine line)
            throws IOException, InterruptedException, MigrateException {
        readings.awaitClusterVersion(etcd(etcd), line);
    }

    @Override
    public void awaitStorageVersion(Running etcd, MinorLine line)
            throws IOException, InterruptedException, MigrateException {
        readings.awaitStorageVersion(etcd(etcd), line);
    }

    @Override
    public void awaitDowngradeFinished(Running etcd) throws IOException, InterruptedException, MigrateException {
        readings.awaitDowngradeFinished(etcd(etcd));
    }

    @Override
    public boolean rejoinsCluster() {
        return settings.cluster().isPresent();
    }

    @Override
    public long applyFixes(Running etcd, Path fixes) throws IOException, InterruptedException, MigrateException {
        try (Keyspace keyspace = Keyspace.open(etcd(etcd).gateway().baseUrl())) {
            return keyspace.apply(fixes);
        }
    }

    @Override
    public KeyspaceDigest digestV3(Running etcd) throws IOException, InterruptedException, MigrateException {
        try (Keyspace keyspace = Keyspace.open(etcd(etcd).gateway().baseUrl())) {
            Keyspace.Observed observed = keyspace.observe();
            return new KeyspaceDigest(observed.digest(), observed.leased());
        }
    }

    @Override
    public void dumpV3(Running etcd, DumpedKeyConsumer consumer)
            throws IOException, InterruptedException, MigrateException {
        byte[] probe = PrivateEtcd.PROBE_KEY.getBytes(StandardCharsets.UTF_8);
        try (Keyspace keyspace = Keyspace.open(etcd(etcd).gateway().baseUrl())) {
            keyspace.dump(entry -> {
                if (!java.util.Arrays.equals(entry.key(), probe)) { // the runner's own probe, never data
                    consumer.accept(new DumpedKey(entry.key(), entry.value(), entry.leaseTtl()));
                }
            });
        }
    }

    @Override
    public V2Loader loadV2(Running etcd, int inFlight) {
        V2Client.Loader loader = etcd(etcd).v2().loader(inFlight);
        return new V2Loader() {
            @Override
            public void put(String key, String value, long ttl)
                    throws IOException, InterruptedException, MigrateException {
                loader.put(key, value, ttl);
            }

            @Override
            public void close() throws IOException, InterruptedException, MigrateException {
                loader.close();
            }
        };
    }

    @Override
    public void listV2(Running etcd, V2KeyConsumer consumer)
            throws IOException, InterruptedException, MigrateException {
        etcd(etcd).v2().forEachListedKey((key, value) -> {
            if (!key.equals(PrivateEtcd.PROBE_KEY)) consumer.accept(key, value);
        });
    }

    @Override
    public String getV2(Running etcd, String key) throws IOException, InterruptedException, MigrateException {
        return etcd(etcd).v2().get(key);
    }
}
