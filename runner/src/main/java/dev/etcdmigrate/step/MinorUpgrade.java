package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.util.List;
import java.util.Optional;
import dev.etcdmigrate.process.ToolRunner;

/**
 * Opens the data with the next minor line's etcd: start it privately, wait for a write, stop it.
 * When that line refuses v2 content (3.6+), the previous line's {@code etcdutl check v2store} vets
 * the data first. Data that passed through etcd 2.x or 3.0 (or held v2 TTL keys) keeps old v2 WAL
 * entries; one start of the previous line with {@code --snapshot-count=1} puts a fresh snapshot after
 * them, so they are no longer replayed, and the check runs again. Real v2 keys still fail it: the
 * step refuses, with the data left at the previous line.
 */
public record MinorUpgrade(EtcdVersion from, Release release, Optional<Release> v2Checker) implements Step {

    @Override
    public String describe() {
        return "upgrade " + from + " -> " + release.version() + ": start etcd " + release.version()
                + " on the data until a write succeeds"
                + v2Checker.map(c -> ", after etcdutl " + c.version() + " confirms no v2 content").orElse("");
    }

    @Override
    public DataVersion result() {
        return new DataVersion(release.etcdVersion(), StorageApi.ETCD3);
    }

    @Override
    public List<Binary> binaries() {
        return v2Checker.map(c -> List.of(new Binary("etcdutl", c), Binary.etcd(c), Binary.etcd(release)))
                .orElse(List.of(Binary.etcd(release)));
    }

    @Override
    public void run(StepContext context) throws Exception {
        if (v2Checker.isPresent()) {
            confirmNoV2Content(context, v2Checker.get());
        }
        context.runUntilWrite(release, context.dataDir().path());
    }

    private void confirmNoV2Content(StepContext context, Release checker) throws Exception {
        List<String> check = List.of("check", "v2store", "--data-dir", context.dataDir().path().toString());
        ToolRunner.Result first = context.runToolAllowingFailure(checker, "etcdutl", check);
        if (first.exitCode() == 0) {
            return;
        }
        context.log().info("etcdutl " + checker.version() + " found v2 content (" + StepContext.lastLines(first)
                + "); starting etcd " + checker.version() + " once with --snapshot-count=1 so a fresh snapshot follows old v2 WAL entries");
        context.runUntilWrite(checker, context.dataDir().path(), List.of("--snapshot-count=1"));
        context.runTool(checker, "etcdutl", check, "etcd " + release.version() + " refuses data with v2 content, and the data"
                + " holds v2 keys (not only old WAL entries); they need the etcd2 conversion. The data is still valid "
                + checker.minorLine() + " data");
    }
}
