package dev.etcdmigrate.etcd.server;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.config.EtcdCommandLine;
import dev.etcdmigrate.etcd.backend.BackendQuota;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.etcd.client.V2Client;
import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.V2Key;
import dev.etcdmigrate.process.ChildEnvironment;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.process.LinePump;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A bundled etcd run by a migration step on the data dir: its client port on loopback only, a
 * scrubbed environment; started, probed with a write, stopped with SIGTERM. Alone (one-member
 * cluster) its peer port is loopback too and its raft timers are short, since no real peer takes
 * part. As a member of a multi-member cluster it rejoins its peers on the member's own peer URLs
 * with etcd's default timers, so the write probe is a real quorum write.
 */
public final class PrivateEtcd implements AutoCloseable {

    /** The key the write probe puts and deletes (see {@link V2Key#PROBE}). */
    public static final String PROBE_KEY = V2Key.PROBE;

    private static final Duration POLL = Duration.ofMillis(20);
    // A member of a healthy cluster hears its leader within about one election timeout (1 s default).
    private static final Duration REJOIN_PATIENCE = Duration.ofSeconds(5);
    // Peers that do not run may be restarting with this member: the kubelets of an all-at-once manifest edit start
    // the members up to ~20 s apart (ThreeNodeCheck), and two that meet make the quorum; failing sooner means a
    // crash loop whose back-off keeps them apart for minutes.
    private static final Duration PEERS_DOWN_PATIENCE = Duration.ofSeconds(30);

    private final Release release;
    private final EtcdProcess process;
    private final GatewayClient gateway;
    private final V2Client v2;
    private final Log log;
    private final String label;
    private final RejoinWatch rejoin;
    private final V2RefusalWatch refusals;

    private PrivateEtcd(
            Release release,
            EtcdProcess process,
            GatewayClient gateway,
            V2Client v2,
            Log log,
            RejoinWatch rejoin,
            V2RefusalWatch refusals) {
        this.rejoin = rejoin;
        this.refusals = refusals;
        this.release = release;
        this.process = process;
        this.gateway = gateway;
        this.v2 = v2;
        this.log = log;
        this.label = "etcd-" + release.version();
    }

    /** What every private server of a run shares. */
    public record Settings(
            BinDir binDir,
            String name,
            ServerPorts ports,
            List<String> extraServerArgs,
            Duration startTimeout,
            Duration stopGrace,
            Map<String, String> environment,
            HttpClient http,
            Optional<ClusterPeers> cluster,
            Optional<WalDir> wal) {

        public Settings {
            extraServerArgs = List.copyOf(extraServerArgs);
        }

        /** A one-member cluster: loopback peer port, short timers. */
        public Settings(
                BinDir binDir,
                String name,
                ServerPorts ports,
                List<String> extraServerArgs,
                Duration startTimeout,
                Duration stopGrace,
                Map<String, String> environment,
                HttpClient http) {
            this(
                    binDir,
                    name,
                    ports,
                    extraServerArgs,
                    startTimeout,
                    stopGrace,
                    environment,
                    http,
                    Optional.empty(),
                    Optional.empty());
        }

        /** A member of a multi-member cluster: rejoins {@code peers} on the member's own peer URLs. */
        public Settings inCluster(ClusterPeers peers) {
            return toBuilder().cluster(peers).build();
        }

        /** etcd's --wal-dir for an etcd (or tool) working on dataDir; none for a staging dir, which keeps its WAL inside. */
        public Optional<Path> walDirFor(Path dataDir) {
            return wal.filter(w -> w.dataDir().equals(dataDir.toAbsolutePath().normalize()))
                    .map(WalDir::walDir);
        }

        /** The data dir's WAL lives elsewhere (etcd's --wal-dir): every etcd started on that data dir is told so. */
        public Settings withWalDir(WalDir walDir) {
            return toBuilder().wal(walDir).build();
        }

        /** These settings to copy: each copy names only what it changes. */
        public Builder toBuilder() {
            return new Builder(this);
        }

        boolean peerTls() {
            return EtcdCommandLine.read(extraServerArgs, Map.of())
                    .flag("peer-cert-file")
                    .isPresent();
        }
    }

