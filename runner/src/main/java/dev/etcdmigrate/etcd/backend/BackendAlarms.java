package dev.etcdmigrate.etcd.backend;

import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.log.Log;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Alarms of a private etcd. A NOSPACE alarm is persisted in the data and makes every later start refuse
 * writes, so one found on arrival is reported and disarmed only when it is this member's own and the
 * private etcd's quota ({@link BackendQuota}) leaves the db room: the alarm's cause is then gone, and etcd
 * raises it again by itself if the db reaches the quota. Any other alarm (CORRUPT, another member's
 * NOSPACE) is reported and left alone; the step fails.
 */
public final class BackendAlarms {

    /** How long to wait before asking a cluster without an answer again. */
    private static final Duration RETRY = Duration.ofMillis(200);

    private BackendAlarms() {}

    /** After a write was refused for NOSPACE: disarm this member's alarm if that is safe, else fail naming why. */
    public static void disarmOnArrival(
            GatewayClient gateway, String version, Path dataDir, List<String> extraServerArgs, Log log)
            throws IOException, InterruptedException, FailedException {
        List<GatewayClient.Alarm> alarms = gateway.alarms();
        String self = memberId(gateway);
        long db = BackendQuota.dbSize(dataDir);
        long quota = BackendQuota.quota(dataDir, extraServerArgs);
        if (alarms.isEmpty()) {
            throw new FailedException("etcd " + version + " refused a write for lack of space"
                    + " but lists no alarm (db " + mib(db) + ", quota " + mib(quota) + ")");
        }
        for (GatewayClient.Alarm alarm : alarms) {
            if (!alarm.type().equals("NOSPACE") || !alarm.memberId().equals(self) || BackendQuota.needed(db) > quota) {
                throw new FailedException("the data carries a " + alarm.type() + " alarm of member " + alarm.memberId()
                        + (alarm.memberId().equals(self) ? " (this member)" : " (not this member, " + self + ")")
                        + " that the runner does not disarm (db " + mib(db) + ", private quota " + mib(quota)
                        + "); check the"
                        + " data, then `etcdctl alarm disarm` it yourself; nothing was changed");
            }
        }
        for (GatewayClient.Alarm alarm : alarms) {
            gateway.disarm(alarm);
        }
        log.emit(new EtcdEvent.AlarmDisarmed("NOSPACE", self, db, quota, BackendQuota.needed(db)));
    }

    /**
     * Fails if an alarm is active now that was not there when the step's etcd took its first write. etcd answers the
     * alarm request only through raft: a cluster member's private etcd has no answer while its peers restart (every
     * member edited at once, each leaving its private etcd for its real one), so a request that etcd does not answer
     * is asked again until {@code within} has passed, as the write before it was; then the last failure stands. A
     * refused connection (the etcd is gone) fails at once.
     */
    public static void checkNoneRaised(GatewayClient gateway, String version, Duration within)
            throws IOException, InterruptedException, FailedException {
        long end = System.nanoTime() + within.toNanos();
        List<GatewayClient.Alarm> alarms;
        while (true) {
            try {
                alarms = gateway.alarms();
                break;
            } catch (IOException noAnswer) {
                // nothing listening: the etcd is gone, and no wait brings an answer
                if (noAnswer instanceof ConnectException || System.nanoTime() + RETRY.toNanos() >= end) throw noAnswer;
                Thread.sleep(RETRY.toMillis()); // poll interval of a deadline-bound wait, not a synchronisation sleep
            }
        }
        if (!alarms.isEmpty()) {
            throw new FailedException("etcd " + version + " raised alarm(s) during the step: "
                    + alarms.stream()
                            .map(a -> a.type() + " of member " + a.memberId())
                            .toList());
        }
    }

    private static String memberId(GatewayClient gateway) throws IOException, InterruptedException, FailedException {
        return gateway.status().path("header").path("member_id").asText("");
    }

    static String mib(long bytes) {
        return bytes / (1 << 20) + " MiB";
    }
}
