package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.util.List;
import java.util.Optional;

/**
 * Opens the data with the next minor line's etcd: start it privately, wait for a write, stop it.
 * When that line refuses v2 content (3.6+), the previous line's {@code etcdutl check v2store}
 * vets the data first, so a refusal comes with a clear message instead of a crash of the new etcd.
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
        return v2Checker.map(c -> List.of(new Binary("etcdutl", c), Binary.etcd(release))).orElse(List.of(Binary.etcd(release)));
    }

    @Override
    public void run(StepContext context) throws Exception {
        if (v2Checker.isPresent()) {
            Release checker = v2Checker.get();
            context.runTool(checker, "etcdutl",
                    List.of("check", "v2store", "--data-dir", context.dataDir().path().toString()),
                    "etcd " + release.version() + " refuses data with v2 content (v2 keys in the snapshot or v2 WAL"
                            + " entries); the data dir was left unchanged");
        }
        context.runUntilWrite(release, context.dataDir().path());
    }
}
