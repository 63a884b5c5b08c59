package dev.etcdmigrate.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.cluster.ClusterView;
import dev.etcdmigrate.cluster.ClusterView.Member;
import dev.etcdmigrate.cluster.ClusterView.Status;
import dev.etcdmigrate.cluster.RecordValue;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.RefusedException;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Which line a member added with an empty data dir joins at, and when a learner has caught up. */
class ClusterLineJoinTest {

    private static final MinorLine V35 = new MinorLine(3, 5);
    private static final MinorLine V36 = new MinorLine(3, 6);
    private static final MinorLine V37 = new MinorLine(3, 7);

    @Test
    void aDowngradeJobsTargetIsTheLineWhileTheClusterVersionIsOneAbove() throws Exception {
        ClusterView cluster = cluster(
                List.of(
                        Member.down("m2", "it has not started yet"),
                        Member.up("m0", status("3.7.3", 100, 100, false, Optional.of(V36))),
                        Member.up("m1", status("3.6.16", 100, 100, false, Optional.empty()))),
                Optional.of(V37));
        ClusterLineJoin.ClusterLine line =
                ClusterLineJoin.clusterLine(cluster, "m2").orElseThrow();
        assertEquals(V36, line.line());
        assertTrue(line.why().contains("downgrade job"), line.why());
    }

    @Test
    void aDowngradeJobWhoseTargetTheClusterVersionReachedAdmitsNoMemberAndIsRefused() {
        // etcd's join check: with a job enabled only a member one minor below the cluster version is taken, and the
        // leader lowers the cluster version to the job's target as soon as the job is enabled
        ClusterView cluster =
                cluster(List.of(Member.up("m0", status("3.7.3", 100, 100, false, Optional.of(V36)))), Optional.of(V36));
        RefusedException refused =
                assertThrows(RefusedException.class, () -> ClusterLineJoin.clusterLine(cluster, "m2"));
        assertTrue(refused.getMessage().contains("downgrade cancel"), refused.getMessage());
        assertEquals(ExitStatus.REFUSED, refused.status()); // refused before anything is touched
    }

    @Test
    void withoutAJobTheClusterVersionIsTheLine() throws Exception {
        ClusterView cluster = cluster(
                List.of(Member.up("m0", status("3.6.16", 100, 100, false, Optional.empty()))), Optional.of(V35));
        assertEquals(
                V35, ClusterLineJoin.clusterLine(cluster, "m2").orElseThrow().line());
    }

    @Test
    void theMembersOwnAnswerDoesNotCount() throws Exception {
        // a job only this member reports (its own etcd, not the cluster's) is no job of the others
        ClusterView cluster = cluster(
                List.of(Member.up("m2", status("3.6.16", 100, 100, false, Optional.of(V35)))), Optional.of(V36));
        assertEquals(
                V36, ClusterLineJoin.clusterLine(cluster, "m2").orElseThrow().line());
    }

    @Test
    void noMemberAnsweringIsNoLine() throws Exception {
        assertEquals(Optional.empty(), ClusterLineJoin.clusterLine(cluster(null, Optional.empty()), "m2"));
    }

    @Test
    void aLearnerCaughtUpOnceItAppliedTheLeadersCommitIndex() {
        List<Member> members = List.of(
                Member.up("m0", status("3.6.16", 120, 120, true, Optional.empty())),
                Member.up("m2", status("3.6.16", 119, 90, false, Optional.empty())));
        assertEquals(Optional.of(120L), ClusterLineJoin.leaderCommit(members));
        Member learner =
                new Member("m2", 2, true, Optional.of(status("3.6.16", 119, 119, false, Optional.empty())), "");
        assertTrue(ClusterLineJoin.learnerBehind(learner, 120).isPresent(), "applied 119 of 120");
        assertTrue(ClusterLineJoin.learnerBehind(learner, -1).isPresent(), "the leader's index not read yet");
        Member caughtUp =
                new Member("m2", 2, true, Optional.of(status("3.6.16", 125, 120, false, Optional.empty())), "");
        assertEquals(Optional.empty(), ClusterLineJoin.learnerBehind(caughtUp, 120));
        assertTrue(
                ClusterLineJoin.learnerBehind(Member.down("m2", 2, true, "no answer"), 120)
                        .isPresent(),
                "a learner that does not answer");
    }

    private static Status status(
            String server, long commit, long applied, boolean leader, Optional<MinorLine> downgradeTarget) {
        long id = leader ? 1 : 3;
        return new Status(
                EtcdVersion.parse(server),
                id,
                1,
                2,
                commit,
                applied,
                false,
                List.of(),
                0,
                Optional.empty(),
                downgradeTarget);
    }

    /** {@code members} null: no member answers. */
    private static ClusterView cluster(List<Member> members, Optional<MinorLine> version) {
        return new ClusterView() {
            @Override
            public List<Member> members() throws IOException {
                if (members == null) throw new IOException("no member answers");
                return members;
            }

            @Override
            public Optional<MinorLine> clusterVersion() throws IOException {
                if (members == null) throw new IOException("no member answers");
                return version;
            }

            @Override
            public Optional<Record> record() {
                throw new UnsupportedOperationException();
            }

            @Override
            public Optional<Record> create(RecordValue value) {
                throw new UnsupportedOperationException();
            }

            @Override
            public boolean delete(Record record) {
                throw new UnsupportedOperationException();
            }

            @Override
            public boolean holds(Record record) {
                throw new UnsupportedOperationException();
            }

            @Override
            public Optional<Status> statusAt(String member, List<String> urls) {
                throw new UnsupportedOperationException();
            }

            @Override
            public Optional<String> linearizableThrough(String member) {
                throw new UnsupportedOperationException();
            }

            @Override
            public void moveLeader(String to) {
                throw new UnsupportedOperationException();
            }
        };
    }
}
