package dev.etcdmigrate.config;

import dev.etcdmigrate.error.UsageException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A lone etcd or one member of a cluster, decided once (from --initial-cluster, and on kubeadm's first node from
 * the data's records): everything that differs between the two (the private etcd's peers and ports, rolling legs,
 * the cluster's rules) asks this type, not a count.
 */
public sealed interface Topology {

    /** The members as the flags (or the data) name them; a snapshot restore gives the restored member these. */
    Peers peers();

    /** A one-member cluster: its private etcd listens on loopback only and answers to nobody. */
    record Single(Peers peers) implements Topology {}

    /**
     * One member of a cluster of {@link #size()}: its private etcd rejoins the peers with the real etcd's peer TLS,
     * and the cluster is asked (with the member's client TLS) before each leg.
     */
    record Member(Peers peers, PeerTls peerTls, ClientTls clientTls) implements Topology {
        public int size() {
            return peers.count();
        }
    }

    static Topology of(Peers peers, PeerTls peerTls, ClientTls clientTls) {
        return peers.count() > 1 ? new Member(peers, peerTls, clientTls) : new Single(peers);
    }

    /**
     * etcd's peer TLS flags: a member rejoining its peers needs the same ones as the real etcd.
     *
     * @param args those ETCD_CREDS does not already give, as {@code --flag=value}, for the private etcd
     */
    record PeerTls(List<String> args, Optional<Path> certFile, Optional<Path> keyFile, Optional<Path> trustedCaFile) {

        static final List<String> FLAGS = List.of(
                "peer-cert-file",
                "peer-key-file",
                "peer-trusted-ca-file",
                "peer-crl-file",
                "peer-cert-allowed-cn",
                "peer-cert-allowed-hostname",
                "peer-client-cert-auth",
                "peer-auto-tls");

        /** From etcd's flags after -- and ETCD_CREDS; the same flag with another value in each is an error. */
        public static PeerTls of(EtcdCommandLine etcd, EtcdCommandLine creds) throws UsageException {
            List<String> args = new ArrayList<>();
            for (String flag : FLAGS) {
                Optional<String> theirs = etcd.get(flag);
                Optional<String> ours = creds.flag(flag);
                if (theirs.isPresent() && ours.isPresent() && !theirs.equals(ours)) {
                    throw new UsageException("$ETCD_CREDS gives --" + flag + "=" + ours.get() + " but "
                            + etcd.source(flag) + " is '" + theirs.get()
                            + "': the private etcd would rejoin its peers with other TLS files than the real one"
                            + " (nothing was changed)");
                }
                if (theirs.isPresent() && ours.isEmpty()) args.add("--" + flag + "=" + theirs.get());
            }
            return new PeerTls(
                    List.copyOf(args),
                    etcd.get("peer-cert-file").map(Path::of),
                    etcd.get("peer-key-file").map(Path::of),
                    etcd.get("peer-trusted-ca-file").map(Path::of));
        }
    }

    /**
     * How the member's clients reach the cluster: etcd's --advertise-client-urls (else http://localhost:2379) and its
     * client TLS files (--cert-file, --key-file, --trusted-ca-file after --).
     */
    record ClientTls(
            String advertiseClientUrls, Optional<Path> certFile, Optional<Path> keyFile, Optional<Path> trustedCaFile) {

        /** The advertised client URLs one by one (etcd's comma-separated list, blanks dropped). */
        public java.util.List<String> clientUrls() {
            return java.util.Arrays.stream(advertiseClientUrls.split(","))
                    .map(String::trim)
                    .filter(u -> !u.isEmpty())
                    .toList();
        }

        public static ClientTls of(EtcdCommandLine etcd) {
            return new ClientTls(
                    etcd.get("advertise-client-urls").orElse("http://localhost:2379"),
                    etcd.get("cert-file").map(Path::of),
                    etcd.get("key-file").map(Path::of),
                    etcd.get("trusted-ca-file").map(Path::of));
        }
    }
}
