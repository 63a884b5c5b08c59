package dev.etcdmigrate.etcd;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;

/** Loopback ports free right now, for demos and tests that must not assume 2379/2380 are free. */
public final class FreePorts {

    private FreePorts() {}

    public static ServerPorts pick() {
        try (ServerSocket a = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                ServerSocket b = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return new ServerPorts(a.getLocalPort(), b.getLocalPort());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