    /**
     * A copy of {@link Settings} with what differs set by name, the rest kept: a setting added to the record
     * is copied here once, not at every place that derives settings.
     */
    public static final class Builder {
        private final Settings from;
        private Optional<ClusterPeers> cluster;
        private Optional<WalDir> wal;

        private Builder(Settings from) {
            this.from = from;
            this.cluster = from.cluster();
            this.wal = from.wal();
        }

        public Builder cluster(ClusterPeers value) {
            cluster = Optional.of(value);
            return this;
        }

        public Builder wal(WalDir value) {
            wal = Optional.of(value);
            return this;
        }

        public Settings build() {
            return new Settings(
                    from.binDir(),
                    from.name(),
                    from.ports(),
                    from.extraServerArgs(),
                    from.startTimeout(),
                    from.stopGrace(),
                    from.environment(),
                    from.http(),
                    cluster,
                    wal);
        }
    }

    /** etcd's --wal-dir for one data dir; a staging dir next to it keeps its WAL inside, as a restore writes it. */
    public record WalDir(Path dataDir, Path walDir) {}

    public static PrivateEtcd start(
            Release release, Path dataDir, Settings settings, List<String> lineFlags, Log log, Children children)
            throws BinDir.MissingBinaryException, IOException {
        PrivateEtcdCommand command = PrivateEtcdCommand.of(release, dataDir, settings, lineFlags);
        String label = "etcd-" + release.version();
        EtcdProcess process = EtcdProcess.start(
                release,
                label,
                command.command(),
                ChildEnvironment.scrubbed(settings.environment(), Map.of()),
                false,
                children,
                log);
        try {
            log.emit(new EtcdEvent.EtcdStarted(
                    release.version(),
                    dataDir.toString(),
                    command.clientUrl(),
                    command.peerUrls(),
                    settings.cluster().isPresent(),
                    process.pid()));
            // only a rejoining member can be refused by its peers; a verdict stops it so no probe waits on
            RejoinWatch rejoin = (settings.cluster().isPresent()
                            ? new RejoinWatch(REJOIN_PATIENCE, PEERS_DOWN_PATIENCE)
                            : RejoinWatch.disabled())
                    .onVerdict(process::destroy);
            V2RefusalWatch refusals = new V2RefusalWatch(release.line().v2Refusals());
            process.capture(new LinePump(log, label, rejoin.andThen(refusals)));
            GatewayClient gateway = new GatewayClient(
                    settings.http(),
                    settings.ports().clientUrl(),
                    release.line().jsonGateway());
            V2Client v2 = new V2Client(settings.http(), settings.ports().clientUrl());
            return new PrivateEtcd(release, process, gateway, v2, log, rejoin, refusals);
        } catch (RuntimeException | Error e) {
            process.close(); // nothing left running, nor unreaped, when the start fails half-way
            throw e;
        }
    }

    public GatewayClient gateway() {
        return gateway;
    }

    public V2Client v2() {
        return v2;
    }

    public Release release() {
        return release;
    }

    /** Polls until a v3 write succeeds; see {@link #awaitWrite(Duration, StorageApi)}. */
    public Duration awaitWrite(Duration deadline) throws EtcdFailedException, InterruptedException {
        return awaitWrite(deadline, StorageApi.ETCD3);
    }

