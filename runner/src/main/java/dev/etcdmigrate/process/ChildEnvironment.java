package dev.etcdmigrate.process;

import java.util.Map;
import java.util.TreeMap;

/**
 * The environment of the temporary etcd, etcdctl and etcdutl processes: the runner's own, less
 * every ETCD_* and ETCDCTL_* variable. etcd 3.4+ dies on a variable that duplicates a flag, and a
 * pod's ETCD_LISTEN_CLIENT_URLS would otherwise expose the private migration server.
 */
public final class ChildEnvironment {

    private ChildEnvironment() {}

    public static Map<String, String> scrubbed(Map<String, String> environment, Map<String, String> extra) {
        Map<String, String> env = new TreeMap<>(environment);
        env.keySet().removeIf(ChildEnvironment::isEtcdVariable);
        env.putAll(extra);
        return env;
    }

    public static boolean isEtcdVariable(String name) {
        return name.startsWith("ETCD_") || name.startsWith("ETCDCTL_");
    }

    /** The runner's own settings (ETCD_MIGRATE_JAVA_OPTS): named like etcd's, read by no etcd. */
    public static boolean isRunnerVariable(String name) {
        return name.startsWith("ETCD_MIGRATE_");
    }
}
