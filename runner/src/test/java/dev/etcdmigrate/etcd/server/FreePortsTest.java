package dev.etcdmigrate.etcd.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Where FreePorts looks for ports, given the kernel's ephemeral range and reserved ports as text. */
class FreePortsTest {

    private static List<String> ranges(FreePorts.Pool pool) {
        List<String> out = new ArrayList<>();
        for (int[] r : pool.ranges()) out.add(r[0] + "-" + r[1]);
        return out;
    }

    /**
     * On this machine, the kernel's own file: JDK 25's Files.readString/readAllBytes of a /proc/sys file (size 0)
     * returns only its first byte ("3" of "32768\t60999"), so the pool would be empty and every pick would come
     * from the ephemeral range, where an outgoing connection can take the port before etcd binds it
     * (ConvertToV3IT's "bind: address already in use" on 127.0.0.1:37089 in a CI run with two lanes).
     */
    @Test
    void theKernelsRangeIsReadWhole() throws Exception {
        java.nio.file.Path file = java.nio.file.Path.of("/proc/sys/net/ipv4/ip_local_port_range");
        org.junit.jupiter.api.Assumptions.assumeTrue(java.nio.file.Files.isReadable(file), "needs Linux /proc");
        String text;
        try (var reader = java.nio.file.Files.newBufferedReader(file)) {
            text = reader.readLine();
        }
        assertEquals(text.strip(), FreePorts.read(file).strip());
        String[] range = text.strip().split("\\s+");
        int start = Integer.parseInt(range[0]);
        int end = Integer.parseInt(range[1]);
        org.junit.jupiter.api.Assumptions.assumeTrue(
                start - 15000 >= 1000 || 65535 - end >= 1000, "no room beside the range here");
        for (int i = 0; i < 20; i++) {
            ServerPorts ports = FreePorts.pick();
            for (int port : List.of(ports.client(), ports.peer())) {
                assertTrue(port < start || port > end, ports + " inside the ephemeral range " + text);
            }
        }
    }

    @Test
    void roomBelowAndAboveTheEphemeralRangeIsUsed() {
        assertEquals(List.of("15000-32767", "61000-65535"), ranges(FreePorts.Pool.of("32768\t60999\n", "")));
    }

    @Test
    void noRoomBelowStillUsesTheRoomAbove() {
        // the CI machine's case: a range starting near 15000 left only the kernel's choice before
        assertEquals(List.of("61000-65535"), ranges(FreePorts.Pool.of("15500 60999", "20000-24999")));
    }

    @Test
    void lessThanAThousandPortsIsNoRoom() {
        assertEquals(List.of("15000-15999"), ranges(FreePorts.Pool.of("16000 64536", "")));
        assertEquals(List.of(), ranges(FreePorts.Pool.of("15999 64536", "")));
    }

    @Test
    void withNoGapTheReservedPortsAreUsedFrom15000Up() {
        assertEquals(
                List.of("20000-24999", "30000-30000", "15000-15100"),
                ranges(FreePorts.Pool.of("1024 65535", "8080,20000-24999,30000,9000-15100\n")));
    }

    @Test
    void withNoGapAndNothingReservedThePoolIsEmpty() {
        assertEquals(0, FreePorts.Pool.of("1024 65535", "\n").size());
        assertEquals(0, FreePorts.Pool.of("1024 65535", "").size());
    }

    @Test
    void unreadableOrMalformedFilesLeaveOnlyWhatCanBeRead() {
        assertEquals(0, FreePorts.Pool.of("", "").size());
        assertEquals(List.of("20000-20009"), ranges(FreePorts.Pool.of("garbage", "x,20000-20009,5-3,1-2-3")));
    }

    @Test
    void portsComeFromThePoolInOrder() {
        FreePorts.Pool pool = FreePorts.Pool.of("1024 65535", "20000-20001,30000");
        assertEquals(3, pool.size());
        assertEquals(List.of(20000, 20001, 30000), List.of(pool.port(0), pool.port(1), pool.port(2)));
    }

    @Test
    void aPickedPortIsInThePoolBindableAndNotTheOneToAvoid() {
        FreePorts.Pool pool = FreePorts.Pool.of("1024 65535", "40000-40999");
        for (int i = 0; i < 20; i++) {
            int first = FreePorts.pickOne(pool, -1);
            int second = FreePorts.pickOne(pool, first);
            assertTrue(first >= 40000 && first <= 40999, "in the reserved block: " + first);
            assertTrue(second >= 40000 && second <= 40999, "in the reserved block: " + second);
            assertNotEquals(first, second);
        }
    }

    @Test
    void anEmptyPoolFallsBackToTheKernelsChoice() {
        int port = FreePorts.pickOne(FreePorts.Pool.of("1024 65535", ""), -1);
        assertTrue(port >= 1 && port <= 65535);
    }

    @Test
    void pickGivesTwoDistinctPorts() {
        ServerPorts ports = FreePorts.pick();
        assertNotEquals(ports.client(), ports.peer());
    }
}
