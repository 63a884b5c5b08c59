package dev.etcdmigrate.cli;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the etcd the runner becomes will be told about where its data lives and who it is: etcd's own
 * flags after {@code --}, else their {@code ETCD_*} variables, read the way etcd reads them (Go's flag
 * package: one or two dashes, {@code =value} or the next word; the last occurrence wins; a flag beats
 * its variable). The runner must migrate exactly what that etcd will serve, so these are compared
 * with, or stand in for, the runner's own settings.
 */
public final class EtcdFlags {

    /** Flags that say which data is served and by which member; all take a value. */
    static final List<String> IDENTITY = List.of("data-dir", "wal-dir", "name", "initial-cluster",
            "initial-advertise-peer-urls", "listen-peer-urls", "quota-backend-bytes");
    /** Peer TLS flags: a member rejoining its peers needs the same ones. */
    static final List<String> PEER_TLS = List.of("peer-cert-file", "peer-key-file", "peer-trusted-ca-file", "peer-crl-file",
            "peer-cert-allowed-cn", "peer-cert-allowed-hostname", "peer-client-cert-auth", "peer-auto-tls");
    /** Go boolean flags: never take the next word as their value. */
    private static final Set<String> BOOLEAN = Set.of("peer-client-cert-auth", "peer-auto-tls");

    private final Map<String, String> values;
    private final Map<String, String> sources;

    private EtcdFlags(Map<String, String> values, Map<String, String> sources) {
        this.values = values;
        this.sources = sources;
    }

    public static EtcdFlags read(List<String> etcdArgs, Map<String, String> environment) {
        Map<String, String> values = new LinkedHashMap<>();
        Map<String, String> sources = new LinkedHashMap<>();
        for (int i = 0; i < etcdArgs.size(); i++) {
            String arg = etcdArgs.get(i);
            if (arg.equals("--")) break; // Go's flag package stops there
            if (!arg.startsWith("-") || arg.equals("-")) continue;
            String body = arg.startsWith("--") ? arg.substring(2) : arg.substring(1);
            int eq = body.indexOf('=');
            String name = eq < 0 ? body : body.substring(0, eq);
            if (!IDENTITY.contains(name) && !PEER_TLS.contains(name)) continue;
            String value;
            if (eq >= 0) {
                value = body.substring(eq + 1);
            } else if (BOOLEAN.contains(name)) {
                value = "true";
            } else if (i + 1 < etcdArgs.size()) {
                value = etcdArgs.get(++i);
            } else {
                continue; // etcd itself refuses a flag without its value; the preflight reports it
            }
            values.put(name, value);
            sources.put(name, "etcd's --" + name + " after --");
        }
        for (String name : concat(IDENTITY, PEER_TLS)) {
            String variable = variable(name);
            String value = environment.get(variable);
            if (!values.containsKey(name) && value != null && !value.isEmpty()) {
                values.put(name, value);
                sources.put(name, "$" + variable + " (etcd's --" + name + ")");
            }
        }
        return new EtcdFlags(Map.copyOf(values), Map.copyOf(sources));
    }

    /** etcd's variable for a flag: ETCD_ and the flag in upper case with underscores. */
    static String variable(String flag) {
        return "ETCD_" + flag.toUpperCase(Locale.ROOT).replace('-', '_');
    }

    public Optional<String> get(String name) {
        return Optional.ofNullable(values.get(name));
    }

    /** Where a value came from, for messages. */
    public String source(String name) {
        return sources.getOrDefault(name, "etcd's --" + name);
    }

    /** The peer TLS flags etcd will run with, as {@code --flag=value} arguments. */
    public List<String> peerTlsArgs() {
        return PEER_TLS.stream().filter(values::containsKey).map(f -> "--" + f + "=" + values.get(f)).toList();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }
}
