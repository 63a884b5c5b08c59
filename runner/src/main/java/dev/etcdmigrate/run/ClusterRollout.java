package dev.etcdmigrate.run;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.cluster.ClusterView;
import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.cluster.FileNoteStore;
import dev.etcdmigrate.cluster.RolloutCoordinator;
import dev.etcdmigrate.cluster.RolloutPolicy;
import dev.etcdmigrate.cluster.RolloutRules;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.RefusedException;
import dev.etcdmigrate.etcd.EtcdWiring;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.server.ServingMember;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.RolloutEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.BackendAuth;
import dev.etcdmigrate.ondisk.BboltFile;
import dev.etcdmigrate.ondisk.DamagedFileException;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.plan.Plan;
import dev.etcdmigrate.plan.RolloutChain;
import dev.etcdmigrate.plan.RolloutChain.Leg;
import dev.etcdmigrate.step.StepContext;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A cluster member's plan across several minors, one leg at a time (docs/ha.md, "Several minors in one
 * rollout"). The first leg runs at once: the member is down already (its pod was restarted for the new
 * target). After each leg but the last the member serves as the real member at the leg's line, supervised,
 * until the cluster's rules ({@link RolloutCoordinator}, {@code cluster.RolloutRules}) let it restart for the next leg, holding the
 * cluster's restart record. A leg that began under the record releases it once its etcd took a quorum write
 * at the new line (the step's probe), before the member serves again.
 */
final class ClusterRollout {

    private final RunConfig options;
    private final DataDir dataDir;
    private final EtcdWiring etcd;
    private final StepRunner runner;
    private final Log log;
    private ClusterView cluster;
    private RolloutCoordinator driver;

    ClusterRollout(RunConfig options, DataDir dataDir, EtcdWiring etcd, StepRunner runner, Log log) {
        this.options = options;
        this.dataDir = dataDir;
        this.etcd = etcd;
        this.runner = runner;
        this.log = log;
    }

    /** Only a cluster member rolls out: Migration asks this class nothing for a lone etcd. */
    private Topology.Member member() {
        if (options.topology() instanceof Topology.Member member) return member;
        throw new IllegalStateException("a rollout across the cluster for a one-member cluster");
    }

    /** The release each leg but the last ends at: the member serves it between legs. */
    static List<Release> servingReleases(RolloutChain chain) {
        List<Release> serving = new ArrayList<>();
        for (int i = 0; i < chain.legs().size() - 1; i++) {
            serving.add(arrival(chain.legs().get(i)));
        }
        return serving;
    }

    private static Release arrival(Leg leg) {
        return leg.arrival();
    }

    /**
     * Before anything changes: the cluster must not have etcd's auth enabled (the record is written without
     * credentials), judged first from this member's own db, which needs no other member, then from a member that
     * answers; and the other members (where they answer) must be on the lines the first leg joins, or one minor
     * behind them in the chain's direction: that is the cluster a member meets when it went first and was restarted
     * between two legs (its pod killed, its node rebooted) before the others were edited. Its runner serves its
     * data's line and waits for them, as it did before the restart; a refusal would keep it out of service for good.
     */
    void check(RolloutChain chain) throws IOException, InterruptedException, MigrateException {
        refuseRecordedAuth(chain);
        Leg first = chain.legs().getFirst();
        ClusterView cluster = cluster(arrival(first));
        List<Member> members;
        try {
            members = cluster.members();
            cluster.record(); // etcd's auth refuses this read without credentials: a refusal now, not half-way
        } catch (IOException unreachable) {
            // every member down (the manifests were edited at once): the rules below wait for them anyway
            log.emit(new Event.Note(
                    Event.Level.INFO,
                    "no member of the cluster answers yet (" + unreachable.getMessage()
                            + "); the members' lines are judged when they serve"));
            return;
        }
        Optional<MinorLine> behind = behind(first);
        List<String> off = new ArrayList<>();
        for (Member m : members) {
            if (m.name().equals(options.name()) || m.status().isEmpty()) continue;
            MinorLine line = m.status().get().line();
            if (!line.equals(first.from()) && !line.equals(first.to()) && !behind.equals(Optional.of(line)))
                off.add(m.name() + " runs " + m.status().get().server());
        }
        if (!off.isEmpty()) {
            throw new RefusedException("refused for a member of a " + member().size() + "-member cluster: "
                    + chain.describe() + " starts " + first + ", which a member can join only while every other member"
                    + " runs " + first.from() + " or " + first.to()
                    + behind.map(b -> " (or " + b + ", where it waits for them, serving)")
                            .orElse("")
                    + ", and " + String.join(", ", off)
                    + ": bring those members to " + first.from() + " first (nothing was changed)");
        }
    }

    /** The line one minor before the leg's start in its direction (3.4 for 3.5 -> 3.6, 3.7 for 3.6 -> 3.5). */
    static Optional<MinorLine> behind(Leg leg) {
        int minor = leg.from().minor() + (leg.upgrade() ? -1 : 1);
        return minor < 0
                ? Optional.empty()
                : Optional.of(new MinorLine(leg.from().major(), minor));
    }

    /**
     * etcd replicates its auth flag into every member's db: when the kubelets stopped every member at once no
     * member answers, and without this the first leg would run and the first gate be refused, half-way.
     */
    private void refuseRecordedAuth(RolloutChain chain) throws IOException, RefusedException {
        Path db = dataDir.member().resolve("snap").resolve("db");
        boolean enabled;
        try {
            enabled = BackendAuth.enabled(db);
        } catch (DamagedFileException e) {
            throw new RefusedException("refused for a member of a " + member().size() + "-member cluster: "
                    + chain.describe() + " needs to know whether etcd's auth is enabled, and this member's db does"
                    + " not say (" + e.damage().relativeTo(dataDir.path()).describe() + ") (nothing was changed)");
        }
        if (enabled) {
            throw new RefusedException("refused for a member of a " + member().size() + "-member cluster: this"
                    + " member's data records etcd's auth as enabled (member/snap/db, bucket auth), and "
                    + chain.describe() + " coordinates through the cluster's keyspace, for which the runner has no"
                    + " credentials. Disable auth for the rollout (etcdctl auth disable; enable it again once every"
                    + " member runs the target), or roll out one minor at a time (nothing was changed)");
        }
    }

    void run(Plan plan, RolloutChain chain, StepContext context, Optional<Release> current) throws Exception {
        if (chain.multiLeg()) {
            log.emit(new RolloutEvent.RolloutChainPlanned(
                    options.name(), chain.describe(), chain.legs().size()));
        }
        List<RolloutRules.Leg> legs = new ArrayList<>();
        List<Integer> firstStep = new ArrayList<>();
        int index = 0;
        for (Leg leg : chain.legs()) {
            legs.add(new RolloutRules.Leg(leg.from(), leg.to()));
            firstStep.add(index);
            index += leg.steps().size();
        }
        driver(arrival(chain.legs().getFirst()))
                .run(
                        legs,
                        i -> runner.run(
                                plan,
                                context,
                                firstStep.get(i),
                                firstStep.get(i) + chain.legs().get(i).steps().size()),
                        reached -> {
                            if (reached >= 0) {
                                // after the last leg: rule 4's settling (a release that reached no member)
                                String next = reached + 1 < chain.legs().size()
                                        ? chain.legs().get(reached + 1).toString()
                                        : "the restart record's release";
                                return Optional.of(
                                        serving(etcd.serve(arrival(chain.legs().get(reached)), next)));
                            }
                            // before the first leg: the data's own line, when its etcd is here to run
                            if (current.isEmpty()) return Optional.empty();
                            try {
                                return Optional.of(serving(etcd.serve(
                                        current.get(), chain.legs().getFirst().toString())));
                            } catch (BinDir.MissingBinaryException notHere) {
                                return Optional.empty();
                            }
                        },
                        // what this member's db recorded when its etcd last ran (3.5+ keep the cluster version there,
                        // 3.6+
                        // the downgrade job)
                        DataDetection.recordedFloor(dataDir.path()),
                        recordsDowngradeJob());
    }

    /** Whether the db records a downgrade job in progress (bucket cluster, key downgrade: {"enabled":true,...}). */
    private boolean recordsDowngradeJob() {
        Path db = dataDir.member().resolve("snap").resolve("db");
        if (!java.nio.file.Files.isRegularFile(db)) return false;
        try (BboltFile file = BboltFile.open(db)) {
            return file.value("cluster", "downgrade")
                    .map(v -> new String(v, java.nio.charset.StandardCharsets.UTF_8).replace(" ", ""))
                    .filter(v -> v.contains("\"enabled\":true"))
                    .isPresent();
        } catch (IOException unreadable) {
            return false; // the damage checks and the steps report it
        }
    }

    /**
     * Nothing left to run, but a run killed after its last leg reached the target, before it released the record,
     * noted it: released now (one try through the other members, this member's etcd not started yet; when none
     * answers, the member serves the target first, so its vote counts, and settles the record as after a last leg).
     */
    void releaseLeftover(Release line) throws Exception {
        driver(line)
                .releaseLeftover(
                        line.minorLine(),
                        reached -> Optional.of(serving(etcd.serve(line, "the restart record's release"))));
    }

    private RolloutCoordinator.Serving serving(ServingMember member) {
        return new RolloutCoordinator.Serving() {
            @Override
            public void requireAlive() throws MigrateException {
                member.requireAlive();
            }

            @Override
            public void stop() throws MigrateException, InterruptedException {
                member.stop(options.stopGrace());
            }

            @Override
            public void close() {
                member.close();
            }
        };
    }

    /** The run's one driver: its cluster port keeps the client URLs the member list named. */
    private RolloutCoordinator driver(Release line) throws MigrateException {
        if (driver == null) {
            driver = new RolloutCoordinator(
                    cluster(line),
                    new FileNoteStore(dataDir.own().restartRecord()),
                    options.name(),
                    // where this member serves, named in the record: the take-over reads it there
                    member().clientTls().clientUrls(),
                    member().size(),
                    RolloutPolicy.DEFAULT,
                    new RolloutCoordinator.Ticker() {
                        @Override
                        public Instant now() {
                            return Clock.systemUTC().instant();
                        }

                        @Override
                        public void pause() throws InterruptedException {
                            // the poll interval of the rules' wait, which has no deadline by design
                            Thread.sleep(RolloutPolicy.DEFAULT.poll());
                        }
                    },
                    log);
        }
        return driver;
    }

    /** One client per run, so the members' client URLs it learned from the member list are kept (no guesses). */
    private ClusterView cluster(Release line) throws MigrateException {
        if (cluster == null) cluster = etcd.clusterClient(member(), line);
        return cluster;
    }
}
