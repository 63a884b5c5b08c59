package dev.etcdmigrate.etcd.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Which cluster an etcd on a client URL belongs to, as etcd says it in every response header (the cluster ID and the
 * answering member's ID), and the member list that cluster keeps (IDs, names, peer and client URLs). Unlike
 * {@link ClusterClient}, which takes the first member that answers as "the cluster", each URL is asked on its own:
 * members of two clusters (one restored from a snapshot, one still on the data before it) answer side by side.
 */
public final class ClusterIdentities {

    private static final Duration TIMEOUT = Duration.ofSeconds(3);
    /** The JSON gateway's prefix of 3.3 (also served by 3.4). */
    private static final String OLDER_PREFIX = "/v3beta";

    private final GatewayTransport gateway;
    private final String prefix;

    /** @param prefix the JSON gateway's prefix of the line the cluster runs (catalog: line.jsonGateway) */
    public ClusterIdentities(HttpClient http, String prefix) {
        this(http, prefix, TIMEOUT);
    }

    /** @param timeout each request's, connecting included */
    public ClusterIdentities(HttpClient http, String prefix, Duration timeout) {
        this.gateway = new GatewayTransport(http, timeout);
        this.prefix = prefix;
    }

    /** Who answered on a client URL: its cluster's ID and its own member ID (etcd's uint64s). */
    public record Identity(long clusterId, long memberId) {}

    /** One member as its cluster lists it; {@code name} and {@code clientUrls} are empty until it first started. */
    public record Listed(long id, String name, List<String> peerUrls, List<String> clientUrls) {}

    /** A cluster's member list and the cluster ID of the member that gave it. */
    public record MemberList(long clusterId, List<Listed> members) {}

    /** Maintenance/Status on {@code url}: the header says which cluster and which member answered. */
    public Identity identify(URI url) throws IOException, InterruptedException {
        JsonNode header = post(url, "/maintenance/status").path("header");
        return new Identity(id(header, "cluster_id"), id(header, "member_id"));
    }

    /** The member list of the cluster that answers on {@code url}. */
    public MemberList members(URI url) throws IOException, InterruptedException {
        JsonNode list = post(url, "/cluster/member/list");
        List<Listed> members = new ArrayList<>();
        for (JsonNode m : list.path("members")) {
            members.add(new Listed(
                    Long.parseUnsignedLong(m.path("ID").asText("0")),
                    m.path("name").asText(""),
                    strings(m.path("peerURLs")),
                    strings(m.path("clientURLs"))));
        }
        return new MemberList(id(list.path("header"), "cluster_id"), List.copyOf(members));
    }

    private JsonNode post(URI url, String path) throws IOException, InterruptedException {
        try {
            return gateway.post(url.resolve(prefix + path), "{}");
        } catch (GatewayTransport.NotFound e) {
            // a member of an older line serves the older prefix only: asked so its cluster can be told
            return gateway.post(url.resolve(OLDER_PREFIX + path), "{}");
        }
    }

    /** The gateway writes etcd's uint64 IDs as decimal strings. */
    private static long id(JsonNode header, String field) throws IOException {
        String text = header.path(field).asText("");
        try {
            return Long.parseUnsignedLong(text);
        } catch (NumberFormatException e) {
            throw new IOException("the answer's header has no " + field + " (" + header + ")");
        }
    }

    private static List<String> strings(JsonNode array) {
        List<String> values = new ArrayList<>();
        array.forEach(v -> values.add(v.asText()));
        return List.copyOf(values);
    }
}
