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
import java.util.List;
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
        return plan.fresh() && options.joinsRunningCluster();
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
        String proof = "a linearizable read served through its own client URL";
        long commitSeen = -1; // a learner's bar: the leader's commit index when it was first read
        try (ServingMember serving = etcd.serve(line, "its legs from " + line.minorLine() + " (once it caught up)")) {
            String last = "it has not answered yet";
            while (true) {
                serving.requireAlive();
                try {
                    // the member list names this member's client URL once its etcd published it
                    List<ClusterView.Member> members = cluster.members();
                    Optional<ClusterView.Member> self = members.stream()
                            .filter(m -> m.name().equals(options.name()))
                            .findFirst();
                    if (self.isPresent() && self.get().learner()) {
                        // a learner (kubeadm adds members as learners) serves no linearizable read
                        if (commitSeen < 0) commitSeen = leaderCommit(members).orElse(-1L);
                        Optional<String> behind = learnerBehind(self.get(), commitSeen);
                        if (behind.isEmpty()) {
                            proof = "as a learner, its applied index reached the leader's commit index " + commitSeen;
                            break;
                        }
                        last = behind.get();
                    } else {
                        Optional<String> notServed = cluster.linearizableThrough(options.name());
                        if (notServed.isEmpty()) break;
                        last = notServed.get();
                    }
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
                    Duration.ofNanos(System.nanoTime() - start).toMillis(),
                    proof));
            serving.stop(options.stopGrace());
        }
    }

    /**
     * A learner caught up once it applied {@code commitSeen}, the leader's commit index read after it joined (-1: not
     * read yet): everything the cluster had committed then is in its data. Empty when it did; else why not.
     */
    static Optional<String> learnerBehind(ClusterView.Member self, long commitSeen) {
        long applied = self.status().map(ClusterView.Status::raftAppliedIndex).orElse(-1L);
        if (commitSeen >= 0 && applied >= commitSeen) return Optional.empty();
        return Optional.of("a learner at applied index " + (applied < 0 ? "(no answer)" : applied)
                + ", the leader's commit index " + (commitSeen < 0 ? "not read yet" : commitSeen));
    }

    /** The commit index of the member that leads, as it answered. */
    static Optional<Long> leaderCommit(List<ClusterView.Member> members) {
        return members.stream()
                .map(ClusterView.Member::status)
                .flatMap(Optional::stream)
                .filter(ClusterView.Status::leader)
                .map(ClusterView.Status::raftIndex)
                .findFirst();
    }

    /** The cluster's line and why it is that one. */
    record ClusterLine(MinorLine line, String why) {}

    /**
     * The line a member must join at, asked of the other members: the cluster version, or a downgrade job's target
     * when one reports it enabled. Empty when none answers. While a job is enabled etcd takes a new member only at
     * the job's target and only while the cluster version is still one minor above it; once the cluster version
     * reached the target it takes none, and the job never ends, since it ends only once every listed member runs the
     * target and this one cannot start: refused then (exit 3, nothing changed), naming the way out.
     */
    static Optional<ClusterLine> clusterLine(ClusterView cluster, String self)
            throws InterruptedException, MigrateException {
        try {
            Optional<MinorLine> job = Optional.empty();
            for (ClusterView.Member m : cluster.members()) {
                if (m.name().equals(self) || m.status().isEmpty()) continue;
                job = m.status().get().downgradeTarget();
                if (job.isPresent()) break;
            }
            Optional<MinorLine> version = cluster.clusterVersion();
            if (job.isEmpty()) return version.map(v -> new ClusterLine(v, "its cluster version"));
            MinorLine target = job.get();
            MinorLine above = new MinorLine(target.major(), target.minor() + 1);
            if (version.equals(Optional.of(above))) {
                return Optional.of(
                        new ClusterLine(target, "a downgrade job to " + target + ", cluster version " + above));
            }
            throw new RefusedException("member " + self + " joins its cluster with an empty data dir while a"
                    + " downgrade job to " + target + " is enabled and the cluster version is "
                    + version.map(MinorLine::toString).orElse("not decided")
                    + ": etcd takes no new member then (one at " + target + " only while the cluster version is still "
                    + above + "), and the job ends only once every listed member runs " + target
                    + ", which this one cannot. Cancel the job (etcdctl downgrade cancel) or let the other members"
                    + " finish it with this member removed; the runner then joins this member at the cluster's line"
                    + " (nothing was changed)");
        } catch (IOException unanswered) {
            return Optional.empty();
        }
    }
}
