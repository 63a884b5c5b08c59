package dev.etcdmigrate.cluster.sim;

import dev.etcdmigrate.cluster.ClusterView;
import dev.etcdmigrate.cluster.Note;
import dev.etcdmigrate.cluster.NoteStore;
import dev.etcdmigrate.cluster.RecordValue;
import dev.etcdmigrate.cluster.RolloutCoordinator;
import dev.etcdmigrate.cluster.RolloutPolicy;
import dev.etcdmigrate.cluster.RolloutRules;
import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.event.RolloutEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Semaphore;

/**
 * One simulated rollout: a cluster of members on lines, and one runner per edited member driving the REAL protocol
 * code ({@link RolloutCoordinator}, {@link RolloutRules}) through simulated ports. Each port call is a scheduling
 * point: the runner's code runs on its own virtual thread, but only while the scheduler hands it the baton, so one
 * thing happens at a time and a schedule (the list of choices) replays exactly. Nothing sleeps: the clock is the
 * {@link RolloutCoordinator.Ticker} port, advanced by the simulation.
 *
 * <p>The cluster follows etcd's rules as far as the protocol sees them: a member's client URL answers only while
 * its etcd serves (not while a step's private etcd runs with its client port on loopback); every read and
 * transaction needs a quorum of members whose etcd runs; the leader raises the cluster version once it reaches
 * every member and they all run a newer line; a downgrade job is enabled once (a second enable is refused while one
 * is in progress), lowers the cluster version at once, and ends when every member runs its line; the record key has
 * a mod revision and compare transactions. Faults: leader changes (the next reads fail with 503), answers lost after
 * a transaction committed, runners crashing at any port call (their pod dies: the member goes down) and started
 * again from version.txt and the note, etcd's network faults ({@link Config#withPartitions}) and a node replaced
 * mid-rollout ({@link Config#withReplacements}).
 */
final class Sim {

    /** How the operator edits the manifests. */
    enum Edits {
        ONE_AT_A_TIME,
        ALL_AT_ONCE,
        ONE_LATE
    }

    /** Where the members' client URLs are: own hosts (a guess from the peer's host is right) or one host. */
    enum Layout {
        SEPARATE_HOSTS,
        ONE_HOST
    }

    record Config(
            int members,
            MinorLine from,
            MinorLine to,
            Edits edits,
            Layout layout,
            int crashes,
            int leaderChanges,
            int lostAnswers,
            int maxSteps,
            boolean stepAnswers,
            int partitions,
            boolean localReadsNeedQuorum,
            boolean staleJob,
            int replacements,
            boolean learners,
            boolean reachedUntold,
            boolean deadlineFaults) {
        Config(
                int members,
                MinorLine from,
                MinorLine to,
                Edits edits,
                Layout layout,
                int crashes,
                int leaderChanges,
                int lostAnswers,
                int maxSteps,
                boolean stepAnswers,
                int partitions) {
            this(
                    members,
                    from,
                    to,
                    edits,
                    layout,
                    crashes,
                    leaderChanges,
                    lostAnswers,
                    maxSteps,
                    stepAnswers,
                    partitions,
                    false,
                    false,
                    0,
                    false,
                    false,
                    false);
        }

        Config(
                int members,
                MinorLine from,
                MinorLine to,
                Edits edits,
                Layout layout,
                int crashes,
                int leaderChanges,
                int lostAnswers,
                int maxSteps,
                boolean stepAnswers) {
            this(members, from, to, edits, layout, crashes, leaderChanges, lostAnswers, maxSteps, stepAnswers, 0);
        }

        /** A config where a step's private etcd answers no other runner (separate hosts; one host as modelled before). */
        Config(
                int members,
                MinorLine from,
                MinorLine to,
                Edits edits,
                Layout layout,
                int crashes,
                int leaderChanges,
                int lostAnswers,
                int maxSteps) {
            this(members, from, to, edits, layout, crashes, leaderChanges, lostAnswers, maxSteps, false);
        }

        /**
         * On one host, as real etcd does it: while a member migrates, the member list shows its step's private etcd
         * loopback client URL (etcd publishes the private etcd's --advertise-client-urls once it joined), and the
         * other runners on that host reach it: its Maintenance/Status answers with the step's binary (the leg's
         * {@code to} for an upgrade; for a downgrade the newer etcd first, then the older one).
         */
        Config withStepAnswering() {
            return new Config(
                    members,
                    from,
                    to,
                    edits,
                    layout,
                    crashes,
                    leaderChanges,
                    lostAnswers,
                    maxSteps,
                    true,
                    partitions,
                    localReadsNeedQuorum,
                    staleJob,
                    replacements,
                    learners,
                    reachedUntold,
                    deadlineFaults);
        }

        /**
         * Up to {@code n} network faults of etcd's kind: a member cut from its peers in both directions, in one
         * direction only (it hears the leader but is not heard, or the reverse), or its applied index lagging; each
         * healed by a later action (and before the fair completion).
         */
        Config withPartitions(int n) {
            return new Config(
                    members,
                    from,
                    to,
                    edits,
                    layout,
                    crashes,
                    leaderChanges,
                    lostAnswers,
                    maxSteps,
                    stepAnswers,
                    n,
                    localReadsNeedQuorum,
                    staleJob,
                    replacements,
                    learners,
                    reachedUntold,
                    deadlineFaults);
        }

        /**
         * The member list and /version asked linearizably too (etcd's MemberList with {@code linearizable}): they need
         * a quorum as a read of the record does. The directed scenarios of the record's defects replay there.
         */
        Config withLinearizableLists() {
            return new Config(
                    members,
                    from,
                    to,
                    edits,
                    layout,
                    crashes,
                    leaderChanges,
                    lostAnswers,
                    maxSteps,
                    stepAnswers,
                    partitions,
                    true,
                    staleJob,
                    replacements,
                    learners,
                    reachedUntold,
                    deadlineFaults);
        }

        /**
         * Every walk of the endpoints that fails comes to the runners as if no etcd were there at all (a leader
         * change's 503s, a request an etcd without a quorum let time out): the leg at once of a runner started again
         * while every other member's etcd is down, reached without taking them all down first. The directed
         * regressions of the record's defects meet their paths through it; the client, which tells the two apart
         * ({@code ClusterView.EtcdReached}), meets those paths only when no etcd is there. A world change, not a rule:
         * the real rules run on it and must still hold; the rule that reads an etcd reached as a failed read is the
         * clause {@code RuleSet.reachedIsFailedRead}, replaced by the mutant {@code reachedReadAsNoEtcd}.
         */
        Config withReachedUntold() {
            return new Config(
                    members,
                    from,
                    to,
                    edits,
                    layout,
                    crashes,
                    leaderChanges,
                    lostAnswers,
                    maxSteps,
                    stepAnswers,
                    partitions,
                    localReadsNeedQuorum,
                    staleJob,
                    replacements,
                    learners,
                    true,
                    deadlineFaults);
        }

        /**
         * The rollout starts right after a downgrade to {@code from} finished: every member runs it, and the leader
         * has not yet ended the downgrade job (it does so only at its next check).
         */
        Config withStaleJob() {
            return new Config(
                    members,
                    from,
                    to,
                    edits,
                    layout,
                    crashes,
                    leaderChanges,
                    lostAnswers,
                    maxSteps,
                    stepAnswers,
                    partitions,
                    localReadsNeedQuorum,
                    true,
                    replacements,
                    learners,
                    reachedUntold,
                    deadlineFaults);
        }

        /**
         * Up to {@code n} replaced nodes, as kubeadm replaces one ({@code kubeadm reset}, then {@code kubeadm join}): a
         * member not yet edited is removed from the cluster (etcd's MemberRemove, which etcd's strict reconfiguration
         * check allows only while the members left that run form a quorum of the smaller cluster), its data wiped;
         * later it is added again (MemberAdd: listed with no name and no client URL until its etcd starts), as a
         * learner first when {@code learners} (kubeadm's learner mode: MemberAdd with isLearner, then MemberPromote
         * once it caught up), and its etcd joins with empty data at the cluster version's line.
         */
        Config withReplacements(int n, boolean learners) {
            return new Config(
                    members,
                    from,
                    to,
                    edits,
                    layout,
                    crashes,
                    leaderChanges,
                    lostAnswers,
                    maxSteps,
                    stepAnswers,
                    partitions,
                    localReadsNeedQuorum,
                    staleJob,
                    n,
                    learners,
                    reachedUntold,
                    deadlineFaults);
        }

        /**
         * The deadline-bound loops given up (the exhaustive search's give-up branches): the release's patience and the
         * patient read of a noted record last two polls ({@link #policy()}), which a leader change's 503s outlast, and
         * the config's leader changes are placed only where a runner's next call is a request of such a loop (or the
         * release's one try, which shares its sync point). A fault placement of its own, not a reduction: every
         * placement of one leader change is the plain config's.
         */
        Config withDeadlineFaults() {
            return new Config(
                    members,
                    from,
                    to,
                    edits,
                    layout,
                    crashes,
                    leaderChanges,
                    lostAnswers,
                    maxSteps,
                    stepAnswers,
                    partitions,
                    localReadsNeedQuorum,
                    staleJob,
                    replacements,
                    learners,
                    reachedUntold,
                    true);
        }

        /** The runners' policy: {@link Sim#POLICY}, or with {@link #withDeadlineFaults} a patience of two polls. */
        RolloutPolicy policy() {
            return deadlineFaults
                    ? new RolloutPolicy(
                            POLICY.raftIndexBound(),
                            POLICY.poll(),
                            POLICY.poll().multipliedBy(2))
                    : POLICY;
        }

        /** Whether a member's step's private etcd answers the other runners. */
        boolean stepReachable() {
            return stepAnswers && layout == Layout.ONE_HOST;
        }

        @Override
        public String toString() {
            return members + " members " + from + " -> " + to + ", " + edits + ", " + layout
                    + (stepReachable() ? " (a step's etcd answers)" : "")
                    + (staleJob ? " (the downgrade job to " + from + " not yet ended)" : "") + ", crashes<=" + crashes
                    + ", leader changes<=" + leaderChanges + ", lost answers<=" + lostAnswers
                    + (partitions > 0 ? ", network faults<=" + partitions : "")
                    + (localReadsNeedQuorum ? ", linearizable member lists" : "")
                    + (reachedUntold ? ", a failed walk read as no etcd there" : "")
                    + (deadlineFaults ? ", patience two polls, leader changes at its loops' requests" : "")
                    + (replacements > 0
                            ? ", replaced nodes<=" + replacements + (learners ? " (added as learners)" : "")
                            : "");
        }
    }

