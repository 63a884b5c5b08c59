package dev.etcdmigrate.it.support;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.demo.SampleData;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.LeaseOption;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Real etcd for tests: the provisioned binaries (system property etcd.bin.dir), started privately on
 * free loopback ports, always stopped by {@link #close()}: a test registers it as an extension
 * ({@code @RegisterExtension final EtcdFixture etcd = new EtcdFixture();}) and JUnit closes it after each test.
 */
public final class EtcdFixture implements AutoCloseable, AfterEachCallback {

    public static final Catalog CATALOG = Catalog.bundled();
    /** The releases that can hold etcd3 data (2.x serves only the v2 API). */
    public static final List<Release> V3_RELEASES =
            CATALOG.releases().stream().filter(r -> r.line().v3Api()).toList();

    private final Children children = new Children(Duration.ofSeconds(10));
    private final Log log = Log.text(new PrintStream(OutputStream.nullOutputStream()));

    public static Path binDir() {
        String dir = System.getProperty("etcd.bin.dir");
        if (dir == null || !Files.isDirectory(Path.of(dir))) {
            fail(
                    "etcd binaries missing: run `runner/target/etcd-migrate provision --bin-dir DIR` and pass -Detcd.bin.dir=DIR"
                            + " (mvn verify does both); got " + dir);
        }
        return Path.of(dir);
    }

    public static Release release(String version) {
        return CATALOG.release(EtcdVersion.parse(version))
                .orElseThrow(() -> new AssertionError("not in catalog: " + version));
    }

    /** The oldest release that can write etcd3 data. */
    public static Release oldest() {
        return V3_RELEASES.getFirst();
    }

    public static Release newest() {
        return CATALOG.releases().getLast();
    }

    /** Free loopback ports, a one-minute start deadline. */
    private static PrivateEtcd.Settings settings() {
        return new PrivateEtcd.Settings(
                new BinDir(binDir()),
                "it",
                FreePorts.pick(),
                List.of(),
                Duration.ofMinutes(1),
                Duration.ofSeconds(20),
                System.getenv(),
                GatewayClient.newHttpClient());
    }

    public PrivateEtcd start(Release release, Path dataDir, String... flags) throws Exception {
        PrivateEtcd.Settings settings = settings();
        PrivateEtcd etcd = PrivateEtcd.start(release, dataDir, settings, List.of(flags), log, children);
        try {
            if (release.line().v3Api()) {
                etcd.awaitWrite(settings.startTimeout());
            }
        } catch (Exception e) {
            etcd.close();
            throw e;
        }
        return etcd;
    }

    /** An etcd on etcd2 data: the line's v2 switch on, probed with v2 writes only. */
    public PrivateEtcd startEtcd2(Release release, Path dataDir) throws Exception {
        PrivateEtcd.Settings settings = settings();
        PrivateEtcd etcd =
                PrivateEtcd.start(release, dataDir, settings, release.line().v2EnableFlags(), log, children);
        try {
            etcd.awaitWrite(settings.startTimeout(), dev.etcdmigrate.version.StorageApi.ETCD2);
        } catch (Exception e) {
            etcd.close();
            throw e;
        }
        return etcd;
    }

    /** Runs `work` against a started etcd with a jetcd client, then stops the etcd cleanly. */
    public void withClient(Release release, Path dataDir, ClientWork work, String... flags) throws Exception {
        try (PrivateEtcd etcd = start(release, dataDir, flags)) {
            try (Client client =
                    Client.builder().endpoints(etcd.gateway().baseUrl()).build()) {
                work.accept(client);
            }
            etcd.stop(Duration.ofSeconds(20));
        }
    }

    public interface ClientWork {
        void accept(Client client) throws Exception;
    }

    /** A data dir written by {@code release}: sample keys (every tenth leased), version.txt recorded. */
    public Keyspace seed(Release release, Path dataDir, int keys, String... flags) throws Exception {
        Permissions.ownerOnlyDir(dataDir);
        Keyspace[] result = new Keyspace[1];
        withClient(
                release,
                dataDir,
                client -> {
                    SampleData.seed(client, keys, 3600);
                    result[0] = Keyspace.read(client);
                },
                flags);
        new DataDir(dataDir).writeVersion(new DataVersion(release.etcdVersion(), StorageApi.ETCD3));
        assertTrue(result[0].entries().size() > keys / 2, "seeded keys");
        return result[0];
    }

    /** The data dir ends at {@code release} (version.txt) and that release serves every key {@code before} had. */
    public void assertMigratedTo(Release release, Path dataDir, Keyspace before) throws Exception {
        assertEquals(release.version() + "/etcd3", Files.readString(dataDir.resolve("version.txt")));
        assertEquals(Map.of(), before.differences(read(release, dataDir).keyspace()));
    }

    /** The keyspace as {@code release} serves it, and the remaining TTL of every lease a key is attached to. */
    public Observed read(Release release, Path dataDir, String... flags) throws Exception {
        Observed[] result = new Observed[1];
        withClient(
                release,
                dataDir,
                client -> {
                    Keyspace keyspace = Keyspace.read(client);
                    Map<Long, Long> ttl = new HashMap<>();
                    // etcd 3.0 has no LeaseTimeToLive: its leases can be seen attached, not timed
                    boolean canTime = !release.minorLine().equals(dev.etcdmigrate.version.MinorLine.parse("3.0"));
                    for (Keyspace.Entry e : keyspace.entries().values()) {
                        if (canTime && e.lease() != 0 && !ttl.containsKey(e.lease())) {
                            ttl.put(
                                    e.lease(),
                                    client.getLeaseClient()
                                            .timeToLive(e.lease(), LeaseOption.DEFAULT)
                                            .get(30, TimeUnit.SECONDS)
                                            .getTTL());
                        }
                    }
                    result[0] = new Observed(keyspace, canTime, ttl);
                },
                flags);
        return result[0];
    }

    /** A v2 keys API request (PUT with a value, or DELETE), retried until the server answers; returns the status. */
    public static int v2(PrivateEtcd server, String method, String key, String value) throws Exception {
        java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
        var request = java.net.http.HttpRequest.newBuilder(
                        server.gateway().baseUrl().resolve("/v2/keys" + key))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .method(
                        method,
                        value == null
                                ? java.net.http.HttpRequest.BodyPublishers.noBody()
                                : java.net.http.HttpRequest.BodyPublishers.ofString("value=" + value))
                .build();
        return Poll.until(
                Duration.ofSeconds(30),
                Duration.ofMillis(20),
                "an answer to " + method + " " + key,
                () -> http.send(request, java.net.http.HttpResponse.BodyHandlers.discarding())
                        .statusCode());
    }

    public record Observed(Keyspace keyspace, boolean leasesTimed, Map<Long, Long> leaseTtl) {
        public long keysWithLiveLease() {
            return keyspace.entries().values().stream()
                    .filter(e -> e.lease() != 0 && leaseTtl.getOrDefault(e.lease(), -1L) > 0)
                    .count();
        }
    }

    /** JUnit's end of each test that registered this fixture. */
    @Override
    public void afterEach(ExtensionContext context) {
        close();
    }

    @Override
    public void close() {
        children.stopAll();
    }
}
