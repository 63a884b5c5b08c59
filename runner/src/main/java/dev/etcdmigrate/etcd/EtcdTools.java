package dev.etcdmigrate.etcd;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.process.ChildEnvironment;
import dev.etcdmigrate.process.ToolRunner;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@link EtcdAdapter}'s one-shot etcdctl/etcdutl runs: every flag they take (the only code that knows them,
 * with the adapter's bootstrap flags), a scrubbed environment, and what their exit and output mean.
 */
final class EtcdTools {

    private final PrivateEtcd.Settings settings;
    private final EtcdAdapter.Member member;
    private final ToolRunner tools;
    private final Duration toolTimeout;
    private final Path workDir;

    /** @param workDir where tools run (the data dir) */
    EtcdTools(
            PrivateEtcd.Settings settings,
            EtcdAdapter.Member member,
            ToolRunner tools,
            Duration toolTimeout,
            Path workDir) {
        this.settings = settings;
        this.member = member;
        this.tools = tools;
        this.toolTimeout = toolTimeout;
        this.workDir = workDir;
    }

    /** etcdctl snapshot save from the private etcd of {@code release} (its client URL). */
    void saveSnapshot(Release release, Path file) throws IOException, InterruptedException, MigrateException {
        runTool(
                release,
                "etcdctl",
                List.of("--endpoints", settings.ports().clientUrl().toString(), "snapshot", "save", file.toString()),
                "etcd " + release.version() + " could not save a snapshot");
    }

    void restoreSnapshot(Release release, Path snapshot, Path into, boolean fromDataDirDb)
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

    void restoreNewCluster(
            Release release, Path snapshot, Path into, String token, long bumpRevision, boolean hashAppended)
            throws IOException, InterruptedException, MigrateException {
        if (bumpRevision > 0 && !release.line().tools().restoreBumpsRevision())
            throw new IllegalArgumentException(release.version() + "'s restore tool cannot raise the revision");
        List<String> args = new ArrayList<>(List.of("snapshot", "restore", snapshot.toString()));
        if (!hashAppended) args.add("--skip-hash-check"); // a member's db has no integrity hash to check
        args.addAll(List.of("--data-dir", into.toString(), "--name", member.name()));
        args.addAll(member.bootstrapFlags());
        args.addAll(List.of("--initial-cluster-token", token));
        if (bumpRevision > 0) args.addAll(List.of("--bump-revision", String.valueOf(bumpRevision), "--mark-compacted"));
        runTool(
                release,
                release.line().tools().snapshotRestore().toolName(),
                args,
                "could not restore " + snapshot.getFileName() + " with " + release.version());
    }

    void migrateV2Keys(Release release, Path dataDir) throws IOException, InterruptedException, MigrateException {
        runTool(
                release,
                "etcdctl",
                List.of("migrate", "--data-dir", dataDir.toString()),
                "etcdctl " + release.version() + " migrate failed; the data dir is unchanged");
    }

    /** What etcdutl check v2store says when it finds v2 content ("detected custom v2 content in WAL records",
     * "... in v2store"); any other failure is the tool's, not a finding about the data. */
    static final String V2_FINDING = "detected custom";

    Optional<String> v2ContentIn(Release checker, Path dataDir)
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

    /** etcdctl downgrade validate, then enable, against the private etcd of {@code release}. */
    void enableDowngrade(Release release, MinorLine target) throws IOException, InterruptedException, MigrateException {
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
}
