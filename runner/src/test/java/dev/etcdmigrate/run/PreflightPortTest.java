package dev.etcdmigrate.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.etcdmigrate.etcd.server.ServerPorts;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.junit.jupiter.api.Test;

/**
 * Preflight's port probe binds as etcd does (SO_REUSEADDR before the bind): a port whose last connection
 * is in TIME_WAIT, as a member's own stopped etcd leaves its peer port, is free; a listening one is taken.
 */
class PreflightPortTest {

    @Test
    void aPortInTimeWaitIsFreeAListeningOneIsTaken() throws Exception {
        InetAddress loopback = InetAddress.getByName(ServerPorts.LOOPBACK);
        try (ServerSocket listener = new ServerSocket(0, 1, loopback)) {
            assertThrows(IOException.class, () -> Preflight.probeBind(listener.getLocalPort()), "listening: taken");
        }
        Preflight.probeBind(portInTimeWait(loopback));
    }

    /**
     * A port whose last connection the kernel keeps in TIME_WAIT, shown by the control: without SO_REUSEADDR the
     * kernel refuses its bind. The closing handshake ends asynchronously, so a port the control can still bind is
     * not yet (or no longer) there: another connection is made, a few times at most.
     */
    private static int portInTimeWait(InetAddress loopback) throws Exception {
        for (int attempt = 0; attempt < 5; attempt++) {
            int port;
            try (ServerSocket listener = new ServerSocket(0, 1, loopback)) {
                port = listener.getLocalPort();
                try (Socket client = new Socket(loopback, port);
                        Socket accepted = listener.accept()) {
                    accepted.close(); // the side that closes first keeps the port in TIME_WAIT
                    assertEquals(-1, client.getInputStream().read());
                }
            }
            try (ServerSocket plain = new ServerSocket()) {
                plain.setReuseAddress(false);
                plain.bind(new InetSocketAddress(loopback, port), 1);
            } catch (IOException inTimeWait) {
                return port;
            }
        }
        throw new AssertionError("no port stayed in TIME_WAIT in 5 connections");
    }
}
