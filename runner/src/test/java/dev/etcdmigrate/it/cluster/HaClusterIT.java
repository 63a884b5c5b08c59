package dev.etcdmigrate.it.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.it.cluster.ClusterLab.Ack;
import dev.etcdmigrate.it.cluster.ClusterLab.Member;
import dev.etcdmigrate.it.support.ItConv2Events;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Three members on three "hosts" (network namespaces with their own addresses, see {@link NetworkLab}),
 * peer TLS and client TLS with client-cert auth, certificates whose SANs are the member addresses. Each
 * member's runner runs in its namespace and execs etcd, as a real member would. The cluster goes
 * 3.5 -> 3.6 -> 3.7 (one rolling upgrade per minor) and back 3.7 -> 3.6 -> 3.5 (rolling downgrades
 * through etcd's downgrade API) while a writer on a fourth host writes through the client URLs. Then
 * every acknowledged write is on every member at the revision it was acknowledged with, the members
 * agree on every key and revision, and the cluster version is right. Run with -Pha (needs root).
 */
class HaClusterIT {

    private static final int MEMBERS = 3;
    private static final Duration DEADLINE = Duration.ofMinutes(3);

    private ClusterLab lab;
    private final List<String> report = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        if (lab != null) lab.close(); // clients, runners, then whatever is left in the namespaces
        report.forEach(System.out::println);
    }

    @Test
    void rollingUpgradesAndDowngradesOnSeparateHostsKeepEveryAcknowledgedWrite(@TempDir Path dir) throws Exception {
        Release v35 = ClusterLab.line("3.5");
        Release v36 = ClusterLab.line("3.6");
        Release v37 = ClusterLab.line("3.7");
        lab = ClusterLab.create(dir, MEMBERS, ClusterLab.Layout.SEPARATE_HOSTS, "ha-it");
        List<Member> members = lab.members();

        RunnerProcess[] serving = new RunnerProcess[MEMBERS];
        for (Member m : members) serving[m.host()] = lab.start(m, v35);
        for (RunnerProcess r : serving) r.awaitEvent("exec", DEADLINE);
        ClusterLab.Writer seed = lab.writer("/registry/seed/", 200, Duration.ofSeconds(120));
        seed.awaitDone();
        assertEquals(200, seed.acks().size(), "seed writes acknowledged");
        List<Ack> acked = new ArrayList<>(seed.acks());
        java.util.Set<String> retried = new java.util.HashSet<>(seed.failedKeys());

        int rollout = 0;
        for (Release target : List.of(v36, v37, v36, v35)) {
            rollout++;
            boolean down = rollout > 2;
            ClusterLab.Writer writer =
                    lab.writer("/registry/rollout-" + rollout + "/", 200_000, Duration.ofMinutes(10));
            for (Member m : members) {
                serving[m.host()].process().toHandle().destroy(); // SIGTERM to the exec'd etcd: the member goes down
                int code = serving[m.host()].awaitExit(Duration.ofSeconds(30));
                long downAt = System.currentTimeMillis(); // a write acknowledged after this went through the new etcd
                assertTrue(code == 0 || code == 143, m.name() + " stopped with " + code);
                serving[m.host()] = lab.start(m, target);
                ItConv2Events.awaitStepFinished(serving[m.host()], 1, 1, DEADLINE);
                serving[m.host()].awaitEvent("exec", DEADLINE);
                Ack back = writer.awaitAckFrom(m.host(), downAt, DEADLINE);
                long lastBefore = writer.acks().stream()
                        .filter(a -> a.endpoint() == m.host() && a.atMillis() <= downAt)
                        .mapToLong(Ack::atMillis)
                        .max()
                        .orElse(downAt);
                long byOthers = writer.acks().stream()
                        .filter(a ->
                                a.endpoint() != m.host() && a.atMillis() > downAt && a.atMillis() < back.atMillis())
                        .count();
                // recorded (whether the cluster ever lost quorum), not asserted: one CI run in
                // four saw a 3.7 -> 3.6 rollout where the other two members acknowledged nothing for 4.2 s
                report.add(
                        String.format(
                                "rollout %d (%s to %s) %s: out of service %d ms (its last acknowledged write to its first"
                                        + " after the restart); %d writes acknowledged by the other members meanwhile%s",
                                rollout,
                                down ? "down" : "up",
                                target.version(),
                                m.name(),
                                back.atMillis() - lastBefore,
                                byOthers,
                                byOthers > 0
                                        ? ""
                                        : " - NO WRITE acknowledged by the others while it was out (quorum lost or no leader)"));
                assertEquals(
                        target.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")), m.name());
            }
            writer.stop();
            acked.addAll(writer.acks());
            retried.addAll(writer.failedKeys());
            long maxGap = writer.maxGapMillis();
            report.add(String.format(
                    "rollout %d to %s: writer acknowledged %d, failed %d, longest gap between acks %d ms",
                    rollout, target.version(), writer.acks().size(), writer.failed(), maxGap));
            report.add("cluster version "
                    + lab.awaitClusterVersion(target.minorLine().toString(), DEADLINE));
            if (down) lab.awaitNoDowngradeJob(DEADLINE);
        }

        lab.assertEveryAckOnEveryMember(acked, retried, key -> false);
        report.add("every member holds the " + acked.size() + " acknowledged writes at their revisions");
    }
}
