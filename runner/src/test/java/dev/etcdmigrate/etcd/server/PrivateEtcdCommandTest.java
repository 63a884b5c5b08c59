package dev.etcdmigrate.etcd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.version.EtcdVersion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a private etcd tells the world about itself. */
class PrivateEtcdCommandTest {

    private static final Release V36 =
            Catalog.bundled().release(EtcdVersion.parse("3.6.16")).orElseThrow();

    @TempDir
    Path dir;

    /**
     * A cluster member's step publishes the member's own client URLs, not its private loopback one: on one
     * host, another member's runner would read the step's etcd there as the member serving the record's line, take
     * over its record and stop its own member, two members out. The private URL is where the runner itself talks to it.
     */
    @Test
    void aMembersStepAdvertisesTheMembersOwnClientUrls() throws Exception {
        PrivateEtcdCommand command = PrivateEtcdCommand.of(
                V36,
                Files.createDirectories(dir.resolve("data")),
                settings()
                        .inCluster(new ClusterPeers(
                                "m0=https://127.0.0.1:2380,m1=https://127.0.0.1:2480",
                                "https://127.0.0.1:2380",
                                "https://127.0.0.1:2380",
                                "https://127.0.0.1:2379")),
                List.of());
        assertEquals("https://127.0.0.1:2379", flag(command, "--advertise-client-urls"));
        assertEquals(command.clientUrl(), flag(command, "--listen-client-urls"));
    }

    /** Alone, nobody else looks: it advertises where it listens. */
    @Test
    void aSingleMembersPrivateEtcdAdvertisesWhereItListens() throws Exception {
        PrivateEtcdCommand command =
                PrivateEtcdCommand.of(V36, Files.createDirectories(dir.resolve("data")), settings(), List.of());
        assertEquals(command.clientUrl(), flag(command, "--advertise-client-urls"));
    }

    /** A derived copy changes what it names and keeps every other setting, whichever order they are derived in. */
    @Test
    void derivedSettingsKeepWhatTheyDoNotName() throws Exception {
        PrivateEtcd.Settings base = settings();
        ClusterPeers peers = new ClusterPeers(
                "m0=https://127.0.0.1:2380",
                "https://127.0.0.1:2380",
                "https://127.0.0.1:2380",
                "https://127.0.0.1:2379");
        PrivateEtcd.WalDir wal = new PrivateEtcd.WalDir(dir.resolve("data"), dir.resolve("wal"));
        PrivateEtcd.Settings both = base.withWalDir(wal).inCluster(peers);
        assertEquals(both, base.inCluster(peers).withWalDir(wal));
        assertEquals(Optional.of(peers), both.cluster());
        assertEquals(Optional.of(wal), both.wal());
        assertEquals(
                base,
                new PrivateEtcd.Settings(
                        both.binDir(),
                        both.name(),
                        both.ports(),
                        both.extraServerArgs(),
                        both.startTimeout(),
                        both.stopGrace(),
                        both.environment(),
                        both.http()));
    }

    private PrivateEtcd.Settings settings() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Files.writeString(bin.resolve("etcd-" + V36.version()), "#!/bin/sh\nexit 1\n");
        bin.resolve("etcd-" + V36.version()).toFile().setExecutable(true);
        return new PrivateEtcd.Settings(
                new BinDir(bin),
                "m0",
                FreePorts.pick(),
                List.of(),
                Duration.ofSeconds(30),
                Duration.ofSeconds(5),
                Map.of(),
                GatewayClient.newHttpClient());
    }

    private static String flag(PrivateEtcdCommand command, String name) {
        List<String> args = command.command();
        return args.get(args.indexOf(name) + 1);
    }
}