    /** A failed invariant. */
    static final class Violation extends RuntimeException {
        Violation(String message) {
            super(message);
        }
    }

    /** Thrown at a port call to kill a runner there (its process ends; finally blocks run, as a JVM's would not). */
    static final class Crash extends Error {
        Crash() {
            super("crash", null, false, false);
        }
    }

    enum Run {
        DOWN,
        PRIVATE,
        SERVING
    }

    final class Node {
        final String name;
        final int index;
        MinorLine data;
        MinorLine versionTxt;
        /** The cluster version its data recorded when its etcd last ran. */
        MinorLine recordedCv;

        boolean recordedJob;
        Run run = Run.SERVING;
        /** The line of the etcd binary its step's private etcd runs (while {@code run == PRIVATE}). */
        MinorLine stepLine;

        Note note = Note.NONE;
        boolean outByChoice;
        boolean edited;
        Runner runner;
        int runs;

        /** Its raft member ID (a member added again gets a new one, as etcd's MemberAdd gives). */
        long id;
        /** The cluster lists it (false once removed, until it is added again). */
        boolean listed = true;
        /** Its etcd has started since it was (last) added: before that it is listed with no name and no client URL. */
        boolean started = true;
        /** A learner: listed and replicated to, no vote, no linearizable request served through it. */
        boolean learner;
        /** Its applied index (frozen while it hears no leader). */
        long applied = 1000;
        /** Its applied index lags the leader's commit index by far (a slow disk, a member catching up). */
        boolean lagging;

        Node(String name, int index, MinorLine line) {
            this.name = name;
            this.index = index;
            this.id = 0x100 + index;
            this.data = line;
            this.versionTxt = line;
            this.recordedCv = line;
        }

        String url() {
            return "http://" + (config.layout == Layout.ONE_HOST ? "127.0.0.1:" + (2379 + 10 * index) : name + ":2379");
        }
    }

    /** One runner process of a member. */
    final class Runner {
        final Node member;
        final int id;
        final Semaphore go = new Semaphore(0);
        String pending = "start";
        final List<String> recent = new ArrayList<>();
        boolean finished;
        boolean crashNow;
        /**
         * Its deadline passed at a retry's pause ({@link #timeouts}): its retries run back to back, the world unchanged,
         * until it leaves the deadline-bound loop (the loop it was in).
         */
        RolloutCoordinator.RecordAt expiring;

        boolean acting;
        /** It began deleting a record (its release, or a take-over): its note is on its way out. */
        boolean releasing;
        /** It wrote its note in this run (a note left by a crashed run is read against the record first). */
        boolean wroteNote;
        /** Its latest linearizable request that no member served (null: the latest was served). */
        String lastFailed;
        /** It read the member list in this run (its start's own reads come before). */
        boolean sawMembers;
        /** Its latest request to the cluster failed (a 503 among the failures, which {@link #lastFailed} leaves out). */
        boolean lastRequestFailed;
        /** {@link #worldEpoch} at its latest read of the member list. */
        int epochAtMembers = -1;

        Throwable failure;
        Thread thread;
        RolloutCoordinator driver;

        Runner(Node member, int id) {
            this.member = member;
            this.id = id;
        }
    }

    final Config config;
    final List<Node> members = new ArrayList<>();
    final List<Runner> runners = new ArrayList<>();
    final List<String> trace = new ArrayList<>();
    private final Semaphore back = new Semaphore(0);
    MinorLine clusterVersion;
    Optional<MinorLine> job = Optional.empty();
    RecordValue recordValue;
    long recordMod;
    long revision = 10;
    int leaderChangeReads;
    boolean loseNextAnswer;
    int crashesLeft;
    int leaderChangesLeft;
    int lostAnswersLeft;
    long clockMillis;
    int steps;
    int enables;
    final Set<MinorLine> enabledJobs = new java.util.HashSet<>();
    String doubleEnable;
    /** The step after which nothing is injected any more and every edit is made. */
    int quietSince = -1;
    /** The raft leader's index (-1: none); re-elected among the members that reach a quorum when it cannot lead. */
    int leader = 0;
    /** {@code cut[i][j]}: messages from member i to member j are dropped (the peer network). */
    boolean[][] cut;
    /** The leader's commit index: Kubernetes' writes move it on every step a leader leads. */
    long commit = 1000;

    long term = 2;
    int partitionsLeft;
    int replacementsLeft;
    /** Member IDs given so far (a member added again gets the next). */
    int ids;
    /** Counts what the world did to the members on its own (a fault, an edit's stop): a check before it is stale. */
    int worldEpoch;

