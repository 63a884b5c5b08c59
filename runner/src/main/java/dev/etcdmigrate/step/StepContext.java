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
 * --wal-dir, if any), its backups, the run's log, and what an etcd2 conversion needs from the options.
 */
public record StepContext(
        EtcdOperations etcd, DataDir dataDir, Optional<Path> walDir, Backups backups, Log log, Conversion conversion) {

    /** Where TTL keys without a TTL live, and the lease they get, for an etcd2 -> etcd3 conversion. */
    public record Conversion(String ttlKeysDirectory, Duration defaultTtl) {}

    /** Swaps a staged member dir in, keeping the old one as a backup. */
    public MemberSwap memberSwap() {
        return new MemberSwap(dataDir, backups, log);
    }
}
