package dev.etcdmigrate.it.migrate;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.SingleMember;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.PutResponse;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A db larger than etcd's default 2 GiB quota, written with an 8 GiB quota by 3.4 and carrying a NOSPACE
 * alarm that an etcd with a smaller quota raised (what an operator who once ran with the default finds):
 * taken 3.4 -> 3.7 with no quota given (the runner sizes it from the db, reports and disarms the alarm),
 * then 3.7 -> 3.5 with ETCD_QUOTA_BACKEND_BYTES; every key's value and revisions checked, no alarm left.
 * Slow (it writes over 2 GiB): profile -Pbigdata.
 */
class BigDataIT {

    private static final long GIB = 1L << 30;
    private static final int VALUE_BYTES = 1 << 20;
    /** 2,200 values of 1 MiB: a db of about 2.2 GiB. */
    private static final int KEYS = Integer.getInteger("bigdata.keys", 2200);

    private static final Duration RUN_DEADLINE = Duration.ofMinutes(30);

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void aDbAboveTheDefaultQuotaGoesUpTo37AndBackTo35WithEveryKey(@TempDir Path dir) throws Exception {
        Path data = Permissions.ownerOnlyDir(dir.resolve("data"));
        Release v34 = EtcdFixture.release("3.4.23");
        long[] modRevision = new long[KEYS];
        long start = System.nanoTime();
        try (PrivateEtcd server = etcd.start(v34, data, "--quota-backend-bytes=" + 8 * GIB);
                Client client = Client.builder()
                        .endpoints(server.gateway().baseUrl())
                        .maxInboundMessageSize(8 << 20)
                        .build()) {
            Deque<CompletableFuture<PutResponse>> inFlight = new ArrayDeque<>();
            Deque<Integer> which = new ArrayDeque<>();
            for (int i = 0; i < KEYS; i++) {
                if (inFlight.size() == 8)
                    modRevision[which.removeFirst()] = inFlight.removeFirst()
                            .get(2, TimeUnit.MINUTES)
                            .getHeader()
                            .getRevision();
                inFlight.addLast(client.getKVClient().put(key(i), ByteSequence.from(value(i))));
                which.addLast(i);
            }
            while (!inFlight.isEmpty())
                modRevision[which.removeFirst()] = inFlight.removeFirst()
                        .get(2, TimeUnit.MINUTES)
                        .getHeader()
                        .getRevision();
            server.stop(Duration.ofSeconds(60));
        }
        new DataDir(data).writeVersion(new DataVersion(v34.etcdVersion(), StorageApi.ETCD3));
        long db = Files.size(data.resolve("member/snap/db"));
        System.out.printf(
                "BigDataIT: wrote %d values of 1 MiB in %d s, db %d MiB%n",
                KEYS, (System.nanoTime() - start) / 1_000_000_000L, db >> 20);
        assertTrue(db > 2 * GIB, "db above etcd's default quota: " + db);
        raiseNoSpaceAlarm(v34, data);

        try (RunnerProcess up = RunnerProcess.start(RunnerArgs.migrate(data, "3.7.3"), Map.of())) {
            up.awaitExit(RUN_DEADLINE);
            assertEquals(0, up.exitCode(), up.output());
            List<JsonNode> disarmed = up.events("alarm-disarmed");
            assertEquals(1, disarmed.size(), up.output());
            JsonNode alarm = disarmed.getFirst();
            assertEquals("NOSPACE", alarm.path("type").asText(), up.output());
            assertTrue(alarm.path("dbBytes").asLong() > 2 * GIB, "the db it carried: " + alarm);
            assertTrue(
                    alarm.path("quotaBytes").asLong() > alarm.path("dbBytes").asLong(),
                    "the private etcd's quota leaves the db room: " + alarm);
            assertTrue(
                    alarm.path("neededQuotaBytes").asLong()
                            > alarm.path("dbBytes").asLong(),
                    "the quota the target needs: " + alarm);
        }
        assertEquals("3.7.3/etcd3", Files.readString(data.resolve("version.txt")));

        try (RunnerProcess down = RunnerProcess.start(
                RunnerArgs.migrate(data, "3.5.35"), Map.of("ETCD_QUOTA_BACKEND_BYTES", String.valueOf(8 * GIB)))) {
            down.awaitExit(RUN_DEADLINE);
            assertEquals(0, down.exitCode(), down.output());
            // etcd logs the quota it enforces ("enabled backend quota")
            assertTrue(
                    down.childLines("etcd-").stream()
                            .anyMatch(l -> l.path("quota-size-bytes").asLong() == 8 * GIB),
                    "the operator's quota reaches the private etcd");
        }
        assertEquals("3.5.35/etcd3", Files.readString(data.resolve("version.txt")));

        try (PrivateEtcd server = etcd.start(EtcdFixture.release("3.5.35"), data, "--quota-backend-bytes=" + 8 * GIB);
                Client client = Client.builder()
                        .endpoints(server.gateway().baseUrl())
                        .maxInboundMessageSize(8 << 20)
                        .build()) {
            assertEquals(
                    List.of(),
                    client.getMaintenanceClient()
                            .listAlarms()
                            .get(1, TimeUnit.MINUTES)
                            .getAlarms(),
                    "no alarm left");
            GetResponse count = client.getKVClient()
                    .get(
                            ByteSequence.from(new byte[] {0}),
                            GetOption.builder()
                                    .withRange(ByteSequence.from(new byte[] {0}))
                                    .withCountOnly(true)
                                    .build())
                    .get(1, TimeUnit.MINUTES);
            assertEquals(KEYS, count.getCount(), "keys after the round trip");
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            for (int i = 0; i < KEYS; i++) {
                List<KeyValue> kvs = client.getKVClient()
                        .get(key(i))
                        .get(1, TimeUnit.MINUTES)
                        .getKvs();
                assertEquals(1, kvs.size(), "key " + i);
                KeyValue kv = kvs.getFirst();
                assertArrayEquals(sha.digest(value(i)), sha.digest(kv.getValue().getBytes()), "value of key " + i);
                assertEquals(modRevision[i], kv.getModRevision(), "mod revision of key " + i);
                assertEquals(modRevision[i], kv.getCreateRevision(), "create revision of key " + i);
            }
            server.stop(Duration.ofSeconds(60));
        }
    }