    /** The rules the runners follow: the real ones, or a test's mutant ({@link Mutants}). */
    static volatile dev.etcdmigrate.cluster.RuleSet rules = dev.etcdmigrate.cluster.RuleSet.REAL;

    /** A model mutant: the downgrade step enables its job without reading the one in progress. */
    static volatile boolean enableWithoutCheckingJob;

    /** A model mutant: the runner's client asks only its own URL (no member list, no peers). */
    static volatile boolean releaseThroughOwnUrlOnly;

    static final RolloutPolicy POLICY = new RolloutPolicy(1000, Duration.ofMillis(500), Duration.ofSeconds(30));

    /** Whether this is the exhaustive search's simulation (its states are keyed: {@link #state()}). */
    final boolean keyed;
    /**
     * Whether a runner's deadline may pass at a pause inside a deadline-bound retry (the exhaustive search, and replays
     * of its schedules): the clock being abstracted, the retry's "not yet" is the runner's next call and "passed" is
     * this action, after which its retries run back to back until the loop ends.
     */
    final boolean timeouts;
    /**
     * What the latest steps reached of the give-up branches: a loop whose deadline passed, by how it ended ("release
     * gave up", "read of its record answered before its deadline", ...), and a release's one try that reached no
     * member. The exhaustive search clears it before a step and counts it after.
     */
    final List<String> marks = new ArrayList<>();

    Sim(Config config) {
        this(config, false);
    }

    Sim(Config config, boolean keyed) {
        this(config, keyed, keyed);
    }

    /** {@code timeouts}: the deadline of a retry may pass at its pause (the action "timeout mX"). */
    Sim(Config config, boolean keyed, boolean timeouts) {
        this.config = config;
        this.keyed = keyed;
        this.timeouts = timeouts;
        for (int i = 0; i < config.members; i++) members.add(new Node("m" + i, i, config.from));
        clusterVersion = config.from;
        if (config.staleJob) {
            job = Optional.of(config.from);
            // etcd keeps the job in its db (the cluster bucket), where a restarted runner reads it
            for (Node m : members) m.recordedJob = true;
        }
        cut = new boolean[config.members][config.members];
        partitionsLeft = config.partitions();
        replacementsLeft = config.replacements();
        ids = config.members;
        crashesLeft = config.crashes;
        leaderChangesLeft = config.leaderChanges;
        lostAnswersLeft = config.lostAnswers;
        if (config.edits == Edits.ALL_AT_ONCE) {
            for (Node m : members) edit(m);
        } else if (config.edits == Edits.ONE_LATE) {
            for (Node m : members.subList(0, members.size() - 1)) edit(m);
        } else {
            edit(members.getFirst());
        }
    }

    // ----------------------------------------------------------------------------------------------- scheduling

    /** What may happen next: a runner's pending port call, or an action of the environment. */
    List<String> enabled() {
        List<String> actions = new ArrayList<>();
        for (Runner r : runners) if (!r.finished) actions.add("run " + r.member.name);
        for (Node m : members) {
            if (!m.edited && m.listed && m.started && editAllowed(m)) actions.add("edit " + m.name);
        }
        for (Node m : members) {
            if (m.edited && (m.runner == null || m.runner.finished) && !done(m)) actions.add("restart " + m.name);
        }
        if (crashesLeft > 0) {
            for (Runner r : runners) if (!r.finished && r.member.edited) actions.add("crash " + r.member.name);
        }
        if (timeouts) {
            for (Runner r : runners) if (!r.finished && deadlineBound(r)) actions.add("timeout " + r.member.name);
        }
        if (leaderChangesLeft > 0 && (!config.deadlineFaults() || atLoopRequest())) actions.add("leader-change");
        if (lostAnswersLeft > 0 && !loseNextAnswer) actions.add("lose-answer");
        if (jobFinished()) actions.add("end-job");
        if (partitionsLeft > 0) {
            for (Node m : members) {
                for (String fault : List.of("cut ", "cut-in ", "cut-out ", "lag ")) actions.add(fault + m.name);
            }
        }
        if (faulted()) actions.add("heal");
        if (config.replacements() > 0) replacements(actions);
        return actions;
    }

    /** A replaced node's steps (kubeadm reset, then join): removal a fault of the world, the rest its moves. */
    private void replacements(List<String> actions) {
        for (Node m : members) {
            if (replacementsLeft > 0
                    && m.listed
                    && m.started
                    && !m.edited
                    && !m.learner
                    && m.run == Run.SERVING
                    && leader() >= 0
                    && reconfigurable(m, false)) {
                actions.add("remove " + m.name);
            }
            if (!m.listed && leader() >= 0 && (config.learners() || reconfigurable(m, true))) {
                actions.add("add " + m.name);
            }
            if (m.listed && !m.started) actions.add("join " + m.name);
            if (m.learner && m.started && hearsLeader(m)) actions.add("promote " + m.name);
        }
    }

    /**
     * etcd's strict reconfiguration check ({@code --strict-reconfig-check}, on by default): a voter is removed, or
     * added, only while the members that run and are connected form a quorum of the cluster it makes.
     */
    private boolean reconfigurable(Node m, boolean adding) {
        boolean listed = m.listed;
        boolean started = m.started;
        Run run = m.run;
        m.listed = adding;
        m.started = !adding && started;
        if (!adding) m.run = Run.DOWN;
        try {
            return connectedQuorum();
        } finally {
            m.listed = listed;
            m.started = started;
            m.run = run;
        }
    }

    /**
     * The exhaustive search's partial-order reduction: the actions worth branching on. A runner whose pending call is
     * local (its own note, version.txt, a pause, its start: nothing another runner reads or writes, the clock being
     * abstracted) runs it before anything else, as every order of it with the others' calls reaches the same state;
     * only its crash there is a second choice. A crash is placed only before calls that change something (a write of
     * the cluster, the member or the disk): a crash before a read leaves the state a crash before the next call does.
     */
    List<String> reduced() {
        List<String> all = enabled();
        for (Runner r : runners) {
            if (r.finished || !local(r.pending)) continue;
            List<String> ample = new ArrayList<>();
            ample.add("run " + r.member.name);
            if (all.contains("timeout " + r.member.name)) ample.add("timeout " + r.member.name);
            if (all.contains("crash " + r.member.name) && crashPoint(r.pending)) ample.add("crash " + r.member.name);
            return ample;
        }
        return all.stream()
                .filter(a -> !a.startsWith("crash ") || crashPoint(runnerOf(a.split(" ", 2)[1]).pending))
                .filter(a -> !a.equals("lose-answer") || pending(Sim::transaction))
                .filter(a -> !a.startsWith("leader-change") || pending(Sim::request))
                .toList();
    }

    /** Whether some runner's next call is one {@code kind} names. */
    private boolean pending(java.util.function.Predicate<String> kind) {
        return runners.stream().anyMatch(r -> !r.finished && kind.test(r.pending));
    }

    /** A transaction on the record: the only request whose answer can be lost after it committed. */
    static boolean transaction(String pending) {
        return pending.equals("create") || pending.equals("delete");
    }

    /** A request to the cluster's client API: what a leader change's 503s and its new leader are seen by. */
    static boolean request(String pending) {
        return transaction(pending)
                || pending.equals("members")
                || pending.equals("cluster version")
                || pending.equals("record")
                || pending.equals("holds")
                || pending.equals("holder status")
                || pending.equals("move leader")
                || pending.startsWith("read through");
    }

    static boolean local(String pending) {
        return pending.startsWith("note ")
                || pending.equals("pause")
                || pending.startsWith("version.txt")
                || pending.equals("start");
    }

