package dev.etcdmigrate.step;

import dev.etcdmigrate.Log;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Backups;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.MemberSwap;
import dev.etcdmigrate.etcd.BackendAlarms;
import dev.etcdmigrate.etcd.PrivateEtcd;
import dev.etcdmigrate.process.ChildEnvironment;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.process.ToolRunner;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** What steps run with: the data dir and its backups, the private server settings, the tools, the log. */
public record StepContext(
        DataDir dataDir,
        PrivateEtcd.Settings settings,
        MemberIdentity member,
        ToolRunner tools,
        Children children,
        Log log,
        Duration toolTimeout,
        Conversion conversion,
        Backups backups) {

    /** What an etcd2 -> etcd3 conversion needs from the options: where TTL keys without a TTL live. */
    public record Conversion(String ttlKeysDirectory, Duration defaultTtl) {}

    private static final Duration POLL = Duration.ofMillis(100);

    public Duration stopGrace() {
        return settings.stopGrace();
    }

    /** Swaps a staged member dir in, keeping the old one as a backup. */
    public MemberSwap memberSwap() {
        return new MemberSwap(dataDir, backups, log);
    }

    /** Starts a bundled etcd on dir and returns it once a write succeeded; stops it if that fails. */
    public PrivateEtcd startAndAwaitWrite(Release release, Path dir) throws Exception {
        return startAndAwaitWrite(release, dir, List.of());
    }

    public PrivateEtcd startAndAwaitWrite(Release release, Path dir, List<String> lineFlags) throws Exception {
        return startAndAwaitWrite(release, dir, lineFlags, StorageApi.ETCD3);
    }

    /** For etcd2 data the line's v2 switch is added and the probe is a v2 write. */
    public PrivateEtcd startAndAwaitWrite(Release release, Path dir, List<String> lineFlags, StorageApi api) throws Exception {
        List<String> flags = new ArrayList<>(lineFlags);
        if (api == StorageApi.ETCD2) {
            flags.addAll(release.line().v2EnableFlags());
        }
        PrivateEtcd etcd = PrivateEtcd.start(release, dir, settings, flags, log, children);
        try {
            try {
                etcd.awaitWrite(settings.startTimeout(), api);
            } catch (PrivateEtcd.NoSpaceException full) {
                BackendAlarms.disarmOnArrival(etcd, dir, settings.extraServerArgs(), log);
                etcd.awaitWrite(settings.startTimeout(), api);
            }
            return etcd;
        } catch (Exception | Error e) {
            etcd.close();
            throw e;
        }
    }

    /** The minor-step core: start, wait until a write succeeds, stop cleanly. */
    public void runUntilWrite(Release release, Path dir) throws Exception {
        runUntilWrite(release, dir, List.of());
    }

    public void runUntilWrite(Release release, Path dir, List<String> lineFlags) throws Exception {
        runUntilWrite(release, dir, lineFlags, StorageApi.ETCD3);
    }

    public void runUntilWrite(Release release, Path dir, List<String> lineFlags, StorageApi api) throws Exception {
        try (PrivateEtcd etcd = startAndAwaitWrite(release, dir, lineFlags, api)) {
            if (api == StorageApi.ETCD3) BackendAlarms.checkNoneRaised(etcd); // a step must not leave an alarm it raised
            etcd.stop(settings.stopGrace());
        }
    }

    /** Runs tool-&lt;release&gt; (etcdctl or etcdutl) with a scrubbed environment; failure explains itself. */
    public ToolRunner.Result runTool(Release release, String tool, List<String> args, String meaningOfFailure)
            throws Exception {
        ToolRunner.Result result = runToolAllowingFailure(release, tool, args);
        if (result.exitCode() != 0) {
            throw new StepFailedException(meaningOfFailure + ": " + tool + "-" + release.version() + " exited with "
                    + result.exitCode() + ": " + lastLines(result));
        }
        return result;
    }

    /** The same, returning a non-zero exit to the caller. */
    public ToolRunner.Result runToolAllowingFailure(Release release, String tool, List<String> args) throws Exception {
        Path binary = settings.binDir().tool(tool, release.etcdVersion());
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(args);
        Map<String, String> extra = tool.equals("etcdctl") ? release.line().etcdctlEnv() : Map.of();
        try {
            return tools.runAllowingFailure(tool + "-" + release.version(), command,
                    ChildEnvironment.scrubbed(settings.environment(), extra), dataDir.path(), toolTimeout);
        } catch (ToolRunner.ToolFailedException e) {
            throw new StepFailedException(tool + "-" + release.version() + " could not run: " + e.getMessage(), e);
        }
    }

    public static String lastLines(ToolRunner.Result result) {
        List<String> lines = result.lines();
        return String.join(" | ", lines.subList(Math.max(0, lines.size() - 8), lines.size()));
    }

    /** Polls Maintenance/Status until no downgrade is enabled any more (the server's monitor ended the job). */
    public void awaitDowngradeFinished(PrivateEtcd etcd) throws Exception {
        Polled polled = poll(() -> etcd.gateway().status().path("downgradeInfo"), info -> !info.path("enabled").asBoolean(false));
        if (!polled.reached()) {
            throw new StepFailedException("etcd " + etcd.release().version() + " still reports a downgrade in progress after "
                    + settings.startTimeout().toSeconds() + " s (" + polled.lastSeen() + ")");
        }
        log.info("etcd " + etcd.release().version() + " reports the downgrade finished");
    }

    /** Polls /version until the cluster version is on the wanted line ("3.6"). */
    public void awaitClusterVersion(PrivateEtcd etcd, String line) throws Exception {
        Polled polled = poll(() -> etcd.gateway().version().path("etcdcluster").asText(""), v -> v.startsWith(line + "."));
        if (!polled.reached()) {
            throw new StepFailedException("etcd " + etcd.release().version() + " did not report cluster version " + line
                    + " within " + settings.startTimeout().toSeconds() + " s (last seen: '" + polled.lastSeen() + "')");
        }
        log.info("etcd " + etcd.release().version() + " reports cluster version " + polled.lastSeen());
    }

    /** Polls /version until the storage version is the wanted one (3.6+ report it). */
    public void awaitStorageVersion(PrivateEtcd etcd, String wanted) throws Exception {
        Polled polled = poll(() -> etcd.gateway().version().path("storage").asText(""), wanted::equals);
        if (!polled.reached()) {
            throw new StepFailedException("etcd " + etcd.release().version() + " did not reach storage version " + wanted
                    + " within " + settings.startTimeout().toSeconds() + " s (last seen: '" + polled.lastSeen() + "')");
        }
        log.info("etcd " + etcd.release().version() + " reports storage version " + wanted);
    }

    private interface Reading<T> {
        T read() throws IOException, InterruptedException;
    }

    /** Whether a reading reached the wanted state within the start timeout, and the last one taken. */
    private record Polled(boolean reached, String lastSeen) {}

    private <T> Polled poll(Reading<T> reading, java.util.function.Predicate<T> reached) throws InterruptedException {
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
                seen = "unreachable: " + e.getMessage();
            }
            Thread.sleep(POLL); // poll interval of a deadline-bound wait
        }
        return new Polled(false, seen);
    }
}