    /**
     * Runs 3.4 on the data with a 1 GiB quota, below the db: its first write raises a NOSPACE alarm that
     * stays in the data. (The binary directly: the project's private etcd never runs below the db size.)
     */
    private static void raiseNoSpaceAlarm(Release release, Path data) throws Exception {
        ServerPorts ports = FreePorts.pick();
        String client = ports.clientUrl().toString();
        String peer = ports.peerUrl(false).toString();
        List<String> command = new ArrayList<>(List.of(
                EtcdFixture.binDir().resolve("etcd-" + release.version()).toString()));
        command.addAll(SingleMember.flags("it", data, client, peer));
        command.add("--quota-backend-bytes=" + GIB);
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        try (Client c = Client.builder().endpoints(ports.clientUrl()).build()) {
            Poll.untilTrue(Duration.ofMinutes(2), Duration.ofMillis(50), "a put above the quota refused", () -> {
                try {
                    c.getKVClient()
                            .put(key(-1), ByteSequence.from("x", StandardCharsets.UTF_8))
                            .get(10, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    if (String.valueOf(e.getCause().getMessage()).contains("database space exceeded")) return true;
                    throw e; // not serving yet
                }
                throw new AssertionError("a put above the quota succeeded");
            });
            assertEquals(
                    1,
                    c.getMaintenanceClient()
                            .listAlarms()
                            .get(1, TimeUnit.MINUTES)
                            .getAlarms()
                            .size(),
                    "the alarm is raised");
        } finally {
            process.destroy(); // SIGTERM: etcd closes its files
            if (!process.waitFor(60, TimeUnit.SECONDS))
                process.destroyForcibly().waitFor();
        }
    }

    private static ByteSequence key(int i) {
        return ByteSequence.from(String.format("/registry/blobs/b-%05d", i), StandardCharsets.UTF_8);
    }

    /** Value i: 1 MiB of seeded random bytes (incompressible, regenerated for the check instead of kept). */
    private static byte[] value(int i) {
        byte[] value = new byte[VALUE_BYTES];
        new SplittableRandom(0x5ca1e + i).nextBytes(value);
        return value;
    }
}