    /** A read of the cluster (its step only computes until the next call): no crash point of its own. */
    static boolean crashPoint(String pending) {
        return !(pending.equals("members")
                || pending.equals("holder status")
                || pending.equals("cluster version")
                || pending.equals("record")
                || pending.equals("holds")
                || pending.startsWith("read through")
                || pending.equals("pause")
                || pending.equals("start"));
    }

    private boolean editAllowed(Node m) {
        int i = m.index;
        return switch (config.edits) {
            case ALL_AT_ONCE -> true;
            case ONE_AT_A_TIME ->
                i > 0
                        && members.get(i - 1).edited
                        && members.get(i - 1).run == Run.SERVING
                        && members.get(i - 1).runner != null
                        && members.get(i - 1).runs > 0;
            // once every other runner waits (it paused lately) or is done: "one member edited long after the others"
            case ONE_LATE -> runners.stream().filter(r -> !r.finished).allMatch(r -> r.recent.contains("pause"));
        };
    }

    private boolean done(Node m) {
        return m.runner != null
                && m.runner.finished
                && m.runner.failure == null
                && m.data.equals(config.to)
                && m.run == Run.SERVING
                && !m.runner.crashNow;
    }

    /** Carries out one action; then the cluster's own moves and the invariants. */
    static boolean debug = Boolean.getBoolean("sim.debug");

    void step(String action) {
        steps++;
        trace.add(action);
        String did = action.startsWith("run ") || action.startsWith("crash ")
                ? runnerOf(action.split(" ", 2)[1]).pending
                : "";
        try {
            doStep(action);
        } finally {
            if (debug) {
                System.out.println(
                        steps + ": " + action + " [" + did + "] cv=" + clusterVersion + " job=" + job + " rec="
                                + (recordValue == null
                                        ? "-"
                                        : recordValue.holder() + ":" + recordValue.from() + "->" + recordValue.to()
                                                + "@" + recordMod)
                                + " "
                                + members.stream()
                                        .map(m -> m.name + "@" + m.data + "/" + m.run + "/" + Note.text(m.note)
                                                + (m.outByChoice ? "/chosen" : ""))
                                        .toList());
            }
        }
    }

    private void doStep(String action) {
        String[] parts = action.split(" ", 2);
        if (!action.startsWith("run ")) worldEpoch++;
        switch (parts[0]) {
            case "run" -> resume(runnerOf(parts[1]));
            case "edit" -> edit(memberOf(parts[1]));
            case "restart" -> start(memberOf(parts[1]));
            case "timeout" -> {
                Runner r = runnerOf(parts[1]);
                r.expiring = r.driver.memory().records().at();
                resume(r);
            }
            case "crash" -> {
                crashesLeft--;
                Runner r = runnerOf(parts[1]);
                r.crashNow = true;
                resume(r);
            }
            case "leader-change" -> {
                leaderChangesLeft--;
                leaderChangeReads = 3;
                // another member that reaches a quorum leads, if any
                for (int k = 1; k <= members.size(); k++) {
                    int c = (Math.max(leader, 0) + k) % members.size();
                    if (c != leader && leads(c)) {
                        leader = c;
                        term++;
                        break;
                    }
                }
            }
            case "cut", "cut-in", "cut-out" -> {
                partitionsLeft--;
                int x = memberOf(parts[1]).index;
                for (int j = 0; j < members.size(); j++) {
                    if (j == x) continue;
                    if (!parts[0].equals("cut-in")) cut[x][j] = true; // what it sends is lost
                    if (!parts[0].equals("cut-out")) cut[j][x] = true; // what it should hear is lost
                }
            }
            case "lag" -> {
                partitionsLeft--;
                memberOf(parts[1]).lagging = true;
            }
            case "heal" -> heal();
            case "lose-answer" -> {
                lostAnswersLeft--;
                loseNextAnswer = true;
            }
            case "end-job" -> job = Optional.empty(); // the leader's check found every member on the job's line
            case "remove" -> {
                // kubeadm reset: the member is removed (a conf change through the leader), its etcd stopped and its
                // data wiped
                replacementsLeft--;
                Node m = memberOf(parts[1]);
                m.listed = false;
                m.started = false;
                m.run = Run.DOWN;
                m.outByChoice = false;
            }
            case "add" -> {
                // kubeadm join: MemberAdd (with isLearner in its learner mode); a new member ID
                Node m = memberOf(parts[1]);
                m.listed = true;
                m.started = false;
                m.learner = config.learners();
                m.id = 0x100 + ids++;
            }
            case "join" -> {
                // its etcd starts with empty data and the cluster's release: it receives a snapshot and the log from
                // the leader, at the cluster version's line
                Node m = memberOf(parts[1]);
                m.started = true;
                m.run = Run.SERVING;
                m.data = clusterVersion;
                m.versionTxt = clusterVersion;
                m.recordedCv = clusterVersion;
                m.recordedJob = job.isPresent();
                m.note = Note.NONE;
                m.applied = commit;
            }
            case "promote" -> memberOf(parts[1]).learner = false; // MemberPromote: etcd checks it caught up
            default -> throw new IllegalArgumentException(action);
        }
        clusterMoves();
        check();
    }

    boolean quiet() {
        return crashesLeft == 0
                && replacementsLeft == 0
                && members.stream().allMatch(m -> m.listed && m.started && !m.learner)
                && leaderChangesLeft == 0
                && lostAnswersLeft == 0
                && partitionsLeft == 0
                && !faulted()
                && members.stream().allMatch(m -> m.edited);
    }

    /** Whether a network fault stands (a cut link, a lagging member). */
    boolean faulted() {
        for (boolean[] row : cut) for (boolean c : row) if (c) return true;
        return members.stream().anyMatch(m -> m.lagging);
    }

    /** Every link and member healed: the fair completion's world. */
    void heal() {
        for (boolean[] row : cut) java.util.Arrays.fill(row, false);
        for (Node m : members) m.lagging = false;
    }

    // ----------------------------------------------------------------------------------------------- raft

    private boolean running(int i) {
        return members.get(i).run != Run.DOWN;
    }

    /** Both directions between two running members' etcds carry raft's messages. */
    boolean link(int i, int j) {
        return i == j || (running(i) && running(j) && !cut[i][j] && !cut[j][i]);
    }

    /** A voter of the cluster as it is now: listed (started or not) and not a learner. */
    private boolean voter(int i) {
        return members.get(i).listed && !members.get(i).learner;
    }

    /**
     * Whether member {@code c} reaches a quorum of the voters (itself included) both ways: it can be elected and lead.
     * The quorum is a majority of the voters the cluster lists now (a removed member shrinks it, a voter added and
     * not yet started counts in it), as raft's configuration says.
     */
    private boolean leads(int c) {
        // a member far behind the leader's log acknowledges nothing new until it caught up: no vote, no lead
        if (!voter(c) || !running(c) || members.get(c).lagging) return false;
        int reach = 0;
        int voters = 0;
        for (int j = 0; j < members.size(); j++) {
            if (!voter(j)) continue;
            voters++;
            if (link(c, j) && !members.get(j).lagging) reach++;
        }
        return reach * 2 > voters;
    }

    /** The leader now: the one there is while it reaches a quorum, else the first member that does (-1: none). */
    int leader() {
        if (leader >= 0 && leads(leader)) return leader;
        int before = leader;
        leader = -1;
        for (int c = 0; c < members.size(); c++) {
            if (leads(c)) {
                leader = c;
                break;
            }
        }
        if (leader != before && leader >= 0) term++;
        return leader;
    }

    /** Whether the members whose etcd runs, as the network connects them, form a quorum around some leader. */
    boolean connectedQuorum() {
        for (int c = 0; c < members.size(); c++) if (leads(c)) return true;
        return false;
    }

