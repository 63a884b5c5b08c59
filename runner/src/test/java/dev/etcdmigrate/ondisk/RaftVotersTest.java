package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.ondisk.RaftVoters.Base;
import dev.etcdmigrate.ondisk.RaftVoters.Change;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** raft's voters from a base configuration and the conf changes after it, as etcd's raft applies them. */
class RaftVotersTest {

    private static final Base FROM_START = new Base(0, Set.of(), "the WAL from its start");

    private static Optional<Set<Long>> voters(List<Base> bases, long commit, Change... changes) {
        return RaftVoters.replay(bases, List.of(changes), commit).map(RaftVoters.Voters::ids);
    }

    @Test
    void aClusterBootstrappedInItsWalCountsItsInitialMembers() {
        assertEquals(
                Optional.of(Set.of(1L, 2L, 3L)),
                voters(List.of(FROM_START), 9, new Change(1, 0, 1), new Change(2, 0, 2), new Change(3, 0, 3)));
    }

    @Test
    void theNewestBaseWinsAndChangesAtOrBeforeItAreInIt() {
        Base snapshot = new Base(100, Set.of(1L), "snapshot");
        Base db = new Base(200, Set.of(1L, 2L, 3L), "db");
        // the removal at 150 is already in the db's configuration at 200
        assertEquals(Optional.of(Set.of(1L, 2L, 3L)), voters(List.of(snapshot, db), 300, new Change(150, 1, 3)));
        assertEquals(Optional.of(Set.of(1L, 2L)), voters(List.of(snapshot, db), 300, new Change(250, 1, 3)));
    }

    @Test
    void onlyCommittedChangesCount() {
        Base snapshot = new Base(100, Set.of(1L), "snapshot");
        assertEquals(
                Optional.of(Set.of(1L, 2L)),
                voters(List.of(snapshot), 110, new Change(105, 0, 2), new Change(120, 0, 3)));
    }

    @Test
    void aLearnerVotesOnlyOncePromoted() {
        Base base = new Base(10, Set.of(1L, 2L), "snapshot");
        assertEquals(Optional.of(Set.of(1L, 2L)), voters(List.of(base), 20, new Change(11, 3, 4)));
        assertEquals(
                Optional.of(Set.of(1L, 2L, 4L)), voters(List.of(base), 20, new Change(11, 3, 4), new Change(12, 0, 4)));
        assertEquals(Optional.of(Set.of(1L, 2L)), voters(List.of(base), 20, new Change(11, 2, 2)), "update: no change");
    }

    @Test
    void whatRaftsRecordsDoNotSettleIsEmpty() {
        assertEquals(Optional.empty(), voters(List.of(), 10, new Change(1, 0, 1)), "no base");
        assertEquals(
                Optional.empty(),
                voters(List.of(new Base(5, Set.of(1L), "snapshot")), 10, new Change(6, 7, 2)),
                "an unknown change type");
        assertEquals(
                Optional.empty(),
                voters(List.of(new Base(5, Set.of(1L), "snapshot")), 10, new Change(6, 1, 1)),
                "no voter left");
    }
}
