package dev.etcdmigrate.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.etcd.client.ClusterIdentities.Identity;
import dev.etcdmigrate.etcd.client.ClusterIdentities.Listed;
import dev.etcdmigrate.etcd.client.ClusterIdentities.MemberList;
import dev.etcdmigrate.restore.RestoreIdentity;
import dev.etcdmigrate.status.StatusReport.RestoreMember;
import dev.etcdmigrate.status.StatusReport.RestoreRow;
import dev.etcdmigrate.status.StatusReport.RestoreState;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Which members serve a snapshot's restore, from scripted answers: the restored cluster's IDs are etcd's (what
 * etcdutl 3.7.3 wrote for these peer URLs and this snapshot, RestoreIdentityTest), the old cluster's made up.
 */
class RestoreStatusTest {

    private static final String SHA = "0123456789abcdef" + "0".repeat(48);
    private static final String OTHER_SHA = "fedcba9876543210" + "0".repeat(48);
    private static final long RESTORED = Long.parseUnsignedLong("cd8be8eb4cb14057", 16);
    private static final long OLD = 0xaaaaL;
    private static final List<String> NAMES = List.of("m0", "m1", "m2");

    private static String peer(int i) {
        return "https://10.0.0." + (i + 1) + ":2380";
    }

    private static String client(int i) {
        return "https://10.0.0." + (i + 1) + ":2379";
    }

    private static long restoredId(int i, String sha) {
        return RestoreIdentity.memberId(List.of(peer(i)), RestoreIdentity.token(sha));
    }