    /** Whether {@code m} hears a leader (it receives its heartbeats: a one-way cut the other way does not stop it). */
    private boolean hearsLeader(Node m) {
        int l = leader();
        return m.run != Run.DOWN && l >= 0 && (l == m.index || !cut[l][m.index]);
    }

    private boolean servesLinearizableNow(Node m) {
        return servesLinearizable(m);
    }

    /** Whether a request through {@code m}'s etcd reaches the leader and back (a linearizable read, a transaction). */
    private boolean servesLinearizable(Node m) {
        int l = leader();
        // a lagging member serves the read only once it applied the leader's index: past the request's timeout; a
        // learner serves none (etcd: "rpc not supported for learner")
        return l >= 0 && link(m.index, l) && !m.lagging && !m.learner;
    }

    /** Maintenance/Status as etcd answers it locally, without a quorum. */
    private ClusterView.Status statusOf(Node m, MinorLine binary) {
        boolean hears = hearsLeader(m);
        long leaderId = hears ? members.get(leader()).id : 0;
        long known = hears ? commit : m.applied;
        return new ClusterView.Status(
                EtcdVersion.parse(binary + ".0"),
                m.id,
                leaderId,
                term,
                known,
                m.lagging ? known - 5000 : known,
                m.learner,
                hears ? List.of() : List.of("etcdserver: no leader"),
                0,
                Optional.empty(),
                job);
    }

    boolean converged() {
        return members.stream().allMatch(this::done)
                && recordValue == null
                && members.stream().allMatch(m -> m.note instanceof Note.None);
    }

    private Runner runnerOf(String name) {
        return memberOf(name).runner;
    }

    private Node memberOf(String name) {
        return members.stream().filter(m -> m.name.equals(name)).findFirst().orElseThrow();
    }

    private void edit(Node m) {
        m.edited = true;
        m.run = Run.DOWN; // the kubelet stops the old pod
        m.outByChoice = false;
        start(m);
    }

    private void start(Node m) {
        m.run = Run.DOWN;
        Runner r = new Runner(m, runners.size());
        m.runner = r;
        m.runs++;
        runners.add(r);
        r.thread = Thread.ofVirtual().unstarted(() -> body(r));
        r.thread.start();
        back.acquireUninterruptibly(); // until its first port call
    }

    private void resume(Runner r) {
        r.go.release();
        back.acquireUninterruptibly();
    }

    /** Ends every runner thread (a crash at its pending call). */
    void close() {
        for (Runner r : runners) {
            if (!r.finished) {
                r.crashNow = true;
                resume(r);
            }
        }
    }

    /**
     * Whether the runner pauses inside a deadline-bound retry (the release tried for its patience, the patient read of
     * a record it may hold): there the exhaustive search branches on the deadline, passed or not yet.
     */
    private boolean deadlineBound(Runner r) {
        return r.pending.equals("pause")
                && r.driver != null
                && r.expiring == null
                && loop(r.driver.memory().records().at()) != null;
    }

    /** Some runner's next call is a request of a deadline-bound loop ({@link Config#withDeadlineFaults}). */
    private boolean atLoopRequest() {
        return runners.stream()
                .anyMatch(r -> !r.finished
                        && r.driver != null
                        && request(r.pending)
                        && loop(r.driver.memory().records().at()) != null);
    }

    /** The deadline-bound loop a keeper's sync point belongs to (null: none). */
    private static String loop(RolloutCoordinator.RecordAt at) {
        return switch (at) {
            case RELEASE_DELETE, RELEASE_RETRY_PAUSE -> "release";
            case OWN_RECORD_READ, OWN_RECORD_RETRY_PAUSE -> "read of its record";
            default -> null;
        };
    }

    /** The runner left the loop whose deadline passed: how it left it, counted (it gave up, or an answer came first). */
    private void deadline(Runner r) {
        String loop = loop(r.expiring);
        boolean gaveUp = loop.equals("release") ? r.driver.memory().records().unsettled() : r.lastRequestFailed;
        marks.add(loop + (gaveUp ? " gave up at its deadline" : " answered before its deadline"));
        r.expiring = null;
    }

    /** A port call: the runner waits for its turn here, and may be crashed here. */
    private void call(Runner r, String label) {
        if (r.expiring != null) {
            RolloutCoordinator.RecordAt at = r.driver.memory().records().at();
            if (loop(at) == loop(r.expiring)) {
                // no scheduling point: the deadline passed at its pause, and the world stays as it was meanwhile
                r.recent.add(label);
                if (r.recent.size() > 6) r.recent.removeFirst();
                return;
            }
            deadline(r);
        }
        r.pending = label;
        back.release();
        r.go.acquireUninterruptibly();
        if (r.crashNow) throw new Crash();
        r.recent.add(label);
        if (r.recent.size() > 6) r.recent.removeFirst();
    }

    private void body(Runner r) {
        try {
            call(r, "start");
            runner(r);
            call(r, "exec");
            r.member.run = Run.SERVING;
            r.member.outByChoice = false;
        } catch (Crash crash) {
            r.member.run = Run.DOWN; // the pod died with its runner
            r.acting = false;
        } catch (Throwable t) {
            r.failure = t;
            r.member.run = Run.DOWN; // the runner exits 1; its serving etcd with it
            r.acting = false;
        } finally {
            r.finished = true;
            r.pending = "finished";
            back.release();
        }
    }

    // ----------------------------------------------------------------------------------------------- a runner

    private void runner(Runner r) throws Exception {
        Node m = r.member;
        List<RolloutRules.Leg> legs = new ArrayList<>();
        // the runner plans from what the data records (DataDirState: a step's etcd may have moved it past version.txt)
        MinorLine at = m.data;
        while (!at.equals(config.to)) {
            MinorLine next = new MinorLine(at.major(), at.minor() + (at.isOlderThan(config.to) ? 1 : -1));
            legs.add(new RolloutRules.Leg(at, next));
            at = next;
        }
        Log log = Log.silent();
        log.subscribe(e -> {
            if (e instanceof RolloutEvent.RestartRecordTaken) r.acting = true;
            if (e instanceof RolloutEvent.RestartRecordReleased) r.acting = false;
            // a release's one try with its member down that reached no member (no deadline: one try)
            if (e instanceof dev.etcdmigrate.event.Event.Note n
                    && n.level() == dev.etcdmigrate.event.Event.Level.WARN
                    && r.expiring == null
                    && r.driver.memory().records().at() == RolloutCoordinator.RecordAt.RELEASE_DELETE) {
                marks.add("release gave up (one try, its member down)");
            }
        });
        RolloutCoordinator driver = new RolloutCoordinator(
                new View(r),
                new Store(r),
                m.name,
                List.of(m.url()),
                config.members,
                config.policy(),
                new Tick(r),
                log,
                rules);
        r.driver = driver;
        if (legs.isEmpty()) {
            if (!(m.note instanceof Note.None)) {
                driver.releaseLeftover(config.to, reached -> Optional.of(serving(r, config.to)));
            }
            return;
        }
        MinorLine start = m.data;
        driver.run(
                legs,
                i -> leg(r, legs.get(i)),
                reached -> {
                    MinorLine line = reached < 0 ? start : legs.get(reached).to();
                    return Optional.of(serving(r, line));
                },
                Optional.of(m.recordedCv),
                m.recordedJob);
    }

