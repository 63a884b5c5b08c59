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
        int port;
        try (ServerSocket listener = new ServerSocket(0, 1, loopback)) {
            port = listener.getLocalPort();
            assertThrows(IOException.class, () -> Preflight.probeBind(listener.getLocalPort()), "listening: taken");
            try (Socket client = new Socket(loopback, port);
                    Socket accepted = listener.accept()) {
                accepted.close(); // the side that closes first keeps the port in TIME_WAIT
                assertEquals(-1, client.getInputStream().read());
            }
        }
        // the control: without SO_REUSEADDR the kernel refuses the bind while the port is in TIME_WAIT
        try (ServerSocket plain = new ServerSocket()) {
            plain.setReuseAddress(false);
            assertThrows(IOException.class, () -> plain.bind(new InetSocketAddress(loopback, port), 1), "TIME_WAIT");
        }
        Preflight.probeBind(port);
    }
}
