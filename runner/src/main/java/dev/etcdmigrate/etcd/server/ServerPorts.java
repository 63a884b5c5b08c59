package dev.etcdmigrate.etcd.server;

import java.net.URI;

/** The private loopback ports of a migration etcd. Never a wildcard address, never the operator's URLs. */
public record ServerPorts(int client, int peer) {

    public static final String LOOPBACK = "127.0.0.1";

    public ServerPorts {
        if (client < 1 || client > 65535 || peer < 1 || peer > 65535 || client == peer) {
            throw new IllegalArgumentException(
                    "client and peer ports must be distinct ports in 1..65535, got " + client + " and " + peer);
        }
    }

    public URI clientUrl() {
        return URI.create("http://" + LOOPBACK + ":" + client);
    }

    public URI peerUrl(boolean tls) {
        return URI.create((tls ? "https://" : "http://") + LOOPBACK + ":" + peer);
    }
}
