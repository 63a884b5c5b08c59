package dev.etcdmigrate.config;

import dev.etcdmigrate.error.UsageException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * This member's view of its cluster as --initial-cluster names it (canonical: comma-separated, blanks dropped) or,
 * on kubeadm's first node, as the data's raft records name it ({@code run/MembersFromData}). The one place the
 * flag's {@code name=URL,...} text is taken apart.
 *
 * @param name this member's name
 * @param initialCluster every member as {@code name=peerURL}, one entry per URL, as etcd writes the flag
 * @param advertisePeerUrls this member's advertised peer URLs, comma-joined
 * @param listenPeerUrls where a cluster member's private etcd listens for its peers, comma-joined
 */
public record Peers(String name, String initialCluster, String advertisePeerUrls, String listenPeerUrls) {

    /** How many members the list names: two or more make this data dir one member of a cluster. */
    public int count() {
        return (int) Arrays.stream(initialCluster.split(","))
                .map(e -> e.split("=", 2)[0].trim())
                .filter(n -> !n.isEmpty())
                .distinct()
                .count();
    }

    /** The other members' peer URLs, as the list gives them. */
    public List<String> otherPeerUrls() {
        List<String> urls = new ArrayList<>();
        for (String entry : initialCluster.split(",")) {
            int eq = entry.indexOf('=');
            if (eq < 0 || entry.substring(0, eq).trim().equals(name)) continue;
            urls.add(entry.substring(eq + 1).trim());
        }
        return urls;
    }

    /** The same member with the cluster's members as the data records them; its own URLs unchanged. */
    public Peers withInitialCluster(String members) {
        return new Peers(name, members, advertisePeerUrls, listenPeerUrls);
    }

    /** The peer URLs that {@code initialCluster} gives {@code name} (it may list it more than once), comma-joined. */
    public static String peerUrlOf(String name, String initialCluster) throws UsageException {
        List<String> urls = new ArrayList<>();
        for (String entry : initialCluster.split(",")) {
            int eq = entry.indexOf('=');
            if (eq > 0 && entry.substring(0, eq).trim().equals(name)) {
                urls.add(entry.substring(eq + 1).trim());
            }
        }
        if (!urls.isEmpty()) {
            return String.join(",", urls);
        }
        throw new UsageException("member '" + name + "' is not in the initial cluster '" + initialCluster
                + "'; set --initial-advertise-peer-urls or fix --name / INITIAL_CLUSTER");
    }
}