    private RolloutCoordinator.Serving serving(Runner r, MinorLine line) {
        call(r, "serve " + line);
        Node m = r.member;
        if (!m.data.equals(line)) throw new Violation(m.name + " serves " + line + " on data at " + m.data);
        m.run = Run.SERVING;
        m.outByChoice = false;
        // its member serves again: a restart it made under the record is over, whatever its release still does (a
        // delete whose answer was lost committed in etcd: the key is gone while the runner still settles; the
        // settling after the last leg and the leftover's release serve through here alike)
        r.acting = false;
        return new RolloutCoordinator.Serving() {
            @Override
            public void requireAlive() {}

            @Override
            public void stop() {
                call(r, "stop");
                long out = members.stream()
                        .filter(o -> o != m && o.outByChoice && o.run != Run.SERVING)
                        .count();
                m.outByChoice = true;
                m.run = Run.DOWN;
                // a fault or an edit after its last read of the members is the world's, not the rules' (no rule sees
                // it)
                if (!connectedQuorum() && r.epochAtMembers == worldEpoch) {
                    throw new Violation(
                            "no connected quorum after a runner's stop: " + m.name + " stopped; links " + links());
                }
                if (out > 0) {
                    throw new Violation("two members out of service by a runner's choice: " + m.name + " stopped while "
                            + members.stream()
                                    .filter(o -> o != m && o.outByChoice && o.run != Run.SERVING)
                                    .map(o -> o.name)
                                    .toList()
                            + " was out");
                }
            }

            @Override
            public void close() {
                if (m.run == Run.SERVING) m.run = Run.DOWN;
            }
        };
    }

    /** A leg's step as MinorUpgrade / OnlineDowngrade do it, reduced to what the cluster sees. */
    private void leg(Runner r, RolloutRules.Leg leg) throws Exception {
        Node m = r.member;
        call(r, "leg " + leg + " private etcd");
        if (leg.upgrade() && clusterVersion.isOlderThan(leg.from())) {
            // etcd refuses to join: its line is two minors past the cluster version
            throw new Violation(m.name + " joins a cluster whose version is two minors below: etcd " + leg.to()
                    + " at cluster version " + clusterVersion);
        }
        m.run = Run.PRIVATE;
        // MinorUpgrade starts the next line's etcd; OnlineDowngrade the newer etcd first, then the older
        m.stepLine = leg.upgrade() ? leg.to() : leg.from();
        if (!leg.upgrade() && !leg.from().equals(leg.to())) {
            awaitQuorum(r, "downgrade read");
            // a job to the previous minor's line: the leader ends it once every member runs it
            int waits = 0;
            while (job.isPresent() && !job.get().equals(leg.to()) && !enableWithoutCheckingJob) {
                if (!job.get().equals(leg.from()) || ++waits > 200) {
                    throw new FailedException(
                            "a downgrade job to " + job.get() + " is in progress, not to " + leg.to());
                }
                call(r, "pause");
                clockMillis += 500;
                awaitQuorum(r, "downgrade read");
            }
            boolean wanted =
                    enableWithoutCheckingJob || !(clusterVersion.equals(leg.to()) || job.equals(Optional.of(leg.to())));
            if (wanted) {
                call(r, "downgrade enable " + leg.to());
                if (job.isPresent()) {
                    // etcd refuses a second enable; the step reads again: a job to its own line is the one wanted
                    if (enableWithoutCheckingJob || !job.get().equals(leg.to())) {
                        throw new FailedException(
                                "downgrade enable refused: a job to " + job.get() + " is in progress");
                    }
                } else {
                    if (!enabledJobs.add(leg.to())) {
                        doubleEnable = "the downgrade job to " + leg.to() + " was enabled twice (by " + m.name + ")";
                    }
                    job = Optional.of(leg.to());
                    clusterVersion = leg.to();
                    enables++;
                }
            }
            call(r, "leg " + leg + " older etcd");
            m.stepLine = leg.to();
        }
        awaitQuorum(r, "quorum write at " + leg.to());
        m.data = leg.to();
        call(r, "version.txt " + leg.to());
        m.versionTxt = leg.to();
        call(r, "leg " + leg + " stopped");
        m.run = Run.DOWN;
    }

    private void awaitQuorum(Runner r, String label) throws FailedException {
        for (int i = 0; ; ) {
            call(r, label);
            if (servesLinearizable(r.member)) return;
            // the step's --start-timeout; while a network fault stands the world owes a heal, which a real step's
            // timeout would meet as a failed run restarted by the kubelet (not modelled: the step waits)
            if (!faulted()) i++;
            if (i > 400) throw new FailedException("no quorum for " + label);
            clockMillis += 500;
        }
    }

    /**
     * From the simulated network, not from answers: a runner waits after a linearizable request no member served while
     * its member is down, and its member's etcd, running, would give the others the quorum they lack (its vote is what
     * they need): it keeps its member down waiting for a quorum it is part of.
     */
    private void keptDown(Runner r) {
        Node m = r.member;
        if (m.run != Run.DOWN || r.lastFailed == null || !r.sawMembers || connectedQuorum()) return;
        m.run = Run.SERVING;
        boolean restores = connectedQuorum();
        m.run = Run.DOWN;
        if (restores) {
            throw new Violation("a member kept down while the quorum needs its vote: " + m.name + " waits after its "
                    + r.lastFailed + " found no quorum, which its etcd would restore");
        }
    }

    /** A member whose step's private etcd answers other runners on its listed loopback URL (one host, real etcd). */
    private boolean stepAnswering(Node m) {
        return m.run == Run.PRIVATE && config.stepReachable();
    }

    /**
     * The leader ends a downgrade job at its next check that finds every member running and on the job's line: an
     * action of its own (not at once), so runners may act between the last member's arrival and the end. A member
     * that moved past the line meanwhile keeps the job from ever ending. The leader acts only on the members it
     * reaches.
     */
    private boolean jobFinished() {
        return job.isPresent()
                && leaderReachesAll()
                && members.stream().filter(m -> m.listed).allMatch(m -> m.data.equals(job.get()));
    }

    /** Every member the cluster lists runs its etcd and the leader reaches it. */
    private boolean leaderReachesAll() {
        return members.stream().filter(m -> m.listed).allMatch(m -> m.run != Run.DOWN)
                && leader() >= 0
                && members.stream().filter(m -> m.listed).allMatch(m -> link(leader(), m.index));
    }

    // ----------------------------------------------------------------------------------------------- the cluster

    private void clusterMoves() {
        if (leader() >= 0) commit += 5; // Kubernetes' writes
        for (Node m : members) {
            if (hearsLeader(m)) m.applied = commit;
        }
        for (Node m : members) {
            if (m.run != Run.DOWN) {
                m.recordedCv = clusterVersion;
                m.recordedJob = job.isPresent();
            }
        }
        // the leader acts only on the members it reaches
        boolean allUp = leaderReachesAll();
        if (job.isEmpty() && allUp) {
            MinorLine lowest = members.stream()
                    .filter(m -> m.listed)
                    .map(m -> m.data)
                    .min(MinorLine::compareTo)
                    .orElseThrow();
            if (clusterVersion.isOlderThan(lowest)) clusterVersion = lowest;
        }
        for (Node m : members) {
            if (m.run != Run.DOWN) {
                m.recordedCv = clusterVersion;
                m.recordedJob = job.isPresent();
            }
        }
    }

