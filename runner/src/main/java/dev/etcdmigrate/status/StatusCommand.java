package dev.etcdmigrate.status;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.cluster.RolloutCoordinator;
import dev.etcdmigrate.config.StatusConfig;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.etcd.client.ClusterClient;
import dev.etcdmigrate.etcd.client.ClusterIdentities;
import dev.etcdmigrate.etcd.client.PemTls;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code etcd-migrate status}: one reading of a cluster's rollout, over its client URLs with the TLS files etcd's
 * own flags name (after {@code --}, or ETCD_CERT_FILE, ETCD_KEY_FILE, ETCD_TRUSTED_CA_FILE), so it runs the same
 * way from an operator's shell and with {@code kubectl exec} in any member's pod. Reads only; changes nothing.
 */
public final class StatusCommand {

    /**
     * The time to connect, TLS handshake included: a JVM started for one reading makes its first handshake cold, and
     * exec'd into a member's container it runs on that container's share of the CPU, where the runner's 2 s run out
     * while etcd serves (the JDK reports that as "HTTP connect timed out"). An operator waits for the one reading; a
     * member that does not answer costs at most this.
     */
    static final Duration CONNECT = Duration.ofSeconds(10);

    /** Each request's time; the JDK counts connecting in it, so it is longer than {@link #CONNECT}. */
    static final Duration REQUEST = Duration.ofSeconds(15);

    private StatusCommand() {}

    /** The client status speaks with, on the TLS files etcd's own flags name. */
    static HttpClient httpClient(StatusConfig options) throws UsageException, IOException {
        try {
            return PemTls.httpClient(options.certFile(), options.keyFile(), options.trustedCaFile(), CONNECT);
        } catch (GeneralSecurityException e) {
            throw new UsageException("the client TLS files (etcd's --cert-file, --key-file, --trusted-ca-file) cannot"
                    + " be used: " + e.getMessage());
        }
    }

    public static int run(StatusConfig options, PrintStream out)
            throws MigrateException, IOException, InterruptedException {
        HttpClient http = httpClient(options);
        List<URI> endpoints = options.endpoints();
        // the cluster calls go through the JSON gateway of the line the cluster runs (catalog); /version needs none
        String gateway = gateway(new ClusterClient(http, endpoints, "/v3", REQUEST));
        // every client URL asked on its own: members of two clusters (a restore on some members only) answer side by
        // side, which the cluster view below, the first member that answers, cannot show
        ClusterAnswers.Reading answered = ClusterAnswers.read(new ClusterIdentities(http, gateway, REQUEST), endpoints);
        Optional<RestoreStatus.Reading> restore = options.restoreSha256().map(sha -> RestoreStatus.read(answered, sha));
        // the cluster view is the restored cluster's when one of its members answers: a member still on the data
        // from before the restore answers for another cluster, and its member list is not this cluster's
        List<URI> asked =
                new ArrayList<>(restore.map(RestoreStatus.Reading::restoredUrls).orElse(List.of()));
        endpoints.stream().filter(u -> !asked.contains(u)).forEach(asked::add);
        ClusterClient cluster = new ClusterClient(http, asked, gateway, REQUEST);
        String remove = removeCommand(options);
        StatusReader reader = new StatusReader(
                cluster, options.target(), options.stuckAfter(), revision -> remove.replace("REV", "" + revision));
        List<String> asking = endpoints.stream().map(URI::toString).toList();
        StatusReport read;
        try {
            read = reader.read(asking, Instant.now());
        } catch (IOException unreachable) {
            // mid-restore no cluster may have a quorum to answer (etcd serves no client before it has one): what the
            // members said of themselves is still the restore's answer
            if (restore.map(r -> r.row().members().isEmpty()).orElse(true)) throw unreachable;
            read = StatusReport.unanswered(asking, options.target().map(Object::toString), unreachable.getMessage());
        }
        StatusReport clusterView = read;
        StatusReport report =
                restore.map(r -> clusterView.withRestore(r.row())).orElse(read).withAnswers(answered.answers());
        out.println(options.format().equals("json") ? StatusJson.render(report) : StatusText.render(report));
        return exitCode(report.state());
    }

    static int exitCode(StatusReport.State state) {
        return switch (state) {
            case DONE -> ExitStatus.OK.code();
            case ROLLING -> ExitStatus.ROLLING.code();
            case STUCK -> ExitStatus.STUCK.code();
        };
    }

    private static String gateway(ClusterClient probe) throws MigrateException, IOException, InterruptedException {
        Catalog catalog = Catalog.bundled();
        return probe.clusterVersion()
                .flatMap(catalog::line)
                .map(r -> r.line().jsonGateway())
                .filter(g -> !g.isEmpty())
                .orElse("/v3");
    }

    /**
     * etcdctl's transaction that deletes the record only while its mod revision is still the one read (so a runner
     * that took it meanwhile keeps it); REV stands for the revision.
     */
    static String removeCommand(StatusConfig options) {
        StringBuilder tls = new StringBuilder();
        options.trustedCaFile().ifPresent(f -> tls.append(" --cacert=").append(f));
        options.certFile().ifPresent(f -> tls.append(" --cert=").append(f));
        options.keyFile().ifPresent(f -> tls.append(" --key=").append(f));
        return "printf 'mod(\"" + RolloutCoordinator.RECORD_KEY + "\") = \"REV\"\\n\\ndel "
                + RolloutCoordinator.RECORD_KEY + "\\n\\n\\n' | ETCDCTL_API=3 etcdctl --endpoints="
                + String.join(
                        ",", options.endpoints().stream().map(URI::toString).toList()) + tls + " txn";
    }
}
