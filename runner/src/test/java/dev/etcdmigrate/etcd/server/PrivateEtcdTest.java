package dev.etcdmigrate.etcd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.version.EtcdVersion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How a private etcd that dies before its first write is reported, with stand-in binaries that print what
 * etcd 3.6.16 prints in those cases and exit: the lines it said decide, even when its exit is seen before
 * those lines were read.
 */
class PrivateEtcdTest {

    private static final Release V36 =
            Catalog.bundled().release(EtcdVersion.parse("3.6.16")).orElseThrow();

    @TempDir
    Path dir;

    private final List<Event> events = new CopyOnWriteArrayList<>();

    /** A stand-in etcd-3.6.16 that prints {@code lines} and exits 1. */
    private PrivateEtcd.Settings standIn(String... lines) throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        StringBuilder script = new StringBuilder("#!/bin/sh\ncat <<'EOF'\n");
        for (String line : lines) script.append(line).append('\n');
        script.append("EOF\nexit 1\n");
        Path etcd = bin.resolve("etcd-" + V36.version());
        Files.writeString(etcd, script);
        Files.setPosixFilePermissions(etcd, PosixFilePermissions.fromString("rwx------"));
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

    private PrivateEtcd.EtcdFailedException failure(PrivateEtcd.Settings settings) throws Exception {
        Path data = Files.createDirectories(dir.resolve("data"));
        Children children = new Children(Duration.ofSeconds(5));
        try (PrivateEtcd etcd =
                PrivateEtcd.start(V36, data, settings, List.of(), Log.silent().subscribe(events::add), children)) {
            return assertThrows(PrivateEtcd.EtcdFailedException.class, () -> etcd.awaitWrite(Duration.ofSeconds(30)));
        }
    }

    @Test
    void aMemberWhosePeerAddressIsNotLocalFailsAsARejoinEvenWhenItsExitIsSeenFirst() throws Exception {
        PrivateEtcd.Settings settings = standIn(
                        "{\"level\":\"error\",\"msg\":\"creating peer listener failed\",\"error\":\"listen tcp 192.0.2.1:2380: bind: cannot assign requested address\"}",
                        "{\"level\":\"fatal\",\"msg\":\"discovery failed\",\"error\":\"listen tcp 192.0.2.1:2380: bind: cannot assign requested address\"}")
                .inCluster(new ClusterPeers(
                        "m0=https://127.0.0.1:1,m1=https://127.0.0.1:2",
                        "https://127.0.0.1:1",
                        "https://192.0.2.1:2380",
                        "https://127.0.0.1:3"));
        // the order a busy machine can produce: the etcd has exited, and the probe loop sees that before the
        // output pump (held here on the first line) has passed etcd's last lines to the rejoin watch
        CountDownLatch pumpHeld = new CountDownLatch(1);
        Log log = Log.silent().subscribe(events::add).subscribe(e -> {
            if (e instanceof EtcdEvent.ChildOutput) {
                try {
                    pumpHeld.await();
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        Path data = Files.createDirectories(dir.resolve("data"));
        try (PrivateEtcd etcd =
                PrivateEtcd.start(V36, data, settings, List.of(), log, new Children(Duration.ofSeconds(5)))) {
            long pid = events.stream()
                    .filter(e -> e instanceof EtcdEvent.EtcdStarted)
                    .map(e -> ((EtcdEvent.EtcdStarted) e).pid())
                    .findFirst()
                    .orElseThrow();
            ProcessHandle.of(pid).ifPresent(p -> p.onExit().join());
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            Thread prober = Thread.ofPlatform().start(() -> {
                try {
                    etcd.awaitWrite(Duration.ofSeconds(30));
                } catch (Throwable t) {
                    thrown.set(t);
                }
            });
            // the prober saw the exit and waits for the pump
            Poll.untilTrue(
                    Duration.ofSeconds(10),
                    Duration.ofMillis(1),
                    "the prober waiting",
                    () -> prober.getState() == Thread.State.WAITING);
            assertEquals(Thread.State.WAITING, prober.getState(), "the prober waits for the output of an exited etcd");
            pumpHeld.countDown();
            prober.join();
            assertTrue(thrown.get() instanceof PrivateEtcd.EtcdFailedException, String.valueOf(thrown.get()));
            assertTrue(
                    thrown.get().getMessage().contains("cannot rejoin its cluster"),
                    thrown.get().getMessage());
            assertEquals(
                    List.of("address-not-local"),
                    events.stream()
                            .filter(e -> e instanceof EtcdEvent.RejoinFailed)
                            .map(e -> ((EtcdEvent.RejoinFailed) e).kind())
                            .toList());
        }
    }

    @Test
    void aV2RefusalNamedInTheCatalogIsReportedAsSuch() throws Exception {
        PrivateEtcd.Settings settings = standIn(
                "{\"level\":\"error\",\"msg\":\"illegal v2store content\",\"error\":\"detected disallowed custom content in v2store for stage --v2-deprecation=write-only\"}",
                "{\"level\":\"fatal\",\"msg\":\"discovery failed\",\"error\":\"detected disallowed custom content in v2store for stage --v2-deprecation=write-only\"}");
        for (int i = 0; i < 5; i++) {
            PrivateEtcd.EtcdFailedException failed = failure(settings);
            assertTrue(failed instanceof PrivateEtcd.V2RefusedException, "run " + i + ": " + failed);
            assertEquals(
                    "detected disallowed custom content in v2store",
                    ((PrivateEtcd.V2RefusedException) failed).refusal());
        }
    }

    @Test
    void anyOtherDeathIsAPlainFailure() throws Exception {
        PrivateEtcd.Settings settings = standIn(
                "{\"level\":\"fatal\",\"msg\":\"discovery failed\",\"error\":\"listen tcp 127.0.0.1:2380: bind: address already in use\"}");
        PrivateEtcd.EtcdFailedException failed = failure(settings);
        assertFalse(failed instanceof PrivateEtcd.V2RefusedException, failed.toString());
        assertTrue(failed.getMessage().contains("address already in use"), failed.getMessage());
    }
}
