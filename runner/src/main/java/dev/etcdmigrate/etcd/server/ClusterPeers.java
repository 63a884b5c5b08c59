package dev.etcdmigrate.etcd.server;

/**
 * How a member of a multi-member cluster meets its peers while it migrates: the operator's own
 * --initial-cluster, advertised and listened peer URLs (peer TLS files come through ETCD_CREDS), and the member's
 * own advertised client URLs, which its private etcd publishes instead of its loopback one: the member is out of
 * service while it migrates, and its listed client URLs must say so (docs/ha.md, "Addresses").
 */
public record ClusterPeers(
        String initialCluster, String advertisePeerUrls, String listenPeerUrls, String advertiseClientUrls) {}
