package dev.etcdmigrate.etcd.client;

import static dev.etcdmigrate.etcd.client.GatewayTransport.b64;
import static dev.etcdmigrate.etcd.client.GatewayTransport.line;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.cluster.ClusterView;
import dev.etcdmigrate.cluster.RecordValue;
import dev.etcdmigrate.cluster.RolloutCoordinator;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.RefusedException;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.NoRouteToHostException;
import java.net.Socket;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The rollout's view of the cluster over etcd's JSON gateway on the members' client URLs (TLS from the
 * member's own files, see {@link PemTls}): the member list, each member's Maintenance/Status, the cluster
 * version, and the restart record, written only in transactions that compare its revision.
 */
public final class ClusterClient implements ClusterView {

    private static final Duration TIMEOUT = Duration.ofSeconds(3);
    private static final String KEY = b64(RolloutCoordinator.RECORD_KEY);

    private final GatewayTransport gateway;
    private final String prefix;
    /** Each request's time, connecting included. */
    private final Duration timeout;
    /**
     * The client URLs the member list named, asked first: the cluster tells them, nothing is guessed while it can.
     * Kept for the client's life (one per run), so a release while this member is down goes through every other
     * member.
     */
    private final Set<URI> listed = new LinkedHashSet<>();
    /** The URLs the runner was given (its own) and those derived from --initial-cluster before any list was read. */
    private final Set<URI> seeds = new LinkedHashSet<>();

    /** Each member's ID as the latest member list gave it, by name (an answer counts only from that ID). */
    private final Map<String, String> idsByName = new HashMap<>();

    /** Each member's first client URL as the latest member list gave it, by name (its own endpoint). */
    private final Map<String, URI> urlByName = new HashMap<>();

    private GatewayTransport peerApi;
    private List<URI> peers = List.of();

    /**
     * Where the member list is asked while no client URL is known to answer: the other members' peer URLs (etcd's
     * peer API serves GET /members with every member's client URLs), with the member's peer TLS files.
     */
    public ClusterClient askingPeers(HttpClient peerHttp, List<URI> peers) {
        this.peerApi = new GatewayTransport(peerHttp, TIMEOUT);
        this.peers = List.copyOf(peers);
        return this;
    }

    /** Learns the client URLs from a peer's GET /members; nothing when no peer answers (the seeds are tried then). */
    private void discover() throws InterruptedException {
        if (peerApi == null) return;
        for (URI peer : peers) {
            try {
                List<URI> urls = new ArrayList<>();
                for (JsonNode m : peerApi.get(peer.resolve("/members"))) {
                    for (JsonNode u : m.path("clientURLs")) urls.add(URI.create(u.asText()));
                }
                if (urls.isEmpty()) continue;
                synchronized (listed) {
                    listed.addAll(urls);
                }
                return;
            } catch (IOException | IllegalArgumentException notThisPeer) {
                // not 200, not JSON, no URL: the next peer
            }
        }
    }

    /** @param prefix the JSON gateway's prefix of the lines involved (catalog: line.jsonGateway) */
    public ClusterClient(HttpClient http, List<URI> seeds, String prefix) {
        this(http, seeds, prefix, TIMEOUT);
    }

    /** @param timeout each request's, connecting included (the runner's: 3 s) */
    public ClusterClient(HttpClient http, List<URI> seeds, String prefix, Duration timeout) {
        this.gateway = new GatewayTransport(http, timeout);
        this.prefix = prefix;
        this.timeout = timeout;
        this.seeds.addAll(seeds);
    }

