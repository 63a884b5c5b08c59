package dev.etcdmigrate.status;

import dev.etcdmigrate.etcd.client.ClusterIdentities;
import dev.etcdmigrate.etcd.client.ClusterIdentities.Identity;
import dev.etcdmigrate.etcd.client.ClusterIdentities.Listed;
import dev.etcdmigrate.etcd.client.ClusterIdentities.MemberList;
import dev.etcdmigrate.restore.RestoreIdentity;
import dev.etcdmigrate.status.StatusReport.Answer;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Which cluster every client URL answers for, each asked on its own: the URLs given and every client URL a member list
 * names (of every cluster that answers), once each. Members with different cluster IDs answer side by side when a
 * restore from a snapshot is on some members only, or when the endpoints name members of two clusters: the cluster
 * view of {@code status} (the first member that answers) would show one of them as if it were all.
 */
public final class ClusterAnswers {

    /** What a client URL answered: who it is, or why nothing ({@code problem}). */
    public record Probe(String url, Optional<Identity> identity, String problem) {}

    /** The probes in the order asked, and the member list of every cluster that gave one. */
    public record Reading(List<Probe> probes, List<MemberList> lists) {

        /** Every URL that answered, with its cluster and member ID and the name its cluster's list gives it. */
        public List<Answer> answers() {
            List<Answer> answers = new ArrayList<>();
            for (Probe p : probes) {
                if (p.identity().isEmpty()) continue;
                Identity i = p.identity().get();
                String name = lists.stream()
                        .filter(l -> l.clusterId() == i.clusterId())
                        .flatMap(l -> l.members().stream())
                        .filter(m -> m.id() == i.memberId())
                        .map(Listed::name)
                        .findFirst()
                        .orElse("");
                answers.add(new Answer(
                        p.url(), name, RestoreIdentity.hex(i.clusterId()), RestoreIdentity.hex(i.memberId())));
            }
            return List.copyOf(answers);
        }
    }

    private ClusterAnswers() {}

    public static Reading read(ClusterIdentities clusters, List<URI> endpoints) throws InterruptedException {
        Deque<String> queue = new ArrayDeque<>();
        endpoints.forEach(u -> queue.add(u.toString()));
        Set<String> asked = new LinkedHashSet<>();
        List<Probe> probes = new ArrayList<>();
        Map<Long, MemberList> lists = new LinkedHashMap<>();
        while (!queue.isEmpty()) {
            String url = queue.poll();
            if (!asked.add(url)) continue;
            Identity identity;
            try {
                identity = clusters.identify(URI.create(url));
            } catch (IOException | IllegalArgumentException e) {
                probes.add(new Probe(url, Optional.empty(), e.getMessage()));
                continue;
            }
            probes.add(new Probe(url, Optional.of(identity), ""));
            if (lists.containsKey(identity.clusterId())) continue;
            try {
                MemberList list = clusters.members(URI.create(url));
                lists.put(identity.clusterId(), list);
                list.members().forEach(m -> queue.addAll(m.clientUrls()));
            } catch (IOException e) {
                // a cluster without a quorum may not list its members: its member's identity is still an answer
            }
        }
        return new Reading(List.copyOf(probes), List.copyOf(lists.values()));
    }
}
