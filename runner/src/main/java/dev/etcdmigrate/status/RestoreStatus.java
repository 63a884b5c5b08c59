package dev.etcdmigrate.status;

import dev.etcdmigrate.etcd.client.ClusterIdentities.Identity;
import dev.etcdmigrate.etcd.client.ClusterIdentities.Listed;
import dev.etcdmigrate.etcd.client.ClusterIdentities.MemberList;
import dev.etcdmigrate.restore.RestoreIdentity;
import dev.etcdmigrate.status.ClusterAnswers.Probe;
import dev.etcdmigrate.status.StatusReport.RestoreMember;
import dev.etcdmigrate.status.StatusReport.RestoreRow;
import dev.etcdmigrate.status.StatusReport.RestoreState;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which members serve the cluster restored from one snapshot (docs/restore.md). etcd does not report the token a
 * cluster was bootstrapped with, but a restore writes every member's ID from its peer URLs and the token alone, and
 * the cluster ID from those IDs ({@link RestoreIdentity}): a member list holding such an ID is the snapshot's
 * restore, and every client URL says in its answer's header which cluster and member it is. A member still on the
 * data before the restore answers with its old cluster's ID and is shown as not restored, never as part of the
 * restored cluster.
 */
public final class RestoreStatus {

    /** The verdict, and the client URLs that serve the restored cluster (ask them first). */
    public record Reading(RestoreRow row, List<URI> restoredUrls) {}

    private RestoreStatus() {}

    /** Judges what every client URL answered ({@link ClusterAnswers#read}) against the snapshot {@code sha256}. */
    public static Reading read(ClusterAnswers.Reading answered, String sha256) {
        RestoreRow row = judge(sha256, answered.probes(), answered.lists());
        List<URI> restoredUrls = row.members().stream()
                .filter(m -> m.state() == RestoreState.RESTORED)
                .flatMap(m -> m.url().stream())
                .map(URI::create)
                .toList();
        return new Reading(row, restoredUrls);
    }

    /** The pure half of {@link #read}: the verdict per member from what the client URLs and member lists said. */
    static RestoreRow judge(String sha256, List<Probe> probes, List<MemberList> lists) {
        String token = RestoreIdentity.token(sha256);
        // the cluster this snapshot's restore made: a member with the ID the restore gives is in no other cluster
        // (its token is the snapshot's), and one is enough, since members added later carry IDs of their own
        Optional<MemberList> restored = lists.stream()
                .filter(l ->
                        l.members().stream().anyMatch(m -> m.id() == RestoreIdentity.memberId(m.peerUrls(), token)))
                .findFirst();
        // the restored cluster's own list where one answers; else every peer URL set the other clusters list (a
        // restore keeps the members' peer URLs), so the verdict is there before the first member is restored
        Map<Set<String>, Listed> members = new LinkedHashMap<>();
        for (MemberList list : restored.map(List::of).orElse(lists)) {
            for (Listed m : list.members()) {
                members.merge(new TreeSet<>(m.peerUrls()), m, (a, b) -> a.name().isEmpty() ? b : a);
            }
        }
        // each member's ID in the restored cluster: as its list gives it, else as the restore will write it
        Map<Set<String>, Long> ids = new LinkedHashMap<>();
        members.forEach(
                (peers, m) -> ids.put(peers, restored.isPresent() ? m.id() : RestoreIdentity.memberId(peers, token)));
        long clusterId = restored.map(MemberList::clusterId).orElse(RestoreIdentity.clusterId(ids.values()));

        List<RestoreMember> rows = new ArrayList<>();
        Set<String> attributed = new LinkedHashSet<>();
        int count = 0;
        for (Map.Entry<Set<String>, Listed> member : members.entrySet()) {
            Set<String> peers = member.getKey();
            long id = ids.get(peers);
            String name = member.getValue().name();
            if (name.isEmpty()) name = named(peers, lists).orElse("(unnamed " + RestoreIdentity.hex(id) + ")");
            // a member of a restored cluster that answers publishes its client URLs through it once it started
            boolean neverStarted =
                    restored.isPresent() && member.getValue().clientUrls().isEmpty();
            RestoreMember row = verdict(name, peers, id, clusterId, neverStarted, probes, lists);
            if (row.state() == RestoreState.RESTORED) count++;
            row.url().ifPresent(attributed::add);
            rows.add(row);
        }
        List<String> others = probes.stream()
                .filter(p -> !attributed.contains(p.url()))
                .filter(p -> p.identity().map(i -> i.clusterId() != clusterId).orElse(true))
                .map(p -> p.identity()
                        .map(i -> p.url() + " answers for cluster " + RestoreIdentity.hex(i.clusterId()) + " as member "
                                + RestoreIdentity.hex(i.memberId()))
                        .orElse(p.url() + " does not answer (" + p.problem() + ")"))
                .toList();
        return new RestoreRow(sha256, token, RestoreIdentity.hex(clusterId), count, List.copyOf(rows), others);
    }

