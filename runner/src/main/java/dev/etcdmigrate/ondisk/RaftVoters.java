package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;

/**
 * Who votes in the member's cluster, as raft itself records it, the same way for every etcd release: a base
 * configuration (the newest snapshot's raftpb.ConfState; 3.5+'s db meta/confState at its consistent index; or
 * none at all for a WAL kept from index 0), then every ConfChange entry after it up to the last hard state's
 * commit. etcd's membership stores (the v2 store before 3.5, the db's members bucket after) follow this; the
 * members bucket of data older than 3.5 may be stale (a restore leaves it), raft's configuration is not.
 *
 * <p>Empty where raft's records do not settle it (no base, a ConfChangeV2, a joint configuration, damage): the
 * caller then keeps to what it was told.
 */
public final class RaftVoters {

    /** The voters at raft index {@code index}, where that was read ({@code source}), and this member's own id. */
    public record Voters(Set<Long> ids, long index, String source, long self) {}

    /** A configuration raft recorded at an index. */
    record Base(long index, Set<Long> voters, String source) {}

    /** A conf change entry as raft applies it to the voters. */
    record Change(long index, int type, long node) {}

    private static final int ADD_NODE = 0;
    private static final int REMOVE_NODE = 1;
    private static final int UPDATE_NODE = 2;
    private static final int ADD_LEARNER = 3;

    private RaftVoters() {}

    /** Reads the data dir's raft records; empty where they do not settle the voters. Reads only. */
    public static Optional<Voters> read(Path dataDir, Optional<Path> walOption) throws IOException {
        Path member = dataDir.resolve("member");
        Path walDir = walOption.orElse(member.resolve("wal"));
        try {
            if (!DataRecords.hasWal(walDir)) return Optional.empty();
            List<Base> bases = new ArrayList<>();
            Optional<Path> snapshot = V2SnapshotReader.newestSnapshot(member);
            if (snapshot.isPresent()) {
                V2SnapshotReader.Metadata meta = V2SnapshotReader.metadata(snapshot.get());
                if (meta.joint()) return Optional.empty();
                bases.add(new Base(meta.index(), meta.voters(), "snapshot " + member.relativize(snapshot.get())));
            }
            Path db = member.resolve("snap").resolve("db");
            if (Files.isRegularFile(db)) backendBase(db).ifPresent(bases::add);
            // Only the entries after the newest base count: the segments before it are not read (every start with
            // steps asks this; reading every segment would be 4 x 64 MB at 250 MiB of data). Where that tail alone does
            // not settle it (no member id or commit in it), the whole WAL is read.
            long newest = bases.stream().mapToLong(Base::index).max().orElse(0);
            WalSummary wal = null;
            if (newest > 0) {
                try {
                    wal = WalRecords.readAfter(walDir, newest);
                } catch (DamagedFileException tailAlone) {
                    wal = null; // e.g. a hard state committing entries of an earlier segment: the whole WAL decides
                }
            }
            if (wal == null || wal.memberId().isEmpty() || wal.commit().isEmpty()) wal = WalRecords.read(walDir);
            if (wal.memberId().isEmpty()
                    || wal.commit().isEmpty()
                    || !wal.confChangesV2().isEmpty()) return Optional.empty();
            if (wal.firstSegmentIndex() == 0) bases.add(new Base(0, Set.of(), "the WAL from its start"));
            List<Change> changes = wal.confChanges().stream()
                    .map(c -> new Change(c.index(), c.type(), c.nodeId()))
                    .toList();
            long self = wal.memberId().getAsLong();
            return replay(bases, changes, wal.commit().getAsLong())
                    .map(v -> new Voters(v.ids(), v.index(), v.source(), self));
        } catch (DamagedFileException damaged) {
            return Optional.empty(); // the damage checks name it; this answers only where the records are whole
        }
    }

    /**
     * The voters after the newest base, with the conf changes after it that the commit index covers. Pure: the
     * rule table tests drive. {@code self} is 0 here.
     */
    static Optional<Voters> replay(List<Base> bases, List<Change> changes, long commit) {
        // a lambda of this class, which the AOT cache holds linked; Comparator.comparingLong's own is spun at first use
        Optional<Base> newest = bases.stream().max((a, b) -> Long.compare(a.index(), b.index()));
        if (newest.isEmpty()) return Optional.empty();
        Base base = newest.get();
        TreeSet<Long> voters = new TreeSet<>(base.voters());
        long index = base.index();
        for (Change c : changes) {
            if (c.index() <= base.index() || c.index() > commit) continue;
            switch (c.type()) {
                case ADD_NODE -> voters.add(c.node()); // also a learner's promotion
                case REMOVE_NODE -> voters.remove(c.node());
                case ADD_LEARNER -> voters.remove(c.node()); // raft demotes a voter named so; etcd never does
                case UPDATE_NODE -> {}
                default -> {
                    return Optional.empty();
                }
            }
            index = c.index();
        }
        if (voters.isEmpty()) return Optional.empty();
        return Optional.of(new Voters(Set.copyOf(voters), index, base.source(), 0));
    }

    /** 3.5+: meta/confState (raftpb.ConfState as JSON) as of meta/consistent_index, written together. */
    private static Optional<Base> backendBase(Path db) throws IOException {
        try (BboltFile file = BboltFile.open(db)) {
            Optional<byte[]> state = file.value("meta", "confState");
            OptionalLong at = DbRead.consistentIndex(file);
            if (state.isEmpty() || at.isEmpty()) return Optional.empty();
            EtcdJson.Node conf = EtcdJson.parse(db, "bucket meta, key confState", state.get());
            if (conf.path("voters_outgoing").size() > 0) return Optional.empty();
            Set<Long> voters = new TreeSet<>();
            for (EtcdJson.Node v : conf.path("voters")) voters.add(v.asLong());
            return Optional.of(new Base(at.getAsLong(), voters, "member/snap/db meta/confState"));
        }
    }
}
