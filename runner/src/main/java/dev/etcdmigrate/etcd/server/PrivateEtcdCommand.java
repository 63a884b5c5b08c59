package dev.etcdmigrate.etcd.server;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.backend.BackendQuota;
import dev.etcdmigrate.etcd.binary.BinDir;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of a {@link PrivateEtcd}: its client URL on loopback; alone, a loopback peer URL and short
 * raft timers; in a cluster, the member's own peer URLs and --initial-cluster, and its own advertised client URLs.
 */
record PrivateEtcdCommand(List<String> command, String clientUrl, String peerUrls) {

    // A restarted single member waits out one election timeout before it takes writes: keep it short. Alone it is
    // its own quorum, so no timer here can cost it the leadership. 2/20 ms against 10/100 ms: etcd 3.5.35 on the
    // bench's 200-key 3.4.23 data (no snapshot: a whole randomized timeout) led 54-90 ms after its start instead of
    // 150-206 ms (4 runs each, docs/benchmarks.md); a fast-forwarded start waits 1-10 ticks, here of 2 ms.
    private static final List<String> FAST_TIMERS = List.of("--heartbeat-interval=2", "--election-timeout=20");
    // Lines with a start race (catalog: line.startRaces, 3.6 and 3.7) keep the timers that race was measured with:
    // with 2 ms ticks the campaign after the fast-forward comes within the first milliseconds, where the race's
    // window is (docs/etcd-start-panic.md), not 10-90 ms later.
    private static final List<String> RACE_TIMERS = List.of("--heartbeat-interval=10", "--election-timeout=100");

    static PrivateEtcdCommand of(Release release, Path dataDir, PrivateEtcd.Settings settings, List<String> lineFlags)
            throws BinDir.MissingBinaryException, IOException {
        Path binary = settings.binDir().etcd(release.etcdVersion());
        String client = settings.ports().clientUrl().toString();
        String peer = settings.cluster()
                .map(ClusterPeers::listenPeerUrls)
                .orElse(settings.ports().peerUrl(settings.peerTls()).toString());
        List<String> command = new ArrayList<>(List.of(
                binary.toString(),
                "--name",
                settings.name(),
                "--data-dir",
                dataDir.toString(),
                "--listen-client-urls",
                client,
                "--advertise-client-urls",
                // a member's step publishes the member's own URLs, which do not answer while it migrates (ClusterPeers)
                settings.cluster().map(ClusterPeers::advertiseClientUrls).orElse(client),
                "--listen-peer-urls",
                peer));
        if (settings.cluster().isPresent()) {
            ClusterPeers cluster = settings.cluster().get();
            command.addAll(List.of(
                    "--initial-advertise-peer-urls",
                    cluster.advertisePeerUrls(),
                    "--initial-cluster",
                    cluster.initialCluster()));
        } else {
            command.addAll(
                    List.of("--initial-advertise-peer-urls", peer, "--initial-cluster", settings.name() + "=" + peer));
            command.addAll(release.line().startRaces().isEmpty() ? FAST_TIMERS : RACE_TIMERS);
        }
        settings.walDirFor(dataDir).ifPresent(w -> command.addAll(List.of("--wal-dir", w.toString())));
        command.addAll(release.line().logFlags());
        command.addAll(lineFlags);
        command.addAll(settings.extraServerArgs());
        command.addAll(BackendQuota.flags(
                release, dataDir, command.subList(1, command.size()))); // last, so it wins: see BackendQuota
        return new PrivateEtcdCommand(List.copyOf(command), client, peer);
    }
}
