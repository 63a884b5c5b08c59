package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;

/** The newest snapshot's /0: its raft index (from its name), /0/version, members; the keys outside /0 when counted. */
public record SnapshotRead(
        Path file,
        long index,
        Optional<String> clusterVersion,
        List<Member> members,
        long keysOutside,
        Optional<String> failure) {

    /** The snapshot's /0 (cluster version, members); with {@code outside}, also counts the keys outside /0 (a whole read). */
    static SnapshotRead read(Path file, boolean outside, List<Damage> damage, Path dataDir) throws IOException {
        long index = WalIndex.snapshotIndex(file);
        String[] version = {null};
        TreeMap<String, Member> members = new TreeMap<>();
        long[] keysOutside = {0};
        try {
            V2SnapshotReader.readMembership(file, key -> {
                String k = key.key();
                if (k.equals("/0/version")) {
                    version[0] = key.value();
                } else if (k.startsWith("/0/members/")
                        && (k.endsWith("/raftAttributes") || k.endsWith("/attributes"))) {
                    String id = k.substring("/0/members/".length(), k.lastIndexOf('/'));
                    EtcdJson.Node v = EtcdJson.parse(
                            file, "v2 store key " + k, key.value().getBytes(StandardCharsets.UTF_8));
                    Member old = members.getOrDefault(id, new Member(id, "", List.of(), false));
                    if (k.endsWith("/raftAttributes")) {
                        List<String> peers = new ArrayList<>();
                        v.path("peerURLs").forEach(u -> peers.add(u.asText()));
                        if (old.peerUrls().isEmpty())
                            old = new Member(
                                    id,
                                    old.name(),
                                    List.copyOf(peers),
                                    v.path("isLearner").asBoolean(false));
                    } else if (old.name().isEmpty()) {
                        old = new Member(id, v.path("name").asText(""), old.peerUrls(), old.learner());
                    }
                    members.put(id, old);
                }
            });
            if (outside) {
                V2SnapshotReader.readOutsideMembership(file, key -> {
                    if (!key.key().equals("/1" + V2Key.PROBE)) keysOutside[0]++;
                });
            }
        } catch (DamagedFileException e) {
            Damage d = e.damage().relativeTo(dataDir);
            damage.add(d);
            return new SnapshotRead(
                    file,
                    index,
                    Optional.empty(),
                    List.of(),
                    0,
                    Optional.of("damaged: " + d.where() + ": " + d.expected()));
        } catch (IOException e) {
            return new SnapshotRead(
                    file, index, Optional.empty(), List.of(), 0, Optional.of("unreadable (" + e.getMessage() + ")"));
        }
        return new SnapshotRead(
                file,
                index,
                Optional.ofNullable(version[0]),
                List.copyOf(members.values()),
                keysOutside[0],
                Optional.empty());
    }
}