    @Override
    public List<Member> members() throws IOException, InterruptedException, MigrateException {
        JsonNode list = anyEndpoint("/cluster/member/list", "{}");
        Map<String, String> names = new HashMap<>(); // member ID -> name, to say whose answer came instead
        for (JsonNode m : list.path("members"))
            names.put(m.path("ID").asText(""), m.path("name").asText(""));
        List<Member> members = new ArrayList<>();
        Map<String, String> ids = new HashMap<>();
        Map<String, URI> own = new HashMap<>();
        for (JsonNode m : list.path("members")) {
            String name = m.path("name").asText("");
            String id = m.path("ID").asText("");
            long numericId = id(id);
            boolean learner = m.path("isLearner").asBoolean(false);
            List<URI> urls = new ArrayList<>();
            for (JsonNode u : m.path("clientURLs")) urls.add(URI.create(u.asText()));
            synchronized (listed) {
                listed.addAll(urls);
            }
            if (name.isEmpty()) name = "(unstarted " + id + ")";
            else ids.put(name, id);
            if (urls.isEmpty()) {
                members.add(Member.down(name, numericId, learner, "it has not started yet (no client URL)"));
                continue;
            }
            own.put(name, urls.getFirst());
            try {
                members.add(Member.up(name, numericId, learner, status(urls.getFirst(), id, names)));
            } catch (IOException e) {
                members.add(Member.down(name, numericId, learner, urls.getFirst() + ": " + e.getMessage()));
            }
        }
        synchronized (idsByName) {
            idsByName.clear();
            idsByName.putAll(ids);
            urlByName.clear();
            urlByName.putAll(own);
        }
        return members;
    }

    @Override
    public Optional<Status> statusAt(String member, List<String> urls) throws InterruptedException, MigrateException {
        String id = idOf(member);
        if (id == null) return Optional.empty(); // not a member the cluster lists: nothing answers as it
        for (String url : urls) {
            try {
                return Optional.of(status(URI.create(url), id, Map.of()));
            } catch (IOException | IllegalArgumentException notThere) {
                // the next URL
            }
        }
        return Optional.empty();
    }

    /** The member ID the member list gives {@code name}, read again when this client has not read it yet. */
    private String idOf(String name) throws InterruptedException, MigrateException {
        synchronized (idsByName) {
            if (idsByName.containsKey(name)) return idsByName.get(name);
        }
        try {
            members();
        } catch (IOException unreachable) {
            return null;
        }
        synchronized (idsByName) {
            return idsByName.get(name);
        }
    }

    /**
     * A member's Maintenance/Status on {@code url}; an answer from another member than {@code id} (a shared or
     * load-balanced client URL) is no answer of this one: an {@link IOException} that says whose it was.
     */
    private Status status(URI url, String id, Map<String, String> names) throws IOException, InterruptedException {
        JsonNode s = post(url, "/maintenance/status", "{}");
        String leader = s.path("leader").asText("");
        String answered = s.path("header").path("member_id").asText("");
        if (!id.isEmpty() && !answered.isEmpty() && !answered.equals(id)) {
            String who = names.getOrDefault(answered, "");
            throw new IOException("answered as member " + answered + (who.isEmpty() ? "" : " (" + who + ")")
                    + ", not as member " + id + " (a client URL another etcd answers on)");
        }
        Optional<MinorLine> storage = line(s.path("storageVersion").asText(""));
        Optional<MinorLine> job;
        if (s.has("downgradeInfo")) {
            job = s.path("downgradeInfo").path("enabled").asBoolean(false)
                    ? line(s.path("downgradeInfo").path("targetVersion").asText(""))
                    : Optional.empty();
        } else {
            // a line whose Status does not report a job (3.5): asked of etcd. Right after a downgrade the leader ends
            // the finished job only at its next check, and a member that moves up before that can never match its
            // target, so the job, and every member waiting for it, would wait for ever. A question that fails is this
            // member's answer failing: the rules count it as not answering rather than guess there is no job.
            job = gateway.unreportedDowngradeJob(url, prefix);
        }
        List<String> errors = new ArrayList<>();
        for (JsonNode e : s.path("errors")) errors.add(e.asText());
        long raftIndex = s.path("raftIndex").asLong(0);
        return new Status(
                EtcdVersion.parse(s.path("version").asText().split("-", 2)[0]),
                id(answered.isEmpty() ? id : answered),
                id(leader),
                s.path("raftTerm").asLong(0),
                raftIndex,
                // 3.3 does not report the applied index: its commit index stands for it
                s.has("raftAppliedIndex") ? s.path("raftAppliedIndex").asLong(0) : raftIndex,
                s.path("isLearner").asBoolean(false),
                errors,
                s.path("dbSize").asLong(0),
                storage,
                job);
    }

