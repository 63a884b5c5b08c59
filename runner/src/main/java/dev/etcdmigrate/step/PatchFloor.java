package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.util.List;

/**
 * Runs the bundled patch of the data's own minor line once, because the next line requires that
 * patch (or newer) to have run first (e.g. 3.5.32+ before 3.6).
 */
public record PatchFloor(EtcdVersion from, Release release, EtcdVersion floor, boolean snapshotForNext)
        implements Step {

    public PatchFloor(EtcdVersion from, Release release, EtcdVersion floor) {
        this(from, release, floor, false);
    }

    /** The same step, its etcd also leaving a snapshot for the next line. */
    public PatchFloor withSnapshotForNext() {
        return new PatchFloor(from, release, floor, true);
    }

    @Override
    public String describe() {
        return "run etcd " + release.version() + " once on the " + from + " data: the next minor needs " + floor
                + " or newer to have run first"
                + (snapshotForNext ? ", with --snapshot-count=1 for the next line" : "");
    }

    @Override
    public StepFacts facts() {
        return StepFacts.inPlace(
                new DataVersion(release.etcdVersion(), StorageApi.ETCD3), List.of(Binary.etcd(release)), 1);
    }

    @Override
    public void run(StepContext context) throws IOException, InterruptedException, MigrateException {
        context.etcd()
                .runUntilWrite(
                        release,
                        context.dataDir().path(),
                        snapshotForNext ? EtcdOperations.Tuning.snapshotAtOnce() : EtcdOperations.Tuning.NONE);
    }
}
