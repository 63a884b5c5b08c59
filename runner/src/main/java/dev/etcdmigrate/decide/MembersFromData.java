package dev.etcdmigrate.decide;

import dev.etcdmigrate.config.Peers;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.DataRecords;
import dev.etcdmigrate.ondisk.Member;
import dev.etcdmigrate.ondisk.RaftVoters;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A member whose --initial-cluster names only itself, on data whose raft records name more voters, is one
 * member of that cluster: kubeadm init writes such a flag on the first control-plane node and never rewrites it
 * as the others join, and etcd ignores the flag once data exists. Taken for a lone member, its loopback-only
 * private etcd would wait for a quorum it cannot reach. The count comes from raft's configuration
 * ({@link RaftVoters}); the other voters' names and peer URLs from the membership records.
 */
public final class MembersFromData {

    private MembersFromData() {}

    /**
     * The options to plan and run with: {@code options} itself unless the flag names one member, the data has
     * steps ahead of it (a restart at the target reads nothing more), and raft's records name this member among
     * two or more voters whose peer URLs the data records.
     */
    public static RunConfig resolve(RunConfig options, Log log) {
        if (!(options.topology() instanceof Topology.Single single)
                || !Files.isDirectory(options.dataDir().resolve("member"))) return options;
        try {
            if (new DataDir(options.dataDir()).readVersion().equals(Optional.of(options.target()))) return options;
            Optional<RaftVoters.Voters> read = RaftVoters.read(options.dataDir(), options.walDir());
            if (read.isEmpty()) return options;
            RaftVoters.Voters voters = read.get();
            if (voters.ids().size() < 2 || !voters.ids().contains(voters.self())) return options;
            Optional<String> members =
                    initialCluster(options, voters, DataRecords.read(options.dataDir(), options.walDir(), true));
            if (members.isEmpty()) {
                log.emit(new Event.Note(
                        Event.Level.WARN,
                        "the data records " + voters.ids().size() + " voting members (" + voters.source()
                                + ") but not every one's peer URLs; planning as --initial-cluster says (one member)"));
                return options;
            }
            Peers peers = single.peers().withInitialCluster(members.get());
            RunConfig resolved = options.withTopology(Topology.of(
                    peers,
                    Topology.PeerTls.of(options.etcd(), options.creds()),
                    Topology.ClientTls.of(options.etcd())));
            log.emit(new DecisionEvent.MembersFromData(peers.count(), members.get(), voters.source(), voters.index()));
            return resolved;
        } catch (IOException | RuntimeException | dev.etcdmigrate.error.MigrateException unreadable) {
            return options; // the checks that read the same files report what is wrong with them
        }
    }

    /**
     * This member as the flags name it, then every other voter as {@code name=peerURL} (one entry per URL, as
     * etcd writes the flag); a voter without a recorded name goes by its id. Empty when a voter's URLs are unknown.
     */
    static Optional<String> initialCluster(RunConfig options, RaftVoters.Voters voters, DataRecords records) {
        // the membership stores in the order they are authoritative for a member's URLs: 3.5+'s db, the v2 store
        // in the snapshot, the conf changes' members
        Map<String, Member> known = new LinkedHashMap<>();
        List<List<Member>> sources = new ArrayList<>();
        sources.add(records.db().members());
        records.snapshot().ifPresent(s -> sources.add(s.members()));
        records.wal().ifPresent(w -> sources.add(w.members()));
        for (List<Member> source : sources) {
            for (Member m : source) {
                Member had = known.get(m.id());
                if (had == null || had.peerUrls().isEmpty()) known.put(m.id(), m);
                else if (had.name().isEmpty() && !m.name().isEmpty())
                    known.put(m.id(), new Member(m.id(), m.name(), had.peerUrls(), had.learner()));
            }
        }
        List<String> entries = new ArrayList<>();
        for (String url : options.topology().peers().advertisePeerUrls().split(","))
            entries.add(options.name() + "=" + url.trim());
        Set<String> names = new HashSet<>(Set.of(options.name()));
        for (long id : voters.ids().stream().sorted().toList()) {
            if (id == voters.self()) continue;
            Member m = known.get(Long.toHexString(id));
            if (m == null || m.peerUrls().isEmpty()) return Optional.empty();
            String name = m.name().isEmpty() || !names.add(m.name()) ? Long.toHexString(id) : m.name();
            names.add(name);
            for (String url : m.peerUrls()) entries.add(name + "=" + url);
        }
        return Optional.of(String.join(",", entries));
    }
}