    /** A member ID as the gateway writes it (a uint64 in decimal, as a string); 0 for none. */
    private static long id(String text) {
        if (text == null || text.isEmpty()) return 0;
        try {
            return Long.parseUnsignedLong(text);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    @Override
    public Optional<String> linearizableThrough(String member) throws InterruptedException, MigrateException {
        URI url;
        String id;
        synchronized (idsByName) {
            url = urlByName.get(member);
            id = idsByName.get(member);
        }
        if (url == null || id == null) return Optional.of("the member list gives it no client URL");
        try {
            // no "serializable": etcd serves the range only once its leader confirmed it leads a quorum and this
            // member applied the leader's commit index
            JsonNode range = post(url, "/kv/range", "{\"key\":\"" + KEY + "\",\"count_only\":true}");
            String answered = range.path("header").path("member_id").asText("");
            if (!answered.isEmpty() && !answered.equals(id)) {
                return Optional.of(url + " answered as member " + answered + ", not as member " + id);
            }
            return Optional.empty();
        } catch (IOException e) {
            if (AuthEnabledException.isAuthError(e)) throw new AuthEnabledException(url, e);
            return Optional.of(url + ": " + e.getMessage());
        }
    }

    @Override
    public void moveLeader(String to) throws IOException, InterruptedException, MigrateException {
        String target;
        synchronized (idsByName) {
            target = idsByName.get(to);
        }
        if (target == null) throw new IOException("the member list names no member " + to);
        // only the leader moves its leadership: each endpoint is asked until one that leads accepts
        IOException last = null;
        boolean reached = false;
        for (URI endpoint : endpoints()) {
            try {
                post(endpoint, "/maintenance/transfer-leadership", "{\"targetID\":\"" + target + "\"}");
                return;
            } catch (IOException e) {
                last = e;
                reached |= reachedAnEtcd(endpoint, e);
            }
        }
        throw unreachable(last, reached);
    }

    @Override
    public Optional<MinorLine> clusterVersion() throws IOException, InterruptedException, MigrateException {
        IOException last = null;
        boolean reached = false;
        for (URI endpoint : endpoints()) {
            try {
                return line(gateway.get(endpoint.resolve("/version"))
                        .path("etcdcluster")
                        .asText(""));
            } catch (IOException e) {
                last = e;
                reached |= reachedAnEtcd(endpoint, e);
            }
        }
        throw unreachable(last, reached);
    }

    @Override
    public Optional<Record> record() throws IOException, InterruptedException, MigrateException {
        return record(null);
    }

    private Optional<Record> record(Instant deadline) throws IOException, InterruptedException, MigrateException {
        JsonNode range = anyEndpoint("/kv/range", "{\"key\":\"" + KEY + "\"}", deadline);
        JsonNode kvs = range.path("kvs");
        if (kvs.isEmpty()) return Optional.empty();
        JsonNode kv = kvs.get(0);
        String value = GatewayTransport.fromB64(kv.path("value").asText(""));
        try {
            return Optional.of(
                    new Record(RecordValue.parse(value), kv.path("mod_revision").asLong()));
        } catch (IOException e) {
            throw new dev.etcdmigrate.cluster.RecordUnreadableException(
                    "the cluster's key " + RolloutCoordinator.RECORD_KEY
                            + " is not a restart record of etcd-migrate (" + e.getMessage()
                            + "); it is never overwritten: delete it if no rollout runs");
        }
    }

    @Override
    public Optional<Record> create(RecordValue value) throws IOException, InterruptedException, MigrateException {
        return create(value, null);
    }

    private Optional<Record> create(RecordValue value, Instant deadline)
            throws IOException, InterruptedException, MigrateException {
        JsonNode txn = anyEndpoint(
                "/kv/txn",
                "{\"compare\":[{\"key\":\"" + KEY
                        + "\",\"target\":\"CREATE\",\"result\":\"EQUAL\",\"create_revision\":\"0\"}],"
                        + "\"success\":[{\"request_put\":{\"key\":\"" + KEY + "\",\"value\":\"" + b64(value.toJson())
                        + "\"}}]}",
                deadline);
        if (!txn.path("succeeded").asBoolean(false)) return Optional.empty();
        return Optional.of(new Record(value, txn.path("header").path("revision").asLong()));
    }

    @Override
    public boolean delete(Record record) throws IOException, InterruptedException, MigrateException {
        return delete(record, null);
    }

    private boolean delete(Record record, Instant deadline) throws IOException, InterruptedException, MigrateException {
        return anyEndpoint(
                        "/kv/txn",
                        compareModRevision(record) + ",\"success\":[{\"request_delete_range\":{\"key\":\"" + KEY
                                + "\"}}]}",
                        deadline)
                .path("succeeded")
                .asBoolean(false);
    }

    @Override
    public boolean holds(Record record) throws IOException, InterruptedException, MigrateException {
        return holds(record, null);
    }

    private boolean holds(Record record, Instant deadline) throws IOException, InterruptedException, MigrateException {
        return anyEndpoint("/kv/txn", compareModRevision(record) + "}", deadline)
                .path("succeeded")
                .asBoolean(false);
    }

    private static String compareModRevision(Record record) {
        return "{\"compare\":[{\"key\":\"" + KEY + "\",\"target\":\"MOD\",\"result\":\"EQUAL\",\"mod_revision\":\""
                + record.modRevision() + "\"}]";
    }

    @Override
    public ClusterView within(Duration budget) {
        return new Bounded(budget);
    }

    /**
     * This client with the calls on the record bounded by one deadline for the whole walk of endpoints (each request
     * gets what is left, at most its own timeout); the other calls as the client makes them.
     */
    private final class Bounded implements ClusterView {
        private final Duration budget;

        Bounded(Duration budget) {
            this.budget = budget;
        }

        private Instant deadline() {
            return Instant.now().plus(budget);
        }

        @Override
        public List<Member> members() throws IOException, InterruptedException, MigrateException {
            return ClusterClient.this.members();
        }

        @Override
        public Optional<MinorLine> clusterVersion() throws IOException, InterruptedException, MigrateException {
            return ClusterClient.this.clusterVersion();
        }

        @Override
        public Optional<Record> record() throws IOException, InterruptedException, MigrateException {
            return ClusterClient.this.record(deadline());
        }

        @Override
        public Optional<Record> create(RecordValue value) throws IOException, InterruptedException, MigrateException {
            return ClusterClient.this.create(value, deadline());
        }

        @Override
        public boolean delete(Record record) throws IOException, InterruptedException, MigrateException {
            return ClusterClient.this.delete(record, deadline());
        }

        @Override
        public boolean holds(Record record) throws IOException, InterruptedException, MigrateException {
            return ClusterClient.this.holds(record, deadline());
        }

        @Override
        public Optional<Status> statusAt(String member, List<String> urls)
                throws InterruptedException, MigrateException {
            return ClusterClient.this.statusAt(member, urls);
        }

        @Override
        public Optional<String> linearizableThrough(String member) throws InterruptedException, MigrateException {
            return ClusterClient.this.linearizableThrough(member);
        }

        @Override
        public void moveLeader(String to) throws IOException, InterruptedException, MigrateException {
            ClusterClient.this.moveLeader(to);
        }
    }

    private List<URI> endpoints() throws InterruptedException {
        boolean known;
        synchronized (listed) {
            known = !listed.isEmpty();
        }
        if (!known) discover();
        Set<URI> all = new LinkedHashSet<>();
        synchronized (listed) {
            all.addAll(listed);
        }
        all.addAll(seeds);
        return List.copyOf(all);
    }

    /** The first endpoint that answers; etcd's auth is a refusal (the runner has no credentials to give). */
    private JsonNode anyEndpoint(String path, String body) throws IOException, InterruptedException, MigrateException {
        return anyEndpoint(path, body, null);
    }

    /** {@link #anyEndpoint(String, String)}, the walk ended at {@code deadline} (null: none but each request's). */
    private JsonNode anyEndpoint(String path, String body, Instant deadline)
            throws IOException, InterruptedException, MigrateException {
        IOException last = null;
        boolean reached = false;
        for (URI endpoint : endpoints()) {
            Duration left = deadline == null ? timeout : Duration.between(Instant.now(), deadline);
            if (left.isNegative() || left.isZero()) {
                last = new IOException("no answer within the try's time", last);
                break;
            }
            try {
                return post(endpoint, path, body, left);
            } catch (IOException e) {
                if (AuthEnabledException.isAuthError(e)) throw new AuthEnabledException(endpoint, e);
                last = e;
                reached |= reachedAnEtcd(endpoint, e);
            }
        }
        throw unreachable(last, reached);
    }

    /**
     * The failure of a walk of every endpoint: {@link ClusterView.EtcdReached} when {@code reached} (an etcd is there
     * and did not give what was asked), else a plain {@link IOException} (nothing there).
     */
    private IOException unreachable(IOException last, boolean reached) {
        Set<URI> tried = new LinkedHashSet<>();
        synchronized (listed) {
            tried.addAll(listed);
        }
        tried.addAll(seeds);
        String message = "no member answered on " + tried + (last == null ? "" : " (last: " + last.getMessage() + ")");
        return reached ? new ClusterView.EtcdReached(message, last) : new IOException(message, last);
    }

    /**
     * Whether a failed request reached an etcd: an HTTP answer of any status or body, or a connection made whose
     * answer did not come in time. Refused, no route, no such host, or no connection at all: nothing is there. The
     * client's "connect timed out" also covers TLS's handshake, which an etcd that is stalled or too busy to answer
     * never finishes although its port takes the connection; so that timeout is asked again of the port itself.
     */
    static boolean reachedAnEtcd(URI endpoint, IOException e) {
        if (e instanceof HttpConnectTimeoutException) return takesConnections(endpoint);
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ConnectException
                    || t instanceof NoRouteToHostException
                    || t instanceof UnknownHostException
                    || t instanceof UnresolvedAddressException) return false;
        }
        return true;
    }

