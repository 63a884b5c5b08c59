package dev.etcdmigrate.etcd.server;

/**
 * How a member of a multi-member cluster meets its peers while it migrates: the operator's own
 * --initial-cluster, advertised and listened peer URLs (peer TLS files come through ETCD_CREDS).
 */
public record ClusterPeers(String initialCluster, String advertisePeerUrls, String listenPeerUrls) {}
