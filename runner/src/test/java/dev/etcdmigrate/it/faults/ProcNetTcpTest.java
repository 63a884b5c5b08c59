package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The /proc/net/tcp parsing the exposure checks rely on, on rows copied from a real x86-64 kernel. */
class ProcNetTcpTest {

    private static final String TCP = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 00000000:07E8 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1557 1 00000000904529bb 100 0 0 10 0
               1: 0100007F:ABE5 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2001 1 00000000ad8d6d95 100 0 0 10 0
               2: 0100007F:D0EA 0100007F:92AF 06 00000000:00000000 03:00000FB1 00000000     0        0 0 3 000000007d2b6c9c
               3: 0A00020F:0016 0A000202:C350 01 00000000:00000000 02:000A7A2D 00000000     0        0 3003 2 00000000b1bbb9dc 20 4 30 10 -1
            """;

    private static final String TCP6 = """
              sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 00000000000000000000000000000000:0050 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4004 1 0000000000000000 100 0 0 10 0
               1: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 5005 1 0000000000000000 100 0 0 10 0
               2: 0000000000000000FFFF00000100007F:9010 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 6006 1 0000000000000000 100 0 0 10 0
               3: 0000000000000000FFFF00000000000A:9011 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 7007 1 0000000000000000 100 0 0 10 0
               4: 0000000000000000FFFF00000100007F:D0F8 0000000000000000FFFF00000100007F:92AF 06 00000000:00000000 03:00000FB0 00000000     0        0 0 3 00000000d0db080c
            """;

    @Test
    void ipv4RowsGiveInodeAddressPortAndListenState() {
        List<ProcNetTcp.Socket> sockets = ProcNetTcp.parse(TCP, ByteOrder.LITTLE_ENDIAN);
        assertEquals(4, sockets.size());

        ProcNetTcp.Socket wildcard = sockets.get(0);
        assertEquals(1557, wildcard.inode());
        assertEquals("0.0.0.0:2024", wildcard.toString());
        assertTrue(wildcard.listening());
        assertFalse(wildcard.loopback(), "0.0.0.0 listens on every interface");

        ProcNetTcp.Socket loopback = sockets.get(1);
        assertEquals("127.0.0.1:44005", loopback.toString());
        assertTrue(loopback.listening() && loopback.loopback());

        assertFalse(sockets.get(2).listening(), "TIME_WAIT (06) is no listener");
        assertEquals("15.2.0.10:22", sockets.get(3).toString());
        assertFalse(sockets.get(3).listening(), "ESTABLISHED (01) is no listener");
        assertFalse(sockets.get(3).loopback());
    }

    @Test
    void ipv6RowsTellTheWildcardAndLoopbackApart() {
        List<ProcNetTcp.Socket> sockets = ProcNetTcp.parse(TCP6, ByteOrder.LITTLE_ENDIAN);
        assertEquals(5, sockets.size());

        ProcNetTcp.Socket any = sockets.get(0);
        assertEquals("[0:0:0:0:0:0:0:0]:80", any.toString());
        assertTrue(any.listening());
        assertFalse(any.loopback(), ":: listens on every interface, v4 and v6");

        ProcNetTcp.Socket one = sockets.get(1);
        assertEquals("[0:0:0:0:0:0:0:1]:8080", one.toString());
        assertTrue(one.listening() && one.loopback(), "::1");

        assertEquals("127.0.0.1:36880", sockets.get(2).toString(), "::ffff:127.0.0.1 is IPv4 loopback");
        assertTrue(sockets.get(2).loopback());
        assertEquals("10.0.0.0:36881", sockets.get(3).toString());
        assertFalse(sockets.get(3).loopback(), "::ffff:10.0.0.0 is not loopback");
        assertEquals(6006, sockets.get(2).inode());
    }

    @Test
    void aBigEndianKernelPrintsTheBytesInOrder() {
        String row =
                "   0: 7F000001:0050 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 9 1 0 100 0 0 10 0\n";
        assertEquals(
                "127.0.0.1:80",
                ProcNetTcp.parse(row, ByteOrder.BIG_ENDIAN).getFirst().toString());
    }

    @Test
    void thisMachinesTablesParse() {
        // every row of the live tables must parse; the sample above is what the exposure checks depend on
        ProcNetTcp.read().forEach(s -> assertTrue(s.port() >= 0 && s.port() <= 65535, s.toString()));
    }
}
