package dev.etcdmigrate.etcd;

import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * What {@link EtcdAdapter} reads from a running private etcd's gateway (/version, Maintenance/Status): the
 * cluster and storage versions and the downgrade job, read once or polled until they reach a wanted state
 * within the start timeout.
 */
final class EtcdReadings {

    private static final Duration POLL = Duration.ofMillis(100);

    private final Duration startTimeout;
    private final Log log;

    EtcdReadings(Duration startTimeout, Log log) {
        this.startTimeout = startTimeout;
        this.log = log;
    }

    /**
     * The downgrade job the etcd knows of: from Maintenance/Status where its line reports it, else (a line whose
     * leader checks for a finished job, 3.5) from etcd's refusal of a downgrade VALIDATE; a line without downgrades
     * has none.
     */
    Optional<MinorLine> enabledDowngrade(PrivateEtcd etcd) throws IOException, InterruptedException {
        if (!etcd.release().line().statusReportsDowngrade()) {
            return etcd.release().line().downgradeCheckFlag().isEmpty()
                    ? Optional.empty()
                    : etcd.gateway().unreportedDowngradeJob();
        }
        var info = etcd.gateway().status().path("downgradeInfo");
        return info.path("enabled").asBoolean(false)
                ? Optional.of(
                        EtcdVersion.parse(info.path("targetVersion").asText("").split("-", 2)[0])
                                .line())
                : Optional.empty();
    }

    boolean clusterVersionIs(PrivateEtcd etcd, MinorLine line)
            throws IOException, InterruptedException, MigrateException {
        return onLine(etcd.gateway().version().path("etcdcluster").asText(""), line);
    }

    void awaitClusterVersion(PrivateEtcd etcd, MinorLine line)
            throws IOException, InterruptedException, MigrateException {
        awaitVersion(etcd, "etcdcluster", "report cluster version", "cluster version", line);
    }

    void awaitStorageVersion(PrivateEtcd etcd, MinorLine line)
            throws IOException, InterruptedException, MigrateException {
        awaitVersion(etcd, "storage", "reach storage version", "storage version", line);
    }

    /** Polls /version's {@code field} until it is on {@code line}; {@code what} names it in the event. */
    private void awaitVersion(PrivateEtcd etcd, String field, String goal, String what, MinorLine line)
            throws InterruptedException, MigrateException {
        Polled polled = poll(() -> etcd.gateway().version().path(field).asText(""), v -> onLine(v, line));
        if (!polled.reached()) {
            throw new FailedException("etcd " + etcd.release().version() + " did not " + goal + " " + line + " within "
                    + startTimeout.toSeconds() + " s (last seen: '" + polled.lastSeen() + "')");
        }
        log.emit(new EtcdEvent.EtcdReported(etcd.release().version(), what, polled.lastSeen()));
    }

    void awaitDowngradeFinished(PrivateEtcd etcd) throws IOException, InterruptedException, MigrateException {
        Polled polled = poll(() -> enabledDowngrade(etcd), Optional::isEmpty);
        if (!polled.reached()) {
            throw new FailedException(
                    "etcd " + etcd.release().version() + " still reports a downgrade in progress after "
                            + startTimeout.toSeconds() + " s (" + polled.lastSeen() + ")");
        }
        log.emit(new EtcdEvent.EtcdReported(etcd.release().version(), "downgrade", "finished"));
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

    private interface Reading<T> {
        T read() throws IOException, InterruptedException;
    }

    /** Whether a reading reached the wanted state within the start timeout, and the last one taken. */
    private record Polled(boolean reached, String lastSeen) {}

    private <T> Polled poll(Reading<T> reading, Predicate<T> reached) throws InterruptedException {
        long end = System.nanoTime() + startTimeout.toNanos();
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