    /** The invariants after every step (the liveness one is the scheduler's). */
    private void check() {
        for (Runner r : runners) {
            if (r.failure instanceof Violation v) throw v;
            if (r.failure != null) {
                throw new Violation("runner of " + r.member.name + " failed: " + r.failure.getMessage());
            }
        }
        List<Node> running = members.stream().filter(m -> m.run != Run.DOWN).toList();
        if (!running.isEmpty()) {
            MinorLine lo =
                    running.stream().map(m -> m.data).min(MinorLine::compareTo).orElseThrow();
            MinorLine hi =
                    running.stream().map(m -> m.data).max(MinorLine::compareTo).orElseThrow();
            if (hi.major() != lo.major() || hi.minor() - lo.minor() > 1) {
                throw new Violation("members run lines more than one minor apart: "
                        + running.stream().map(m -> m.name + "@" + m.data).toList());
            }
        }
        long acting = runners.stream().filter(r -> !r.finished && r.acting).count();
        if (acting > 1) {
            throw new Violation("two holders of the restart record: two runners act under it: "
                    + runners.stream()
                            .filter(r -> !r.finished && r.acting)
                            .map(r -> r.member.name)
                            .toList());
        }
        List<String> holders = runners.stream()
                .filter(r -> !r.finished && r.member.note instanceof Note.Holds && !r.releasing && r.wroteNote)
                .map(r -> r.member.name + "@" + Note.text(r.member.note))
                .toList();
        if (holders.size() > 1) {
            throw new Violation("two holders of the restart record: two running runners note one: " + holders);
        }
        for (Node m : members) {
            boolean up = config.from.isOlderThan(config.to);
            if (up ? m.data.isOlderThan(m.versionTxt) : m.versionTxt.isOlderThan(m.data)) {
                throw new Violation(
                        "version.txt of " + m.name + " names " + m.versionTxt + ", its data is at " + m.data);
            }
        }
        if (doubleEnable != null) throw new Violation(doubleEnable);
    }

    /** The running members and the links cut among them, for a violation's message. */
    String links() {
        List<String> s = new ArrayList<>();
        for (Node a : members) {
            if (a.run == Run.DOWN) continue;
            List<String> cutTo = new ArrayList<>();
            for (Node b : members) if (b != a && b.run != Run.DOWN && cut[a.index][b.index]) cutTo.add(b.name);
            s.add(a.name + (cutTo.isEmpty() ? "" : " -/-> " + cutTo));
        }
        return s + " leader " + (leader() < 0 ? "none" : members.get(leader()).name);
    }

    String summary() {
        return "record "
                + (recordValue == null
                        ? "none"
                        : recordValue.holder() + " " + recordValue.from() + " -> " + recordValue.to())
                + ", members "
                + members.stream()
                        .map(m -> m.name + "@" + m.data + "/" + m.run
                                + (Note.text(m.note).isEmpty() ? "" : " note " + Note.text(m.note))
                                + (m.runner == null ? "" : " runner " + m.runner.pending))
                        .toList();
    }

    /**
     * The exhaustive search's canonical state: the cluster (cluster version, job, record and who holds it, the
     * faults left), each member (data, version.txt, how it runs, its note, recorded cluster version and job) and each
     * runner: its pending port call and its coordinator's memory ({@link RolloutCoordinator#memory()}: the sync points
     * it and its record keeper stand at, and what they remember). Left out, as abstractions: the clock and the count of
     * a patient read's retries (a deadline-bound loop's "not yet"; its "passed" is the timeout branch,
     * {@link #enabled()}), raft indexes beyond whether a member is further behind than the margin's bound, the term,
     * and revisions other than relative to the store's (see docs/ha.md, "The simulation").
     */
    String state() {
        StringBuilder s = new StringBuilder();
        s.append(clusterVersion)
                .append(job)
                .append(recordValue == null ? "-" : recordValue.holder() + recordValue.from() + recordValue.to())
                .append(recordValue == null ? "" : "@" + (revision - recordMod))
                .append(leaderChangeReads)
                .append(loseNextAnswer)
                .append(crashesLeft)
                .append(leaderChangesLeft)
                .append(lostAnswersLeft)
                .append(enabledJobs)
                .append(leader)
                .append(partitionsLeft)
                .append(replacementsLeft)
                .append(ids)
                .append(java.util.Arrays.deepToString(cut));
        for (Node m : members) {
            s.append('|')
                    .append(m.data)
                    .append(m.versionTxt)
                    .append(m.run)
                    .append(m.run == Run.PRIVATE ? m.stepLine : "")
                    .append(Note.text(m.note).isEmpty() ? "" : m.note instanceof Note.Taking ? "T" : "H")
                    .append(m.outByChoice)
                    .append(m.edited)
                    .append(m.recordedCv)
                    .append(m.recordedJob)
                    .append(commit - m.applied > POLICY.raftIndexBound())
                    .append(m.lagging)
                    .append(m.listed)
                    .append(m.started)
                    .append(m.learner);
            Runner r = m.runner;
            if (r == null) continue;
            s.append(r.finished)
                    .append(r.failure != null)
                    .append(r.pending)
                    .append(r.acting)
                    .append(r.releasing);
            if (r.finished) continue;
            if (r.driver != null) memory(s, r.driver.memory());
        }
        return s.toString();
    }

    /** A coordinator's memory, canonical: revisions relative to the store's, raft indexes as "behind the bound". */
    private void memory(StringBuilder s, RolloutCoordinator.Memory mem) {
        s.append('{')
                .append(mem.phase())
                .append(',')
                .append(mem.step())
                .append(',')
                .append(mem.leg())
                .append(',');
        record(s, mem.held());
        s.append(mem.unknown()).append(',');
        record(s, mem.unreleased());
        record(s, mem.settling());
        s.append(mem.serving())
                .append(',')
                .append(mem.answered())
                .append(',')
                .append(mem.handOvers() % (config.members == 3 ? 2 : 12))
                .append(',')
                .append(mem.blocked().isPresent())
                .append(',')
                .append(mem.recordedClusterVersion())
                .append(mem.recordedJob())
                .append(";pass ");
        RolloutCoordinator.Pass pass = mem.pass();
        members(s, pass.members());
        record(s, pass.held());
        members(s, pass.now());
        new java.util.TreeMap<>(pass.reads())
                .forEach((k, v) -> s.append(k).append(v).append(','));
        RolloutCoordinator.Records keeper = mem.records();
        s.append(";records ").append(keeper.at()).append(',');
        keeper.noted()
                .ifPresentOrElse(
                        n -> s.append(n instanceof Note.Holds h ? "H@" + (revision - h.revision()) : n),
                        () -> s.append('?'));
        s.append(',');
        record(s, keeper.held());
        s.append(keeper.unsettled()).append('}');
    }

    private void record(StringBuilder s, Optional<ClusterView.Record> rec) {
        rec.ifPresentOrElse(
                r -> s.append(r.value().holder())
                        .append(r.value().from())
                        .append(r.value().to())
                        .append('@')
                        .append(revision - r.modRevision()),
                () -> s.append('-'));
        s.append(',');
    }

    private void members(StringBuilder s, List<ClusterView.Member> list) {
        s.append('[');
        for (ClusterView.Member m : list) {
            s.append(m.name())
                    .append('/')
                    .append(m.id())
                    .append(m.learner() ? "L" : "")
                    .append(m.problem());
            m.status()
                    .ifPresent(st -> s.append('=')
                            .append(st.server())
                            .append(st.memberId())
                            .append('>')
                            .append(st.leaderId())
                            .append(st.learner() ? "L" : "")
                            .append(st.errors())
                            .append(commit - st.raftAppliedIndex() > POLICY.raftIndexBound() ? "behind" : "")
                            .append(st.downgradeTarget()));
            s.append(' ');
        }
        s.append(']');
    }

    // ----------------------------------------------------------------------------------------------- the ports

    private final class Tick implements RolloutCoordinator.Ticker {
        private final Runner r;

        Tick(Runner r) {
            this.r = r;
        }

        @Override
        public Instant now() {
            return Instant.ofEpochMilli(clockMillis);
        }