    /** How long a port is given to take a TCP connection: the kernel takes it for a listener that cannot answer. */
    static final Duration PORT_PROBE = Duration.ofMillis(500);

    /** Whether something listens at the endpoint's port: a TCP connection made, and closed at once. */
    static boolean takesConnections(URI endpoint) {
        int port = endpoint.getPort() != -1 ? endpoint.getPort() : "https".equals(endpoint.getScheme()) ? 443 : 80;
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(endpoint.getHost(), port), (int) PORT_PROBE.toMillis());
            return true;
        } catch (IOException | IllegalArgumentException | SecurityException nothing) {
            return false;
        }
    }

    private JsonNode post(URI endpoint, String path, String body) throws IOException, InterruptedException {
        return post(endpoint, path, body, timeout);
    }

    private JsonNode post(URI endpoint, String path, String body, Duration within)
            throws IOException, InterruptedException {
        try {
            return gateway.post(endpoint.resolve(prefix + path), body, within);
        } catch (GatewayTransport.NotFound e) {
            // a member of an older line (3.3 serves /v3beta only): asked so its version can be judged
            return gateway.post(endpoint.resolve(OLDER_PREFIX + path), body, within);
        }
    }

    /** The JSON gateway's prefix of 3.3 (also served by 3.4). */
    private static final String OLDER_PREFIX = "/v3beta";

    /** The cluster has etcd's own auth enabled: a multi-minor rollout is refused, nothing changed by it. */
    public static final class AuthEnabledException extends RefusedException {
        AuthEnabledException(URI endpoint, IOException e) {
            super("the cluster has etcd's auth enabled (" + endpoint + ": " + e.getMessage()
                    + "): a rollout across several minors coordinates through the cluster's keyspace and has no"
                    + " credentials for it; roll out one minor at a time (nothing was changed)");
        }

        static boolean isAuthError(IOException e) {
            String m = String.valueOf(e.getMessage());
            return m.contains("user name is empty")
                    || m.contains("invalid auth token")
                    || m.contains("permission denied");
        }
    }
}
