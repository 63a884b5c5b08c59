package dev.etcdmigrate.etcd;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.etcd.backend.BackendAlarms;
import dev.etcdmigrate.etcd.client.V2Client;
import dev.etcdmigrate.etcd.client.V3Keyspace;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.ChildEnvironment;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.process.ToolRunner;
import dev.etcdmigrate.step.EtcdOperations;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The one adapter of the steps' port: private etcds ({@link PrivateEtcd}), one-shot etcdctl/etcdutl runs
 * (every flag they take is written here), the write probe, and the keyspaces through the gateway, jetcd
 * and /v2/keys.
 */
public final class EtcdAdapter implements EtcdOperations {

    private static final Duration POLL = Duration.ofMillis(100);
    /** How soon a line with a downgrade monitor (3.6+) looks whether every member is on the older line. */
    private static final String QUICK_DOWNGRADE_CHECK = "50ms";

    private final PrivateEtcd.Settings settings;
    private final Member member;
    private final ToolRunner tools;
    private final Children children;
    private final Log log;
    private final Duration toolTimeout;
    private final Path workDir;

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
        this.workDir = workDir;
        this.settings = settings;
        this.member = member;
        this.tools = tools;
        this.children = children;
        this.log = log;
        this.toolTimeout = toolTimeout;
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
                        etcd.release().version().toString()); // a step must not leave an alarm it raised
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
        Release release = etcd.release();
        runTool(
                release,
                "etcdctl",
                List.of("--endpoints", settings.ports().clientUrl().toString(), "snapshot", "save", file.toString()),
                "etcd " + release.version() + " could not save a snapshot");
    }

    @Override
    public void restoreSnapshot(Release release, Path snapshot, Path into, boolean fromDataDirDb)
            throws IOException, InterruptedException, MigrateException {
        List<String> args = new ArrayList<>(List.of("snapshot", "restore", snapshot.toString()));
        if (fromDataDirDb) args.add("--skip-hash-check");
        args.addAll(List.of("--data-dir", into.toString(), "--name", member.name()));
        args.addAll(member.bootstrapFlags());
        runTool(
                release,
                release.line().tools().snapshotRestore().toolName(),
                args,
                "could not restore " + snapshot.getFileName() + " with " + release.version());
    }

    @Override
    public void migrateV2Keys(Release release, Path dataDir)
            throws IOException, InterruptedException, MigrateException {
        runTool(
                release,
                "etcdctl",
                List.of("migrate", "--data-dir", dataDir.toString()),
                "etcdctl " + release.version() + " migrate failed; the data dir is unchanged");
    }

    /** What etcdutl check v2store says when it finds v2 content ("detected custom v2 content in WAL records",
     * "... in v2store"); any other failure is the tool's, not a finding about the data. */
    static final String V2_FINDING = "detected custom";

    @Override
    public Optional<String> v2ContentIn(Release checker, Path dataDir)
            throws IOException, InterruptedException, MigrateException {
        List<String> check = new ArrayList<>(List.of("check", "v2store", "--data-dir", dataDir.toString()));
        settings.walDirFor(dataDir).ifPresent(w -> check.addAll(List.of("--wal-dir", w.toString())));
        ToolRunner.Result result = runToolAllowingFailure(checker, "etcdutl", check);
        if (result.exitCode() == 0) {
            return Optional.empty();
        }
        if (result.lines().stream().noneMatch(l -> l.contains(V2_FINDING))) {
            throw new FailedException("etcdutl " + checker.version() + " check v2store failed (exit "
                    + result.exitCode() + "), which says nothing about the data: " + result.lastLines());
        }
        return Optional.of(result.lastLines());
    }

    @Override
    public Optional<MinorLine> enabledDowngrade(Running etcd)
            throws IOException, InterruptedException, MigrateException {
        if (!etcd.release().line().statusReportsDowngrade()) {
            return Optional.empty();
        }
        var info = etcd(etcd).gateway().status().path("downgradeInfo");
        return info.path("enabled").asBoolean(false)
                ? Optional.of(
                        EtcdVersion.parse(info.path("targetVersion").asText("").split("-", 2)[0])
                                .line())
                : Optional.empty();
    }

    @Override
    public boolean clusterVersionIs(Running etcd, MinorLine line)
            throws IOException, InterruptedException, MigrateException {
        return onLine(etcd(etcd).gateway().version().path("etcdcluster").asText(""), line);
    }

    @Override
    public void enableDowngrade(Running etcd, MinorLine target)
            throws IOException, InterruptedException, MigrateException {
        Release release = etcd.release();
        String endpoint = settings.ports().clientUrl().toString();
        runTool(
                release,
                "etcdctl",
                List.of("--endpoints", endpoint, "downgrade", "validate", target.toString()),
                "etcd " + release.version() + " does not allow a downgrade to " + target);
        runTool(
                release,
                "etcdctl",
                List.of("--endpoints", endpoint, "downgrade", "enable", target.toString()),
                "etcd " + release.version() + " refused to enable a downgrade to " + target);
    }

    @Override
    public void awaitClusterVersion(Running etcd, MinorLine line)
            throws IOException, InterruptedException, MigrateException {
        Polled polled =
                poll(() -> etcd(etcd).gateway().version().path("etcdcluster").asText(""), v -> onLine(v, line));
        if (!polled.reached()) {
            throw new FailedException("etcd " + etcd.release().version() + " did not report cluster version " + line
                    + " within " + settings.startTimeout().toSeconds() + " s (last seen: '" + polled.lastSeen() + "')");
        }
        log.emit(new EtcdEvent.EtcdReported(etcd.release().version(), "cluster version", polled.lastSeen()));
    }

    @Override
    public void awaitStorageVersion(Running etcd, MinorLine line)
            throws IOException, InterruptedException, MigrateException {
        Polled polled =
                poll(() -> etcd(etcd).gateway().version().path("storage").asText(""), v -> onLine(v, line));
        if (!polled.reached()) {
            throw new FailedException("etcd " + etcd.release().version() + " did not reach storage version " + line
                    + " within " + settings.startTimeout().toSeconds() + " s (last seen: '" + polled.lastSeen() + "')");
        }
        log.emit(new EtcdEvent.EtcdReported(etcd.release().version(), "storage version", polled.lastSeen()));
    }

    @Override
    public void awaitDowngradeFinished(Running etcd) throws IOException, InterruptedException, MigrateException {
        Polled polled = poll(
                () -> etcd(etcd).gateway().status().path("downgradeInfo"),
                info -> !info.path("enabled").asBoolean(false));
        if (!polled.reached()) {
            throw new FailedException(
                    "etcd " + etcd.release().version() + " still reports a downgrade in progress after "
                            + settings.startTimeout().toSeconds() + " s (" + polled.lastSeen() + ")");
        }
        log.emit(new EtcdEvent.EtcdReported(etcd.release().version(), "downgrade", "finished"));
    }

    @Override
    public boolean rejoinsCluster() {
        return settings.cluster().isPresent();
    }

    @Override
    public long applyFixes(Running etcd, Path fixes) throws IOException, InterruptedException, MigrateException {
        try (V3Keyspace keyspace = new V3Keyspace(etcd(etcd).gateway().baseUrl())) {
            return keyspace.apply(fixes);
        }
    }

    @Override
    public KeyspaceDigest digestV3(Running etcd) throws IOException, InterruptedException, MigrateException {
        try (V3Keyspace keyspace = new V3Keyspace(etcd(etcd).gateway().baseUrl())) {
            V3Keyspace.Observed observed = keyspace.observe();
            return new KeyspaceDigest(observed.digest(), observed.leased());
        }
    }

    @Override
    public void dumpV3(Running etcd, DumpedKeyConsumer consumer)
            throws IOException, InterruptedException, MigrateException {
        byte[] probe = PrivateEtcd.PROBE_KEY.getBytes(StandardCharsets.UTF_8);
        try (V3Keyspace keyspace = new V3Keyspace(etcd(etcd).gateway().baseUrl())) {
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

    /** "3.6.0" (or "3.6.0-alpha.0") is on line 3.6; an empty or unparsable answer is on none. */
    private static boolean onLine(String version, MinorLine line) {
        try {
            return !version.isEmpty()
                    && EtcdVersion.parse(version.split("-", 2)[0]).line().equals(line);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /** Runs tool-&lt;release&gt; (etcdctl or etcdutl) with a scrubbed environment; a non-zero exit explains itself. */
    private ToolRunner.Result runTool(Release release, String tool, List<String> args, String meaningOfFailure)
            throws IOException, InterruptedException, MigrateException {
        ToolRunner.Result result = runToolAllowingFailure(release, tool, args);
        if (result.exitCode() != 0) {
            throw new FailedException(meaningOfFailure + ": " + tool + "-" + release.version() + " exited with "
                    + result.exitCode() + ": " + result.lastLines());
        }
        return result;
    }

    private ToolRunner.Result runToolAllowingFailure(Release release, String tool, List<String> args)
            throws IOException, InterruptedException, MigrateException {
        Path binary = settings.binDir().tool(tool, release.etcdVersion());
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(args);
        Map<String, String> extra = tool.equals("etcdctl") ? release.line().etcdctlEnv() : Map.of();
        try {
            return tools.runAllowingFailure(
                    tool + "-" + release.version(),
                    command,
                    ChildEnvironment.scrubbed(settings.environment(), extra),
                    workDir,
                    toolTimeout);
        } catch (ToolRunner.ToolFailedException e) {
            throw new FailedException(tool + "-" + release.version() + " could not run: " + e.getMessage(), e);
        }
    }

    private interface Reading<T> {
        T read() throws IOException, InterruptedException;
    }

    /** Whether a reading reached the wanted state within the start timeout, and the last one taken. */
    private record Polled(boolean reached, String lastSeen) {}

    private <T> Polled poll(Reading<T> reading, Predicate<T> reached) throws InterruptedException {
        long end = System.nanoTime() + settings.startTimeout().toNanos();
        String seen = "";
        while (System.nanoTime() < end) {
            try {
                T value = reading.read();
                seen = String.valueOf(value);
                if (reached.test(value)) {
                    return new Polled(true, seen);
                }
            } catch (IOException e) {
                seen = "unreachable: " + dev.etcdmigrate.error.Reason.of(e);
            }
            Thread.sleep(POLL); // poll interval of a deadline-bound wait
        }
        return new Polled(false, seen);
    }
}
