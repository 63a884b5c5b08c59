package dev.etcdmigrate.run;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.cli.MigrateOptions;
import dev.etcdmigrate.cluster.ClusterView;
import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.cluster.ClusterView.Record;
import dev.etcdmigrate.cluster.RolloutCoordinator;
import dev.etcdmigrate.datadir.AtomicFile;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.RefusedException;
import dev.etcdmigrate.etcd.EtcdWiring;
import dev.etcdmigrate.etcd.server.ServingMember;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.RolloutEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.BackendAuth;
import dev.etcdmigrate.ondisk.DamagedFileException;
import dev.etcdmigrate.plan.Plan;
import dev.etcdmigrate.plan.RolloutChain;
import dev.etcdmigrate.plan.RolloutChain.Leg;
import dev.etcdmigrate.step.StepContext;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A cluster member's plan across several minors, one leg at a time (docs/ha.md, "Several minors in one
 * rollout"). The first leg runs at once: the member is down already (its pod was restarted for the new
 * target). After each leg but the last the member serves as the real member at the leg's line, supervised,
 * until the cluster's rules ({@link RolloutCoordinator}) let it restart for the next leg, holding the
 * cluster's restart record. A leg that began under the record releases it once its etcd took a quorum write
 * at the new line (the step's probe), before the member serves again.
 */
final class ClusterRollout {

    /** How far another member's raft index may be behind the leader's for this member to restart. */
    static final long RAFT_INDEX_BOUND = 1000;

    private static final Duration POLL = Duration.ofMillis(500);
    private static final Duration RELEASE_PATIENCE = Duration.ofSeconds(30);
    /** Reads of the record within {@link #RELEASE_PATIENCE} where it must be found: a leader change passes meanwhile. */
    private static final int PATIENT_READS = (int) (RELEASE_PATIENCE.toMillis() / POLL.toMillis());
    /** .etcd-migrate/restart-record while this runner creates the record: it may hold it from then on. */
    private static final String TAKING = "taking";

    private final MigrateOptions options;
    private final DataDir dataDir;
    private final EtcdWiring etcd;
    private final StepRunner runner;
    private final Log log;
    /** The coordinator's note of the record in this data dir: see {@link RolloutCoordinator.RecordNote}. */
    private final RolloutCoordinator.RecordNote recordNote = new RolloutCoordinator.RecordNote() {
        @Override
        public void mayHold() throws IOException {
            AtomicFile.write(dataDir.own().restartRecord(), TAKING + "\n");
        }

        @Override
        public void holds(Record record) throws IOException {
            AtomicFile.write(dataDir.own().restartRecord(), record.modRevision() + "\n");
        }

        @Override
        public void holdsNone() throws IOException {
            Files.deleteIfExists(dataDir.own().restartRecord());
        }
    };

    ClusterRollout(MigrateOptions options, DataDir dataDir, EtcdWiring etcd, StepRunner runner, Log log) {
        this.options = options;
        this.dataDir = dataDir;
        this.etcd = etcd;
        this.runner = runner;
        this.log = log;
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
     * answers; and the other members (where they answer) must be on the lines the first leg joins.
     */
    void check(RolloutChain chain) throws IOException, InterruptedException, MigrateException {
        refuseRecordedAuth(chain);
        Leg first = chain.legs().getFirst();
        ClusterView cluster = etcd.clusterClient(arrival(first));
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
        List<String> off = new ArrayList<>();
        for (Member m : members) {
            if (m.name().equals(options.name()) || m.status().isEmpty()) continue;
            MinorLine line = m.status().get().line();
            if (!line.equals(first.from()) && !line.equals(first.to()))
                off.add(m.name() + " runs " + m.status().get().server());
        }
        if (!off.isEmpty()) {
            throw new RefusedException("refused for a member of a " + options.members() + "-member cluster: "
                    + chain.describe() + " starts " + first + ", which a member can join only while every other member"
                    + " runs " + first.from() + " or " + first.to() + ", and " + String.join(", ", off)
                    + ": bring those members to " + first.from() + " first (nothing was changed)");
        }
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
            throw new RefusedException("refused for a member of a " + options.members() + "-member cluster: "
                    + chain.describe() + " needs to know whether etcd's auth is enabled, and this member's db does"
                    + " not say (" + e.damage().relativeTo(dataDir.path()).describe() + ") (nothing was changed)");
        }
        if (enabled) {
            throw new RefusedException("refused for a member of a " + options.members() + "-member cluster: this"
                    + " member's data records etcd's auth as enabled (member/snap/db, bucket auth), and "
                    + chain.describe() + " coordinates through the cluster's keyspace, for which the runner has no"
                    + " credentials. Disable auth for the rollout (etcdctl auth disable; enable it again once every"
                    + " member runs the target), or roll out one minor at a time (nothing was changed)");
        }
    }

    void run(Plan plan, RolloutChain chain, StepContext context) throws Exception {
        log.emit(new RolloutEvent.RolloutChainPlanned(
                options.name(), chain.describe(), chain.legs().size()));
        int index = 0;
        Optional<Record> held = Optional.empty();
        // the coordinator's note (.etcd-migrate/restart-record): a revision: an earlier run held the record, which must
        // be found first (the restart it began is this run's first leg, which then releases it); TAKING: it was
        // creating the record and may hold it; none: it held none. With TAKING and no member answering, the first leg
        // runs at once as always (the member is down either way), and the record is read once the leg wrote through a
        // quorum
        Path note = dataDir.own().restartRecord();
        String noted = Files.exists(note) ? Files.readString(note).strip() : "";
        boolean unknown = false;
        try {
            held = coordinator(arrival(chain.legs().getFirst()))
                    .ownRecord(noted.isEmpty() || noted.equals(TAKING) ? 1 : PATIENT_READS);
        } catch (IOException unreachable) {
            if (noted.equals(TAKING)) unknown = true;
            else if (!noted.isEmpty()) throw unreachable; // a revision: found first; no note: on at once
        }
        if (held.isEmpty() && !unknown) Files.deleteIfExists(note); // taken over meanwhile, or never created
        for (int i = 0; i < chain.legs().size(); i++) {
            Leg leg = chain.legs().get(i);
            runner.run(plan, context, index, index + leg.steps().size());
            index += leg.steps().size();
            Release reached = arrival(leg);
            if (unknown) {
                held = ownRecordOrWarn(reached, PATIENT_READS); // the leg took a quorum write: members answer
                if (held.isEmpty()) Files.deleteIfExists(note);
                unknown = false;
            }
            if (held.isPresent()) {
                release(coordinator(reached), held.get());
                held = Optional.empty();
            }
            if (i == chain.legs().size() - 1) return; // the caller records the target and execs it
            Leg next = chain.legs().get(i + 1);
            try (ServingMember serving = etcd.serve(reached, next.toString())) {
                RolloutCoordinator coordinator = coordinator(reached, serving);
                held = Optional.of(coordinator.beforeRestart(next.from(), next.to())); // noted by the coordinator
                serving.requireAlive();
                serving.stop(options.stopGrace());
            }
        }
    }

    /**
     * Nothing left to run, but a run killed after its last leg reached the target, before it released the record,
     * noted it: released now (read from the other members, this member's etcd not started yet).
     */
    void releaseLeftover(Release line) throws Exception {
        String noted = Files.readString(dataDir.own().restartRecord()).strip();
        Optional<Record> held = ownRecordOrWarn(line, noted.equals(TAKING) ? 1 : PATIENT_READS);
        if (held.isPresent()) release(coordinator(line), held.get());
        else Files.deleteIfExists(dataDir.own().restartRecord());
    }

    /**
     * This member's record, or empty with a warning when no member answers: then a peer's runner deletes it once
     * this member serves the line, as after a failed release.
     */
    private Optional<Record> ownRecordOrWarn(Release line, int reads) throws Exception {
        try {
            return coordinator(line).ownRecord(reads);
        } catch (IOException unreachable) {
            log.emit(new Event.Note(
                    Event.Level.WARN,
                    "could not read the restart record (" + unreachable.getMessage() + "); if an earlier run of this"
                            + " member's runner took it, another member's runner deletes it once this member serves "
                            + line.minorLine()));
            return Optional.empty();
        }
    }

    /** Releases the record; when no member answers, a peer's runner deletes it once this member serves the line. */
    private void release(RolloutCoordinator coordinator, Record record) throws Exception {
        long end = System.nanoTime() + RELEASE_PATIENCE.toNanos();
        while (true) {
            try {
                coordinator.release(record);
                break;
            } catch (IOException unreachable) {
                if (System.nanoTime() > end) {
                    log.emit(new Event.Note(
                            Event.Level.WARN,
                            "could not release the restart record (" + unreachable.getMessage()
                                    + "); another member's runner deletes it once this member serves "
                                    + record.value().to()));
                    break;
                }
                Thread.sleep(POLL); // poll interval of a deadline-bound retry
            }
        }
        Files.deleteIfExists(dataDir.own().restartRecord());
    }

    private RolloutCoordinator coordinator(Release line) throws MigrateException {
        return coordinator(line, null);
    }

    private RolloutCoordinator coordinator(Release line, ServingMember serving) throws MigrateException {
        return new RolloutCoordinator(
                etcd.clusterClient(line),
                options.name(),
                options.members(),
                RAFT_INDEX_BOUND,
                log,
                () -> {
                    if (serving != null) serving.requireAlive();
                    Thread.sleep(POLL); // the poll interval of the rules' wait, which has no deadline by design
                },
                recordNote,
                Clock.systemUTC());
    }
}
