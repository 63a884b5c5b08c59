package dev.etcdmigrate.etcd.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports free right now, for demos and tests that must not assume 2379/2380 are free.
 *
 * <p>Chosen below the kernel's ephemeral range where there is room: a port from that range, once
 * released, can be handed to any outgoing connection as its local port before the etcd meant for it
 * binds it ("address already in use"); ports below the range are never given out that way.
 */
public final class FreePorts {

    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final int LOWEST = 15000;
    private static final int ATTEMPTS = 200;

    private FreePorts() {}

    public static ServerPorts pick() {
        int client = pickOne(-1);
        return new ServerPorts(client, pickOne(client));
    }

    private static int pickOne(int not) {
        int below = ephemeralStart();
        if (below - LOWEST >= 1000) {
            for (int i = 0; i < ATTEMPTS; i++) {
                int port = ThreadLocalRandom.current().nextInt(LOWEST, below);
                if (port != not && bindable(port)) {
                    return port;
                }
            }
        }
        // no room below the range, or all tried were taken: let the kernel choose, never the port already picked
        for (int i = 0; ; i++) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                if (socket.getLocalPort() != not || i == ATTEMPTS) return socket.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    /** The first port of the kernel's ephemeral range (Linux); 0 when it cannot be read. */
    private static int ephemeralStart() {
        try {
            return Integer.parseInt(Files.readString(EPHEMERAL_RANGE).trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
