package dev.etcdmigrate.step;

import dev.etcdmigrate.datadir.Backups;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.MemberSwap;
import dev.etcdmigrate.log.Log;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * What a step works with: etcd through its one port, the data dir (and its external WAL, etcd's
 * --wal-dir, if any), its backups, the run's log, what an etcd2 conversion needs from the options, and a v2
 * check that may already be running for a later step.
 */
public record StepContext(EtcdOperations etcd, DataDir dataDir, Optional<Path> walDir, Backups backups, Log log, Conversion conversion,
        V2Precheck v2Precheck) {

    public StepContext(EtcdOperations etcd, DataDir dataDir, Optional<Path> walDir, Backups backups, Log log, Conversion conversion) {
        this(etcd, dataDir, walDir, backups, log, conversion, V2Precheck.none());
    }

    /** The same context with a v2 check started for a later step ({@link V2Precheck#startFor}). */
    public StepContext with(V2Precheck precheck) {
        return new StepContext(etcd, dataDir, walDir, backups, log, conversion, precheck);
    }

    /** Where TTL keys without a TTL live, and the lease they get, for an etcd2 -> etcd3 conversion. */
    public record Conversion(String ttlKeysDirectory, Duration defaultTtl) {}

    /** Swaps a staged member dir in, keeping the old one as a backup. */
    public MemberSwap memberSwap() {
        return new MemberSwap(dataDir, backups, log);
    }
}
