package dev.etcdmigrate.cluster.sim;

import dev.etcdmigrate.cluster.ClusterView;
import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.cluster.ClusterView.Record;
import dev.etcdmigrate.cluster.ClusterView.Status;
import dev.etcdmigrate.cluster.Note;
import dev.etcdmigrate.cluster.RolloutPolicy;
import dev.etcdmigrate.cluster.RolloutRules.Decision;
import dev.etcdmigrate.cluster.RolloutRules.Leg;
import dev.etcdmigrate.cluster.RolloutRules.Self;
import dev.etcdmigrate.cluster.RuleSet;
import dev.etcdmigrate.version.MinorLine;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * The mutants: alternative rule sets ({@link RuleSet}) that replace one clause or step of the real rules the way a
 * plausible edit would, each with the invariant it must break (a regular expression over the violation). The
 * simulation runs one by handing it to {@link Sim#rules}; the real rules are {@link RuleSet#REAL}. Two more change the
 * simulated world, not the rules ({@link Sim#enableWithoutCheckingJob}, {@link Sim#releaseThroughOwnUrlOnly}: a step's
 * and a client's defect): they are kept as checks of the model and counted apart.
 */
final class Mutants {

    private Mutants() {}

    /** A mutant: its rules, what it does to the simulated world besides (model mutants only), the invariant it breaks. */
    record Mutant(String name, RuleSet rules, Consumer<Boolean> world, String breaks) {
        /** Runs {@code work} with this mutant in place, the real rules and world after. */
        <T> T under(java.util.function.Supplier<T> work) {
            Sim.rules = rules;
            world.accept(true);
            try {
                return work.get();
            } finally {
                Sim.rules = RuleSet.REAL;
                world.accept(false);
            }
        }

        boolean rulesMutant() {
            return rules != RuleSet.REAL;
        }
    }

    private static final Consumer<Boolean> NOTHING = on -> {};
    private static final String TWO_OUT = "two members out of service|no connected quorum after a runner's stop";
    private static final String NO_QUORUM = "no connected quorum after a runner's stop";
    private static final String TWO_HOLDERS = "two holders of the restart record";
    /** Two lines a minor too far apart: among the running members, or a member joining the cluster version. */
    private static final String LINES_APART =
            "members run lines more than one minor apart|joins a cluster whose version is two minors below";

    private static final String RUNNER_FAILED = "runner of m\\d failed";
    private static final String KEPT_DOWN = "a member kept down while the quorum needs its vote";
    private static final String LIVENESS = "liveness";

    static final Map<String, Mutant> ALL = new LinkedHashMap<>();

    private static void add(String name, RuleSet rules, String breaks) {
        ALL.put(name, new Mutant(name, rules, NOTHING, breaks));
    }

    private static void addWorld(String name, RuleSet rules, Consumer<Boolean> world, String breaks) {
        ALL.put(name, new Mutant(name, rules, world, breaks));
    }

    static Mutant named(String name) {
        Mutant m = ALL.get(name);
        if (m == null) throw new IllegalArgumentException("no mutant " + name);
        return m;
    }

    /** The margin without its raft clauses: answers and raft indexes only (the margin of before). */
    static final RuleSet MARGIN_ON_ANSWERS = new RuleSet() {
        @Override
        public List<String> marginLeader(Self self, List<Member> members) {
            return List.of();
        }

        @Override
        public List<String> marginErrors(Self self, List<Member> members) {
            return List.of();
        }

        @Override
        public List<String> marginFollowers(Self self, List<Member> members) {
            return List.of();
        }

        @Override
        public List<String> marginReads(Self self, List<Member> members, Map<String, Optional<String>> reads) {
            return List.of();
        }

        @Override
        public List<String> handOver(Self self, List<Member> members) {
            return List.of();
        }
    };

    static {
        add(
                "skipMargin",
                new RuleSet() {
                    @Override
                    public List<String> margin(
                            Self self, List<Member> members, Map<String, Optional<String>> reads, long bound) {
                        return List.of();
                    }

                    @Override
                    public List<String> handOver(Self self, List<Member> members) {
                        return List.of();
                    }
                },
                TWO_OUT);
        add("marginOnAnswers", MARGIN_ON_ANSWERS, NO_QUORUM);
        add(
                "skipLinearizableRead",
                new RuleSet() {
                    @Override
                    public List<String> marginReads(
                            Self self, List<Member> members, Map<String, Optional<String>> reads) {
                        return List.of();
                    }
                },
                NO_QUORUM);
        add(
                "skipRaftLag",
                new RuleSet() {
                    @Override
                    public List<String> marginRaftLag(Self self, List<Member> members, long bound) {
                        return List.of();
                    }
                },
                NO_QUORUM);
        add(
                "skipRaftLagAndRead",
                new RuleSet() {
                    @Override
                    public List<String> marginRaftLag(Self self, List<Member> members, long bound) {
                        return List.of();
                    }

                    @Override
                    public List<String> marginReads(
                            Self self, List<Member> members, Map<String, Optional<String>> reads) {
                        return List.of();
                    }
                },
                NO_QUORUM);
        add(
                "skipMemberCount",
                new RuleSet() {
                    @Override
                    public Optional<Decision.Wait> gateMemberCount(Self self, List<Member> members) {
                        return Optional.empty();
                    }

                    @Override
                    public List<String> marginMemberCount(Self self, List<Member> members) {
                        return List.of();
                    }
                },
                TWO_OUT);
        add(
                "skipStorageGate",
                new RuleSet() {
                    @Override
                    public Optional<Decision.Wait> gateStorage(Leg leg, Self self, List<Member> members) {
                        return Optional.empty();
                    }
                },
                "opened by the next line at storage version");
        add(
                "skipDowngradeJobGate",
                new RuleSet() {
                    @Override
                    public Optional<Decision.Wait> gateDowngradeJob(Leg leg, List<Member> members) {
                        return Optional.empty();
                    }
                },
                LIVENESS);
        add(
                "skipClusterVersionGate",
                new RuleSet() {
                    @Override
                    public Optional<Decision.Wait> gateClusterVersion(Leg leg, Optional<MinorLine> clusterVersion) {
                        return Optional.empty();
                    }
                },
                "joins a cluster whose version is two minors below");
        add(
                "skipGate",
                new RuleSet() {
                    @Override
                    public Optional<Decision.Wait> gate(
                            Leg leg, Self self, List<Member> members, Optional<MinorLine> clusterVersion) {
                        return Optional.empty();
                    }
                },
                LINES_APART);
        add(
                "takeOverWithoutHolderAnswering",
                new RuleSet() {
                    @Override
                    public boolean holderDone(Record record, Optional<Status> holder) {
                        return holder.isEmpty()
                                || !holder.get().line().equals(record.value().from());
                    }

                    @Override
                    public Optional<Status> holderAnswer(ClusterView cluster, Record record, List<Member> members)
                            throws InterruptedException, dev.etcdmigrate.error.MigrateException {
                        return cluster.statusAt(
                                record.value().holder(), record.value().serves());
                    }
                },
                TWO_HOLDERS);
        add(
                "holderOnListedUrl",
                new RuleSet() {
                    @Override
                    public boolean readsHolderWhereItServes(dev.etcdmigrate.cluster.RecordValue value) {
                        return false;
                    }
                },
                TWO_HOLDERS);
        add(
                "noNoteBeforeCreate",
                new RuleSet() {
                    @Override
                    public boolean notesBeforeCreate() {
                        return false;
                    }
                },
                LIVENESS);
        add(
                "deleteWithoutComparingRevision",
                new RuleSet() {
                    @Override
                    public boolean delete(ClusterView cluster, Record record)
                            throws java.io.IOException, InterruptedException, dev.etcdmigrate.error.MigrateException {
                        Optional<Record> now = cluster.record();
                        return now.isPresent() && cluster.delete(now.get());
                    }
                },
                TWO_HOLDERS);
        add(
                "releaseBeforeQuorumWrite",
                new RuleSet() {
                    @Override
                    public boolean releasesAfterQuorumWrite() {
                        return false;
                    }
                },
                TWO_OUT);
        add(
                "noAnswerIsFatal",
                new RuleSet() {
                    @Override
                    public boolean waitsOutNoAnswer() {
                        return false;
                    }
                },
                RUNNER_FAILED);
        add(
                "heldRecordReadOnce+noAnswerIsFatal",
                new RuleSet() {
                    @Override
                    public boolean waitsOutNoAnswer() {
                        return false;
                    }

                    @Override
                    public int startReads(Note start, RolloutPolicy policy) {
                        return 1;
                    }
                },
                RUNNER_FAILED);
        add(
                "firstLegAlwaysAtOnce",
                new RuleSet() {
                    @Override
                    public boolean atOnceWhileMembersAnswer() {
                        return true;
                    }
                },
                LINES_APART);
        add(
                "reachedReadAsNoEtcd",
                new RuleSet() {
                    @Override
                    public boolean reachedIsFailedRead() {
                        return false;
                    }
                },
                NO_QUORUM);
        add(
                "atOnceWheneverNoneAnswers",
                new RuleSet() {
                    @Override
                    public boolean atOnce(Leg leg, Optional<MinorLine> recordedClusterVersion, boolean recordedJob) {
                        return true;
                    }
                },
                LINES_APART);
        add(
                "reuseOwnRecordOfAnotherLeg",
                new RuleSet() {
                    @Override
                    public Decision take(Leg leg, Self self, Optional<Record> existing, Optional<Status> holder) {
                        if (existing.isPresent()
                                && existing.get().value().holder().equals(self.name())) {
                            return new Decision.UseOwn(existing.get());
                        }
                        return RuleSet.super.take(leg, self, existing, holder);
                    }
                },
                TWO_HOLDERS);
        // rule 2 never lets a runner take the record: every runner waits for ever, each poll a move (liveness by fair
        // cycles: the exhaustive search finds the cycle, where no path ends)
        add(
                "neverTakes",
                new RuleSet() {
                    @Override
                    public Decision take(Leg leg, Self self, Optional<Record> existing, Optional<Status> holder) {
                        return new Decision.Wait("never", List.of());
                    }
                },
                "liveness: a fair cycle");
        add(
                "releaseBeforeServing",
                new RuleSet() {
                    @Override
                    public Duration releaseWhileDown(RolloutPolicy policy) {
                        return policy.releasePatience();
                    }
                },
                KEPT_DOWN);
        add(
                "waitDownOnFailedRead",
                new RuleSet() {
                    @Override
                    public boolean servesOnFailedRead() {
                        return false;
                    }
                },
                KEPT_DOWN);
        add(
                "createLossTrusted",
                new RuleSet() {
                    @Override
                    public Optional<Record> ownAfterRefusedCreate(ClusterView cluster, String self) {
                        return Optional.empty();
                    }
                },
                LIVENESS);
        RuleSet namedLineOnly = new RuleSet() {
            @Override
            public boolean holderDone(Record record, Optional<Status> holder) {
                dev.etcdmigrate.cluster.RecordValue v = record.value();
                if (v.from().equals(v.to())) return false;
                return holder.map(Status::line).filter(v.to()::equals).isPresent();
            }
        };
        addWorld(
                "takeOverOnlyAtTheNamedLine+releaseThroughOwnUrlOnly",
                namedLineOnly,
                on -> Sim.releaseThroughOwnUrlOnly = on,
                LIVENESS);
        addWorld("releaseThroughOwnUrlOnly", RuleSet.REAL, on -> Sim.releaseThroughOwnUrlOnly = on, LIVENESS);
        addWorld(
                "enableWithoutCheckingJob",
                RuleSet.REAL,
                on -> Sim.enableWithoutCheckingJob = on,
                "runner of m\\d failed: downgrade enable refused");
    }
}
