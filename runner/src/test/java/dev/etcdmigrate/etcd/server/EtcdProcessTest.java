package dev.etcdmigrate.etcd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.process.LinePump;
import dev.etcdmigrate.version.EtcdVersion;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The stop of one etcd child, with /bin/sh stand-ins: SIGTERM, the deadline, SIGKILL, and every exit reaped. */
class EtcdProcessTest {

    private static final Release V36 =
            Catalog.bundled().release(EtcdVersion.parse("3.6.16")).orElseThrow();

    private final List<Event> events = new CopyOnWriteArrayList<>();
    private final Log log = Log.silent().subscribe(events::add);
    private final Children children = new Children(Duration.ofSeconds(5));

    private EtcdProcess sh(String script) throws Exception {
        EtcdProcess process =
                EtcdProcess.start(V36, "etcd-test", List.of("/bin/sh", "-c", script), Map.of(), false, children, log);
        process.capture(new LinePump(log, "etcd-test"));
        // the shell's trap is set once it said so: a SIGTERM before would end it as a clean stop
        Poll.untilTrue(
                Duration.ofSeconds(10),
                Duration.ofMillis(10),
                "the shell's trap set",
                () -> process.output().lastLines().contains("ready"));
        return process;
    }

    @Test
    void aChildThatIgnoresSigtermIsKilledAtTheDeadlineAndReaped() throws Exception {
        EtcdProcess process = sh("trap '' TERM; echo ready; while :; do sleep 0.05; done");
        var failure = assertThrows(PrivateEtcd.EtcdFailedException.class, () -> process.stop(Duration.ofMillis(300)));
        assertTrue(
                failure.getMessage().contains("did not stop within 0 s of SIGTERM and was killed"),
                failure::getMessage);
        assertFalse(process.isAlive());
        assertEquals(0, children.size());
    }

    @Test
    void aCleanStopIsReportedWithItsCode() throws Exception {
        EtcdProcess process = sh("trap 'exit 0' TERM; echo ready; while :; do sleep 0.05; done");
        process.stop(Duration.ofSeconds(5));
        assertTrue(events.contains(new EtcdEvent.EtcdStopped(V36.version(), true, 0)), events::toString);
        assertEquals(0, children.size());
    }

    @Test
    void anUncleanExitFailsTheStopWithItsLastLines() throws Exception {
        EtcdProcess process = sh("trap 'echo closing; exit 3' TERM; echo ready; while :; do sleep 0.05; done");
        var failure = assertThrows(PrivateEtcd.EtcdFailedException.class, () -> process.stop(Duration.ofSeconds(5)));
        assertTrue(
                failure.getMessage().startsWith("etcd-test exited with 3 when stopped: last output: ready | closing"),
                failure::getMessage);
        assertTrue(events.contains(new EtcdEvent.EtcdStopped(V36.version(), false, 3)), events::toString);
    }

    @Test
    void closeLeavesNothingRunningAndNothingRegistered() throws Exception {
        EtcdProcess process = sh("echo ready; while :; do sleep 0.05; done");
        process.close();
        assertFalse(process.isAlive());
        assertEquals(0, children.size());
    }
}
