package dev.etcdmigrate.run;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.cluster.ClusterView;
import dev.etcdmigrate.cluster.RolloutPolicy;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.RefusedException;
import dev.etcdmigrate.etcd.EtcdWiring;
import dev.etcdmigrate.etcd.server.ServingMember;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.RolloutEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.plan.Plan;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.time.Duration;
import java.util.Optional;

/**
 * A member added to its cluster again with an empty data dir, as kubeadm replaces a node: etcd's flags say
 * {@code --initial-cluster-state=existing} and the dir holds no etcd data. etcd takes such a member only at the
 * cluster's line (a downgrade job's target while one is enabled, else the cluster version), and refuses one at
 * another line only after the leader's snapshot reached it: the data is then the cluster's line, whatever the
 * target. So when the target's line is not the cluster's, the member first joins at the cluster's line (that
 * line's etcd, the member's own arguments, as between two legs), waits until it caught up, stops it, and the run
 * plans again from the data it received: the legs from the cluster's line to the target follow the cluster's rules
 * as any member's do. version.txt is written only once the data is there to agree with it.
 */
final class ClusterLineJoin {

    private final RunConfig options;
    private final EtcdWiring etcd;
    private final Log log;

    ClusterLineJoin(RunConfig options, EtcdWiring etcd, Log log) {
        this.options = options;
        this.etcd = etcd;
        this.log = log;
    }

    /**
     * Whether the plan is a cluster member's empty data dir that etcd joins to an existing cluster: etcd decides its
     * data from the leader's snapshot, so the runner labels nothing before that etcd ran.
     */
    static boolean joinsExisting(RunConfig options, Plan plan) {
        return plan.fresh()
                && options.topology() instanceof Topology.Member
                && options.etcd()
                        .get("initial-cluster-state")
                        .filter("existing"::equals)
                        .isPresent();
    }

    /**
     * The release to join at first, when the cluster's line is not the target's; empty when it is, or when no other
     * member answers (nothing to join: the target's etcd is exec'd as it is, and its data decides the next start).
     */
    Optional<Release> lineToJoinFirst(Catalog catalog, Release target) throws InterruptedException, MigrateException {
        Topology.Member member = (Topology.Member) options.topology();
        ClusterView cluster = etcd.clusterClient(member, target);
        Optional<ClusterLine> line = clusterLine(cluster, options.name());
        if (line.isEmpty()) {
            log.emit(new Event.Note(
                    Event.Level.INFO,
                    "member " + options.name() + " joins its cluster with an empty data dir and no other member"
                            + " answers with the cluster's line: etcd " + target.version() + " starts as given, and"
                            + " version.txt is left for its data to decide at the next start"));
            return Optional.empty();
        }
        MinorLine at = line.get().line();
        if (at.equals(target.minorLine())) return Optional.empty();
        Optional<Release> release = catalog.line(at);
        if (release.isEmpty()) {
            throw new RefusedException("refused for a member joining its " + member.size() + "-member cluster with an"
                    + " empty data dir: the cluster runs " + at + " ("
                    + line.get().why() + "), which etcd "
                    + target.version() + " cannot join, and no bundled release is on " + at + ": join it with"
                    + " TARGET_VERSION on " + at + " first, then " + target.version() + " (nothing was changed)");
        }
        log.emit(new RolloutEvent.JoiningAtClusterLine(
                options.name(), at.toString(), line.get().why(), release.get().version(), target.version()));
        return release;
    }

    /**
     * Serves the member at {@code line} until it has caught up, then stops it. Caught up means a linearizable read
     * served through its own client URL: etcd serves one only after the leader confirmed its leadership with a quorum
     * and this member applied the leader's commit index of that moment, so the member holds everything the cluster
     * had committed when the read was asked, from one answer of its own (an applied index compared with a commit index
     * read elsewhere earlier could pass on a stale reading). Fails (the pod restarts) when its etcd exits or does not
     * catch up within the start timeout.
     */
    void join(Release line) throws IOException, InterruptedException, MigrateException {
        Topology.Member member = (Topology.Member) options.topology();
        ClusterView cluster = etcd.clusterClient(member, line);
        long start = System.nanoTime();
        Duration budget = options.startTimeout();
        try (ServingMember serving = etcd.serve(line, "its legs from " + line.minorLine() + " (once it caught up)")) {
            String last = "it has not answered yet";
            while (true) {
                serving.requireAlive();
                try {
                    cluster.members(); // the member list names this member's client URL once its etcd published it
                    Optional<String> notServed = cluster.linearizableThrough(options.name());
                    if (notServed.isEmpty()) break;
                    last = notServed.get();
                } catch (IOException unanswered) {
                    last = unanswered.getMessage();
                }
                if (Duration.ofNanos(System.nanoTime() - start).compareTo(budget) > 0) {
                    throw new FailedException("member " + options.name() + " joined at etcd " + line.version()
                            + " and did not serve a linearizable read through its own client URL within "
                            + budget.toSeconds() + " s (--start-timeout): " + last);
                }
                Thread.sleep(RolloutPolicy.DEFAULT.poll()); // the rules' own poll interval: no deadline to meet
            }
            log.emit(new RolloutEvent.JoinedAtClusterLine(
                    options.name(),
                    line.version(),
                    Duration.ofNanos(System.nanoTime() - start).toMillis()));
            serving.stop(options.stopGrace());
        }
    }

    /** The cluster's line and why it is that one. */
    record ClusterLine(MinorLine line, String why) {}

    /**
     * The line a member must join at, asked of the other members: a downgrade job's target when one reports it
     * enabled (etcd then takes only a member at that line), else the cluster version. Empty when none answers.
     */
    static Optional<ClusterLine> clusterLine(ClusterView cluster, String self)
            throws InterruptedException, MigrateException {
        try {
            for (ClusterView.Member m : cluster.members()) {
                if (m.name().equals(self) || m.status().isEmpty()) continue;
                Optional<MinorLine> job = m.status().get().downgradeTarget();
                if (job.isPresent()) return Optional.of(new ClusterLine(job.get(), "a downgrade job to " + job.get()));
            }
            return cluster.clusterVersion().map(v -> new ClusterLine(v, "its cluster version"));
        } catch (IOException unanswered) {
            return Optional.empty();
        }
    }
}