    /** The restored cluster's list: members that did not start in it yet have no client URL. */
    private static MemberList restoredList(String sha, long clusterId, int... started) {
        List<Listed> members = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            boolean up = false;
            for (int s : started) up |= s == i;
            members.add(new Listed(
                    restoredId(i, sha), NAMES.get(i), List.of(peer(i)), up ? List.of(client(i)) : List.of()));
        }
        return new MemberList(clusterId, members);
    }

    private static MemberList oldList() {
        List<Listed> members = new ArrayList<>();
        for (int i = 0; i < 3; i++) members.add(new Listed(i + 1, NAMES.get(i), List.of(peer(i)), List.of(client(i))));
        return new MemberList(OLD, members);
    }

    private static ClusterAnswers.Probe restoredAnswer(int i) {
        return new ClusterAnswers.Probe(client(i), Optional.of(new Identity(RESTORED, restoredId(i, SHA))), "");
    }

    private static ClusterAnswers.Probe oldAnswer(int i) {
        return new ClusterAnswers.Probe(client(i), Optional.of(new Identity(OLD, i + 1)), "");
    }

    private static ClusterAnswers.Probe noAnswer(int i) {
        return new ClusterAnswers.Probe(client(i), Optional.empty(), "connection refused");
    }

    private static List<RestoreState> states(RestoreRow row) {
        return row.members().stream().map(RestoreMember::state).toList();
    }

    @Test
    void twoRestoredAndOneOnItsOldDataIsNotPartOfTheCluster() {
        RestoreRow row = RestoreStatus.judge(
                SHA,
                List.of(restoredAnswer(0), restoredAnswer(1), oldAnswer(2)),
                List.of(restoredList(SHA, RESTORED, 0, 1), oldList()));
        assertEquals(List.of(RestoreState.RESTORED, RestoreState.RESTORED, RestoreState.NOT_RESTORED), states(row));
        assertEquals(2, row.restored());
        assertEquals("cd8be8eb4cb14057", row.clusterId());
        assertEquals("etcd-restore-0123456789abcdef", row.token());
        RestoreMember stale = row.members().get(2);
        assertEquals("m2", stale.name());
        assertEquals(Optional.of("aaaa"), stale.answeredCluster());
        assertEquals(Optional.of("3"), stale.answeredMember());
        assertEquals(RestoreIdentity.hex(restoredId(2, SHA)), stale.memberId(), "the ID its restore will give it");
    }

    @Test
    void beforeAnyMemberIsRestoredTheClusterIdIsEtcdsAsTheRestoreWillWriteIt() {
        RestoreRow row =
                RestoreStatus.judge(SHA, List.of(oldAnswer(0), oldAnswer(1), oldAnswer(2)), List.of(oldList()));
        assertEquals(
                List.of(RestoreState.NOT_RESTORED, RestoreState.NOT_RESTORED, RestoreState.NOT_RESTORED), states(row));
        assertEquals(0, row.restored());
        assertEquals("cd8be8eb4cb14057", row.clusterId());
    }

    @Test
    void aMemberTheRestoredClusterNeverHeardFromIsNotRestored() {
        // its old cluster lost its quorum to the restore: an etcd without a quorum does not answer its client URL
        RestoreRow row = RestoreStatus.judge(
                SHA,
                List.of(restoredAnswer(0), restoredAnswer(1), noAnswer(2)),
                List.of(restoredList(SHA, RESTORED, 0, 1)));
        assertEquals(List.of(RestoreState.RESTORED, RestoreState.RESTORED, RestoreState.NOT_RESTORED), states(row));
        assertEquals(Optional.empty(), row.members().get(2).answeredCluster());
        assertEquals(1, row.others().size(), row.others().toString());
        assertTrue(row.others().getFirst().startsWith(client(2)), row.others().toString());
    }

    @Test
    void aMemberReplacedAfterTheRestoreCountsByTheIdItsClusterGaveIt() {
        // m2 removed and added again after the restore: etcd gives an added member an ID of its own
        long added = 0x77L;
        MemberList list = restoredList(SHA, RESTORED, 0, 1, 2);
        List<Listed> members = new ArrayList<>(list.members());
        Listed m2 = members.get(2);
        members.set(2, new Listed(added, m2.name(), m2.peerUrls(), m2.clientUrls()));
        RestoreRow row = RestoreStatus.judge(
                SHA,
                List.of(
                        restoredAnswer(0),
                        restoredAnswer(1),
                        new ClusterAnswers.Probe(client(2), Optional.of(new Identity(RESTORED, added)), "")),
                List.of(new MemberList(RESTORED, members)));
        assertEquals(List.of(RestoreState.RESTORED, RestoreState.RESTORED, RestoreState.RESTORED), states(row));
        assertEquals("77", row.members().get(2).memberId());
    }

    @Test
    void aMemberThatDoesNotAnswerIsNotCountedRestored() {
        RestoreRow row = RestoreStatus.judge(
                SHA,
                List.of(restoredAnswer(0), restoredAnswer(1), noAnswer(2)),
                List.of(restoredList(SHA, RESTORED, 0, 1, 2)));
        assertEquals(List.of(RestoreState.RESTORED, RestoreState.RESTORED, RestoreState.NOT_ANSWERING), states(row));
        assertTrue(
                row.members().get(2).detail().contains("connection refused"),
                row.members().get(2).detail());
    }

    @Test
    void aMemberRestoredFromAnotherSnapshotIsNotRestoredFromThisOne() {
        long otherCluster = 0xbbbbL;
        RestoreRow row = RestoreStatus.judge(
                SHA,
                List.of(
                        restoredAnswer(0),
                        restoredAnswer(1),
                        new ClusterAnswers.Probe(
                                client(2), Optional.of(new Identity(otherCluster, restoredId(2, OTHER_SHA))), "")),
                List.of(restoredList(SHA, RESTORED, 0, 1), restoredList(OTHER_SHA, otherCluster, 2)));
        assertEquals(List.of(RestoreState.RESTORED, RestoreState.RESTORED, RestoreState.NOT_RESTORED), states(row));
        assertEquals(Optional.of("bbbb"), row.members().get(2).answeredCluster());
    }

    @Test
    void theOtherSnapshotsRestoreSeesThisOnesMembersAsNotRestored() {
        long otherCluster = 0xbbbbL;
        RestoreRow row = RestoreStatus.judge(
                OTHER_SHA,
                List.of(
                        restoredAnswer(0),
                        new ClusterAnswers.Probe(
                                client(2), Optional.of(new Identity(otherCluster, restoredId(2, OTHER_SHA))), "")),
                List.of(restoredList(SHA, RESTORED, 0, 1), restoredList(OTHER_SHA, otherCluster, 2)));
        assertEquals(1, row.restored());
        assertEquals(RestoreState.RESTORED, row.members().get(2).state());
        assertEquals(RestoreState.NOT_RESTORED, row.members().get(0).state());
        assertEquals("bbbb", row.clusterId());
    }

    @Test
    void anUnfinishedRestoreKeepsTheClusterFromDone() {
        StatusReport done = new StatusReport(
                StatusReport.State.DONE,
                "done",
                List.of(client(0)),
                Optional.of("3.7"),
                Optional.of("3.7"),
                Optional.empty(),
                List.of(),
                Optional.empty(),
                Optional.empty());
        RestoreRow partial = RestoreStatus.judge(
                SHA,
                List.of(restoredAnswer(0), restoredAnswer(1), oldAnswer(2)),
                List.of(restoredList(SHA, RESTORED, 0, 1), oldList()));
        assertEquals(StatusReport.State.ROLLING, done.withRestore(partial).state());
        RestoreRow whole = RestoreStatus.judge(
                SHA,
                List.of(restoredAnswer(0), restoredAnswer(1), restoredAnswer(2)),
                List.of(restoredList(SHA, RESTORED, 0, 1, 2)));
        assertEquals(StatusReport.State.DONE, done.withRestore(whole).state());
        assertEquals(3, whole.restored());
        // no cluster with a quorum to answer: the members' own answers still say how far the restore got
        StatusReport unanswered = StatusReport.unanswered(List.of(client(0)), Optional.of("3.7"), "timed out")
                .withRestore(partial);
        assertEquals(StatusReport.State.ROLLING, unanswered.state());
        assertEquals(Optional.of(partial), unanswered.restore());
    }

    /**
     * Without the snapshot's hash, members answering for two clusters (a restore on some members only) are never
     * done: each answer keeps its cluster ID, the verdict names both clusters, and a stuck report stays stuck.
     */
    @Test
    void twoClustersAnsweringKeepTheClusterFromDoneWithoutTheHash() {
        StatusReport done = new StatusReport(
                StatusReport.State.DONE,
                "done",
                List.of(client(0)),
                Optional.of("3.4"),
                Optional.of("3.4"),
                Optional.empty(),
                List.of(),
                Optional.empty(),
                Optional.empty());
        ClusterAnswers.Reading read = new ClusterAnswers.Reading(
                List.of(restoredAnswer(0), restoredAnswer(1), oldAnswer(2)),
                List.of(restoredList(SHA, RESTORED, 0, 1), oldList()));
        StatusReport two = done.withAnswers(read.answers());
        assertEquals(StatusReport.State.ROLLING, two.state());
        assertEquals(List.of(Long.toHexString(RESTORED), Long.toHexString(OLD)), two.clusterIds());
        assertTrue(two.summary().contains("m2 on " + client(2)), two.summary());
        assertEquals(
                List.of(Long.toHexString(RESTORED), Long.toHexString(RESTORED), Long.toHexString(OLD)),
                two.answers().stream().map(StatusReport.Answer::clusterId).toList());
        assertEquals("m0", two.answers().getFirst().name());
        String json = StatusJson.render(two);
        assertTrue(
                json.contains("\"url\":\"" + client(2) + "\",\"name\":\"m2\",\"clusterId\":\"" + Long.toHexString(OLD)
                        + "\""),
                json);
        assertTrue(StatusText.render(two).contains("clusters answering: "), StatusText.render(two));

        // one cluster answering everywhere: done stays done, and each answer still carries its cluster ID
        ClusterAnswers.Reading whole = new ClusterAnswers.Reading(
                List.of(restoredAnswer(0), restoredAnswer(1), restoredAnswer(2)),
                List.of(restoredList(SHA, RESTORED, 0, 1, 2)));
        StatusReport one = done.withAnswers(whole.answers());
        assertEquals(StatusReport.State.DONE, one.state());
        assertEquals("done", one.summary());
        assertEquals(3, one.answers().size());

        StatusReport stuck = new StatusReport(
                        StatusReport.State.STUCK,
                        "stuck: the restart record is stale",
                        List.of(client(0)),
                        Optional.of("3.4"),
                        Optional.of("3.4"),
                        Optional.empty(),
                        List.of(),
                        Optional.empty(),
                        Optional.empty())
                .withAnswers(read.answers());
        assertEquals(StatusReport.State.STUCK, stuck.state());
        assertTrue(stuck.summary().startsWith("stuck: the restart record is stale; members of 2"), stuck.summary());
        assertEquals(ExitStatus.ROLLING.code(), StatusCommand.exitCode(two.state()));
    }
}