        @Override
        public void pause() {
            call(r, "pause");
            keptDown(r);
            clockMillis += config.policy().poll().toMillis();
        }
    }

    private final class Store implements NoteStore {
        private final Runner r;

        Store(Runner r) {
            this.r = r;
        }

        @Override
        public Note read() {
            return r.member.note; // read at the run's start, before anything it does
        }

        @Override
        public void write(Note note) {
            call(r, "note " + Note.text(note));
            r.member.note = note;
            r.releasing = false;
            r.wroteNote = true;
            if (note instanceof Note.None) r.acting = false; // released, or given up to a peer's take-over
        }
    }

    /** The runner's cluster client: its own URL and the guessed ones first, then every URL the member list named. */
    private final class View implements ClusterView {
        private final Runner r;
        private final Set<String> listed = new LinkedHashSet<>();
        private final Set<String> seeds = new LinkedHashSet<>();

        View(Runner r) {
            this.r = r;
            seeds.add(r.member.url());
            for (Node m : members) {
                // EtcdWiring's guess: the peer's host with this member's client port
                seeds.add(config.layout == Layout.ONE_HOST ? r.member.url() : m.url());
            }
        }

        private void ask(String label, boolean listedToo) throws IOException {
            ask(label, listedToo, true);
        }

        /**
         * A request through the client's endpoints in turn, as {@code ClusterClient} sends it: a member whose etcd
         * answers on one of them serves a local request (the member list, Status, /version) on its own; a
         * linearizable one (a read of the record, a transaction) only when it reaches the leader and back, else it
         * times out and the next endpoint is tried.
         */
        private void ask(String label, boolean listedToo, boolean linearizable) throws IOException {
            call(r, label);
            r.lastRequestFailed = true;
            boolean leaderChanged = leaderChangeReads > 0;
            if (leaderChanged) leaderChangeReads--;
            if (listed.isEmpty() && !releaseThroughOwnUrlOnly) {
                // GET /members on the other members' peer URLs: any etcd of theirs that runs (serving or a step's)
                if (members.stream().anyMatch(m -> m != r.member && m.run != Run.DOWN)) {
                    for (Node m : members) listed.add(m.url());
                }
            }
            Set<String> urls = new LinkedHashSet<>(listedToo ? listed : Set.of());
            urls.addAll(seeds);
            // a step's private etcd on one host: its listed loopback URL answers any runner there (real etcd)
            List<Node> there = members.stream()
                    .filter(m ->
                            (m.run == Run.SERVING && urls.contains(m.url())) || (stepAnswering(m) && !listed.isEmpty()))
                    .toList();
            // a 503 comes from an etcd: where none runs, the walk meets only refused connections
            if (leaderChanged && config.reachedUntold()) throw new IOException("503 leader changed");
            if (leaderChanged && !there.isEmpty()) throw new ClusterView.EtcdReached("503 leader changed", null);
            boolean answers = there.stream()
                    .anyMatch(m -> !(linearizable || config.localReadsNeedQuorum()) || servesLinearizable(m));
            if (linearizable) r.lastFailed = answers ? null : label;
            if (answers) {
                r.lastRequestFailed = false;
                return;
            }
            // an etcd there without a quorum takes the request and times out; none there: every connection refused
            String why = "no member answered on " + urls;
            if (!there.isEmpty() && !config.reachedUntold()) throw new ClusterView.EtcdReached(why, null);
            throw new IOException(why);
        }

        /** Whether an endpoint of this client's other than the first that served would serve too (a retry). */
        private boolean anotherServes() {
            Set<String> urls = new LinkedHashSet<>(listed);
            urls.addAll(seeds);
            return members.stream()
                            .filter(m -> m.run == Run.SERVING && urls.contains(m.url()))
                            .filter(Sim.this::servesLinearizableNow)
                            .count()
                    > 1;
        }

        private void maybeLose() throws IOException {
            if (loseNextAnswer) {
                loseNextAnswer = false;
                throw new ClusterView.EtcdReached(
                        "the answer was lost", null); // the request reached an etcd, which committed it
            }
        }

        @Override
        public List<ClusterView.Member> members() throws IOException {
            ask("members", true, false);
            r.sawMembers = true;
            r.epochAtMembers = worldEpoch;
            List<ClusterView.Member> list = new ArrayList<>();
            for (Node m : Sim.this.members) {
                if (!m.listed) continue; // removed: the cluster does not list it
                if (!m.started) {
                    // added, its etcd not yet started: etcd lists it with no name and no client URL
                    list.add(ClusterView.Member.down(
                            "(unstarted " + Long.toHexString(m.id) + ")",
                            m.id,
                            m.learner,
                            "it has not started yet (no client URL)"));
                    continue;
                }
                listed.add(m.url());
                MinorLine binary = m.run == Run.SERVING ? m.data : m.stepLine;
                list.add(
                        m.run == Run.SERVING || stepAnswering(m)
                                ? ClusterView.Member.up(m.name, m.id, m.learner, statusOf(m, binary))
                                : ClusterView.Member.down(m.name, m.id, m.learner, "connection refused"));
            }
            return list;
        }

        @Override
        public Optional<MinorLine> clusterVersion() throws IOException {
            ask("cluster version", true, false);
            return Optional.of(clusterVersion);
        }

        @Override
        public Optional<Record> record() throws IOException {
            ask("record", true);
            return recordValue == null ? Optional.empty() : Optional.of(new Record(recordValue, recordMod));
        }

        @Override
        public Optional<Record> create(RecordValue value) throws IOException {
            ask("create", true);
            if (recordValue != null) return Optional.empty();
            recordValue = value;
            recordMod = ++revision;
            if (loseNextAnswer && anotherServes()) {
                // the answer timed out: the client sends the creation again on its next endpoint, where the key exists
                loseNextAnswer = false;
                return Optional.empty();
            }
            maybeLose();
            return Optional.of(new Record(value, recordMod));
        }

        @Override
        public boolean delete(Record record) throws IOException {
            r.releasing = true;
            ask("delete", !releaseThroughOwnUrlOnly);
            if (recordValue == null || recordMod != record.modRevision()) return false;
            recordValue = null;
            revision++;
            maybeLose();
            return true;
        }

        @Override
        public boolean holds(Record record) throws IOException {
            ask("holds", true);
            return recordValue != null && recordMod == record.modRevision();
        }

        /**
         * The member's own client URL (the operator's, which the record names) answers only while its etcd serves:
         * a step's private etcd listens on another port (on loopback), even where the member list shows that one
         * ({@link Config#withStepAnswering}). A URL answers as the one member it belongs to.
         */
        @Override
        public Optional<Status> statusAt(String member, List<String> urls) {
            call(r, "holder status");
            return Sim.this.members.stream()
                    .filter(m -> m.name.equals(member) && urls.contains(m.url()) && m.run == Run.SERVING)
                    .findFirst()
                    .map(m -> statusOf(m, m.data));
        }

        @Override
        public Optional<String> linearizableThrough(String member) {
            call(r, "read through " + member);
            if (leaderChangeReads > 0) {
                leaderChangeReads--;
                return Optional.of("503 leader changed");
            }
            Node m = memberOf(member);
            if (!(m.run == Run.SERVING || stepAnswering(m))) return Optional.of("connection refused");
            return servesLinearizable(m) ? Optional.empty() : Optional.of("context deadline exceeded");
        }

        @Override
        public void moveLeader(String to) throws IOException {
            call(r, "move leader");
            int l = leader();
            Node target = memberOf(to);
            if (l < 0 || !link(l, target.index) || !leads(target.index)) {
                throw new IOException("etcdserver: request timed out, leader transfer took too long");
            }
            leader = target.index;
            term++;
        }
    }
}