    /**
     * Polls until a write through the data's own API succeeds (then deletes the probe key), the process
     * dies, or the deadline passes; returns the time it took. etcd3 data gets v3 writes only (a v2 write
     * would leave v2 content that 3.6 refuses); etcd2 data gets v2 writes (a v3 write would put
     * revisions into the v3 store that `etcdctl migrate` later fills with the v2 indexes).
     */
    public Duration awaitWrite(Duration deadline, StorageApi api) throws EtcdFailedException, InterruptedException {
        if (api == StorageApi.ETCD3 && !release.line().v3Api()) {
            throw new EtcdFailedException(label + " has no v3 API: it cannot serve etcd3 data");
        }
        long start = System.nanoTime();
        long end = start + deadline.toNanos();
        Exception last = null;
        while (System.nanoTime() < end) {
            throwIfRejoinFailed(start);
            if (!process.isAlive()) {
                process.output().join();
                // what it said before it died decides: its last lines may have reached the watches only now
                throwIfRejoinFailed(start);
                throwIfV2Refused();
                throw new EtcdFailedException(label + " exited with "
                        + process.exited().getAsInt() + " before it accepted a write: " + process.whyItDied());
            }
            if (process.output().fatalLine().isPresent()) {
                // it said it is dying: do not wait out the deadline for the exit that follows
                if (process.awaitExit(Duration.ofSeconds(2))) {
                    process.output().join(); // the pump has seen every line, a rejoin verdict or a refusal too
                    throwIfRejoinFailed(start);
                    throwIfV2Refused();
                }
                throw new EtcdFailedException(label + " logged a fatal error before it accepted a write: \""
                        + process.output().fatalLine().get() + "\"");
            }
            try {
                if (api == StorageApi.ETCD3) {
                    gateway.put(PROBE_KEY, "ok");
                    gateway.delete(PROBE_KEY);
                } else {
                    v2.put(PROBE_KEY, "ok", 0);
                    v2.delete(PROBE_KEY);
                }
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                log.emit(new EtcdEvent.EtcdAcceptedWrite(release.version(), took.toMillis()));
                return took;
            } catch (IOException e) {
                if (String.valueOf(e.getMessage()).contains(NO_SPACE)) {
                    throw new NoSpaceException(label + " refuses writes: " + dev.etcdmigrate.error.Reason.of(e));
                }
                last = e;
            }
            Thread.sleep(POLL); // poll interval of a deadline-bound wait, not a synchronisation sleep
        }
        throw new EtcdFailedException(label + " did not accept a write within " + deadline.toSeconds() + " s"
                + (last == null ? "" : " (last attempt: " + dev.etcdmigrate.error.Reason.of(last) + ")"));
    }

    /** A rejoining member whose peers refused it, or that found no leader in time (see {@link RejoinWatch}). */
    private void throwIfRejoinFailed(long start) throws EtcdFailedException {
        if (rejoin.verdict().isPresent()) {
            rejoin.finding()
                    .ifPresent(f -> log.emit(new EtcdEvent.RejoinFailed(
                            release.version(), f.kind(), f.definitive(), f.leaderlessSeconds(), f.etcdLine())));
            throw new EtcdFailedException(label + " cannot rejoin its cluster after "
                    + Duration.ofNanos(System.nanoTime() - start).toMillis() + " ms: "
                    + rejoin.verdict().get());
        }
    }

    /** An etcd that exited having said one of its line's v2 refusals refused the data, and said so. */
    private void throwIfV2Refused() throws V2RefusedException {
        Optional<String> refusal = refusals.seen();
        if (refusal.isPresent()) {
            throw new V2RefusedException(
                    label + " refused the data for v2 content before it accepted a write: " + process.whyItDied(),
                    refusal.get());
        }
    }

    /** SIGTERM, wait up to the grace period, SIGKILL and fail if it lingers (see {@link EtcdProcess#stop}). */
    public void stop(Duration grace) throws EtcdFailedException, InterruptedException {
        process.stop(grace);
    }

    /** Leaves nothing running when a step fails half-way. */
    @Override
    public void close() {
        process.close();
    }

    public static class EtcdFailedException extends dev.etcdmigrate.error.FailedException {
        public EtcdFailedException(String message) {
            super(message);
        }
    }

    /** The etcd exited before a write, having refused the data for v2 content with {@code refusal} (its line's catalog line). */
    public static final class V2RefusedException extends EtcdFailedException {
        private final String refusal;

        V2RefusedException(String message, String refusal) {
            super(message);
            this.refusal = refusal;
        }

        public String refusal() {
            return refusal;
        }
    }

    /** etcd's answer to a write while a NOSPACE alarm is active: it will not change by waiting. */
    static final String NO_SPACE = "database space exceeded";

    /** A write refused for a NOSPACE alarm (see {@link BackendQuota}); the caller decides whether to disarm it. */
    public static final class NoSpaceException extends EtcdFailedException {
        public NoSpaceException(String message) {
            super(message);
        }
    }
}
