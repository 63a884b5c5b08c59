package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;

/** The WAL's records, or where reading it failed (then the summary is empty). */
public record WalRead(Optional<WalSummary> summary, List<Member> members, Optional<String> failure) {

    /** Reads the WAL dir: its summary and, for data without a db or snapshot, the members its conf changes add. */
    static WalRead read(Path wal, List<Damage> damage, Path dataDir) {
        WalSummary summary;
        try {
            summary = WalRecords.read(wal);
            // no db and no snapshot (2.x before its first snapshot): the members are the WAL's conf changes
            TreeMap<String, Member> members = new TreeMap<>();
            for (ConfChange c : summary.confChanges()) {
                String id = Long.toHexString(c.nodeId());
                if (c.type() == 1) {
                    members.remove(id);
                } else if (!c.context().isEmpty()) {
                    EtcdJson.Node m = EtcdJson.parse(
                            c.segment(),
                            "conf change at index " + c.index(),
                            c.context().getBytes(StandardCharsets.UTF_8));
                    List<String> peers = new ArrayList<>();
                    m.path("peerURLs").forEach(u -> peers.add(u.asText()));
                    members.put(id, new Member(id, m.path("name").asText(""), List.copyOf(peers), c.type() == 3));
                }
            }
            return new WalRead(Optional.of(summary), List.copyOf(members.values()), Optional.empty());
        } catch (DamagedFileException e) {
            Damage d = e.damage().relativeTo(dataDir);
            damage.add(d);
            return new WalRead(
                    Optional.empty(),
                    List.of(),
                    Optional.of("damaged: " + d.file() + " (" + d.where() + "): " + d.expected()));
        } catch (IOException e) {
            return new WalRead(Optional.empty(), List.of(), Optional.of("unreadable (" + e.getMessage() + ")"));
        }
    }
}
