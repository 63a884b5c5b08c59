package dev.etcdmigrate.cluster;

import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.cluster.ClusterView.Record;
import dev.etcdmigrate.cluster.ClusterView.Status;
import dev.etcdmigrate.cluster.RolloutRules.Decision;
import dev.etcdmigrate.cluster.RolloutRules.Leg;
import dev.etcdmigrate.cluster.RolloutRules.Self;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The rules a {@link RolloutCoordinator} follows, clause by clause (docs/ha.md, "The rules"): every method's default is
 * the real rule ({@link RolloutRules}' pure functions, or the protocol step it names), and every run uses {@link
 * #REAL}. A rule is composed of its clauses through these methods, so an implementation that replaces one clause
 * replaces it wherever the rule applies: the simulation's tests supply such alternatives (mutants) and check that an
 * invariant breaks; nothing in a run can.
 */
public interface RuleSet {

    /** The rules of every run. */
    RuleSet REAL = new RuleSet() {};

    // ------------------------------------------------------------------------------------------------ rule 1, gate

    default Optional<Decision.Wait> gate(Leg leg, Self self, List<Member> members, Optional<MinorLine> clusterVersion) {
        return gateLines(leg, self, members)
                .or(() -> gateMemberCount(self, members))
                .or(() -> gateDowngradeJob(leg, members))
                .or(() -> gateStorage(leg, self, members))
                .or(() -> gateClusterVersion(leg, clusterVersion));
    }

    default Optional<Decision.Wait> gateLines(Leg leg, Self self, List<Member> members) {
        return RolloutRules.gateLines(leg, self, members);
    }

    default Optional<Decision.Wait> gateMemberCount(Self self, List<Member> members) {
        return RolloutRules.gateMemberCount(self, members);
    }

    default Optional<Decision.Wait> gateDowngradeJob(Leg leg, List<Member> members) {
        return RolloutRules.gateDowngradeJob(leg, members);
    }

    default Optional<Decision.Wait> gateStorage(Leg leg, Self self, List<Member> members) {
        return RolloutRules.gateStorage(leg, self, members);
    }

    default Optional<Decision.Wait> gateClusterVersion(Leg leg, Optional<MinorLine> clusterVersion) {
        return RolloutRules.gateClusterVersion(leg, clusterVersion);
    }

    /** The first leg's run at once while no member answers ({@link RolloutRules#atOnce}). */
    default boolean atOnce(Leg leg, Optional<MinorLine> recordedClusterVersion, boolean recordedJob) {
        return RolloutRules.atOnce(leg, recordedClusterVersion, recordedJob);
    }

    /** Whether a leg runs at once while other members answer: never (the gate and the record decide then). */
    default boolean atOnceWhileMembersAnswer() {
        return false;
    }

    /**
     * Whether an etcd reached that gave no member list ({@link ClusterView.EtcdReached}: a 503 "leader changed", a
     * request that waited for a quorum past its time) is a failed read while members answer: a member down serves its
     * data's line and reads again, and its leg waits for the gate and the record. Never "no member of the cluster
     * runs", whose first leg may run at once ({@link #atOnce}): where an etcd is there another member may be out by
     * its runner's choice, and a leg at once would make two out.
     */
    default boolean reachedIsFailedRead() {
        return true;
    }

    // ---------------------------------------------------------------------------------------------- rule 2, record

    default Decision take(Leg leg, Self self, Optional<Record> existing, Optional<Status> holder) {
        return RolloutRules.take(leg, self, existing, existing.isPresent() && holderDone(existing.get(), holder));
    }

    default boolean holderDone(Record record, Optional<Status> holder) {
        return RolloutRules.holderDone(record, holder);
    }

    /** The holder's answer where the take-over reads it (see {@link RolloutRules#holderAnswer}). */
    default Optional<Status> holderAnswer(ClusterView cluster, Record record, List<Member> members)
            throws InterruptedException, MigrateException {
        if (record.value().from().equals(record.value().to())) return Optional.empty();
        if (readsHolderWhereItServes(record.value())) {
            return cluster.statusAt(record.value().holder(), record.value().serves());
        }
        return RolloutRules.listedAnswer(record.value().holder(), members);
    }

    default boolean readsHolderWhereItServes(RecordValue value) {
        return RolloutRules.readsHolderWhereItServes(value);
    }

    /** Whether "taking" is noted durably before the creating transaction (a kill between them must know). */
    default boolean notesBeforeCreate() {
        return true;
    }

    /**
     * A creation that answered {@code succeeded: false}: the record there if it names this runner (a creation retried
     * on another endpoint after its answer was lost finds its own), else empty (another runner was quicker).
     */
    default Optional<Record> ownAfterRefusedCreate(ClusterView cluster, String self)
            throws IOException, InterruptedException, MigrateException {
        return cluster.record().filter(r -> r.value().holder().equals(self));
    }

    /** The delete of a record as the release and the take-over do it: comparing its revision. */
    default boolean delete(ClusterView cluster, Record record)
            throws IOException, InterruptedException, MigrateException {
        return cluster.delete(record);
    }

    /** Reads of the record at a run's start: patient when its note says it holds one (a 503 passes meanwhile). */
    default int startReads(Note start, RolloutPolicy policy) {
        return start instanceof Note.Holds ? policy.patientReads() : 1;
    }

    // ---------------------------------------------------------------------------------------------- rule 3, margin

    default List<String> margin(Self self, List<Member> members, Map<String, Optional<String>> reads, long bound) {
        List<String> problems = new java.util.ArrayList<>();
        problems.addAll(marginMemberCount(self, members));
        problems.addAll(marginLeader(self, members));
        problems.addAll(RolloutRules.marginAnswers(self, members));
        problems.addAll(RolloutRules.marginVoters(self, members));
        problems.addAll(marginErrors(self, members));
        problems.addAll(marginFollowers(self, members));
        problems.addAll(marginRaftLag(self, members, bound));
        problems.addAll(marginReads(self, members, reads));
        return problems;
    }

    default List<String> marginMemberCount(Self self, List<Member> members) {
        return RolloutRules.marginMemberCount(self, members);
    }

    default List<String> marginLeader(Self self, List<Member> members) {
        return RolloutRules.marginLeader(self, members);
    }

    default List<String> marginErrors(Self self, List<Member> members) {
        return RolloutRules.marginErrors(self, members);
    }

    default List<String> marginFollowers(Self self, List<Member> members) {
        return RolloutRules.marginFollowers(self, members);
    }

    default List<String> marginRaftLag(Self self, List<Member> members, long bound) {
        return RolloutRules.marginRaftLag(self, members, bound);
    }

    default List<String> marginReads(Self self, List<Member> members, Map<String, Optional<String>> reads) {
        return RolloutRules.marginReads(self, members, reads);
    }

    /** Where this member's leadership may go before it stops ({@link RolloutRules#handOver}). */
    default List<String> handOver(Self self, List<Member> members) {
        return RolloutRules.handOver(self, members);
    }

    // --------------------------------------------------------------------------------------------- rule 4, release

    /** Whether the record is released after the leg's quorum write (never before: the margin cannot see the leg). */
    default boolean releasesAfterQuorumWrite() {
        return true;
    }

    /**
     * How long a release is tried while this member is down: one try (its vote may be what the quorum lacks; it
     * serves, then tries again with its vote counted).
     */
    default Duration releaseWhileDown(RolloutPolicy policy) {
        return Duration.ZERO;
    }

    /** Whether a member down serves its data's line when a linearizable read failed (its vote may restore a quorum). */
    default boolean servesOnFailedRead() {
        return true;
    }

    /** Whether "no member answered" is waited out (it is transient: a leader change, a pod restarting). */
    default boolean waitsOutNoAnswer() {
        return true;
    }
}