    private static RestoreMember verdict(
            String name,
            Set<String> peers,
            long id,
            long clusterId,
            boolean neverStarted,
            List<Probe> probes,
            List<MemberList> lists) {
        String hexId = RestoreIdentity.hex(id);
        for (Probe p : probes) {
            Optional<Identity> i = p.identity();
            if (i.isPresent() && i.get().memberId() == id && i.get().clusterId() == clusterId) {
                return new RestoreMember(
                        name,
                        RestoreState.RESTORED,
                        hexId,
                        Optional.of(p.url()),
                        Optional.of(RestoreIdentity.hex(clusterId)),
                        Optional.of(hexId),
                        "serves the restored cluster on " + p.url());
            }
        }
        // the same peer URLs in another cluster's list: that member's ID there, and its client URLs
        Set<String> urls = new LinkedHashSet<>();
        Set<Identity> elsewhere = new LinkedHashSet<>();
        for (MemberList list : lists) {
            for (Listed m : list.members()) {
                if (!new TreeSet<>(m.peerUrls()).equals(peers)) continue;
                urls.addAll(m.clientUrls());
                if (list.clusterId() != clusterId) elsewhere.add(new Identity(list.clusterId(), m.id()));
            }
        }
        for (Probe p : probes) {
            Optional<Identity> i = p.identity();
            if (i.isEmpty() || i.get().clusterId() == clusterId) continue;
            if (elsewhere.contains(i.get()) || urls.contains(p.url())) {
                String cluster = RestoreIdentity.hex(i.get().clusterId());
                return new RestoreMember(
                        name,
                        RestoreState.NOT_RESTORED,
                        hexId,
                        Optional.of(p.url()),
                        Optional.of(cluster),
                        Optional.of(RestoreIdentity.hex(i.get().memberId())),
                        "answers on " + p.url() + " for cluster " + cluster + ", not the restored cluster: its data"
                                + " from before the restore, or another snapshot's restore");
            }
        }
        List<String> problems = probes.stream()
                .filter(p -> urls.contains(p.url()) && p.identity().isEmpty())
                .map(p -> p.url() + ": " + p.problem())
                .toList();
        Optional<String> problemUrl = problems.isEmpty()
                ? Optional.empty()
                : Optional.of(urls.iterator().next());
        if (neverStarted) {
            return new RestoreMember(
                    name,
                    RestoreState.NOT_RESTORED,
                    hexId,
                    problemUrl,
                    Optional.empty(),
                    Optional.empty(),
                    "the restored cluster lists no client URL of it, so it never started on the restored data"
                            + " (still on its old data, its restore not done yet, or down)");
        }
        return new RestoreMember(
                name,
                RestoreState.NOT_ANSWERING,
                hexId,
                problemUrl,
                Optional.empty(),
                Optional.empty(),
                problems.isEmpty()
                        ? "no client URL answers for it (no cluster lists one it serves on)"
                        : "does not answer: " + String.join("; ", problems));
    }

    private static Optional<String> named(Set<String> peers, List<MemberList> lists) {
        return lists.stream()
                .flatMap(l -> l.members().stream())
                .filter(m -> !m.name().isEmpty() && new TreeSet<>(m.peerUrls()).equals(peers))
                .map(Listed::name)
                .findFirst();
    }
}
