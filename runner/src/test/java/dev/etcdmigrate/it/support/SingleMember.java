package dev.etcdmigrate.it.support;

import java.nio.file.Path;
import java.util.List;

/** The flags of a one-member etcd a test runs itself (not through PrivateEtcd): its name, data dir and URLs. */
public final class SingleMember {

    private SingleMember() {}

    public static List<String> flags(String name, Path data, String clientUrl, String peerUrl) {
        return List.of(
                "--name",
                name,
                "--data-dir",
                data.toString(),
                "--listen-client-urls",
                clientUrl,
                "--advertise-client-urls",
                clientUrl,
                "--listen-peer-urls",
                peerUrl,
                "--initial-advertise-peer-urls",
                peerUrl,
                "--initial-cluster",
                name + "=" + peerUrl);
    }
}
