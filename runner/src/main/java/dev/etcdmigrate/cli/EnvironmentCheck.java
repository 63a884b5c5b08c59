package dev.etcdmigrate.cli;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * The etcd the runner becomes gets the operator's environment as given, and etcd 3.4+ dies on a
 * variable that duplicates a flag on its command line ("conflicting environment variable ETCD_X is
 * shadowed by corresponding command-line flag"). Finding that out after a migration, in a restarting
 * pod, is worse than refusing before it.
 */
public final class EnvironmentCheck {

    private EnvironmentCheck() {}

    /** ETCD_* variables that duplicate a flag in {@code etcdArgs}, e.g. ETCD_NAME with --name. */
    public static List<String> conflicts(Map<String, String> environment, List<String> etcdArgs) {
        TreeSet<String> conflicts = new TreeSet<>();
        for (String arg : etcdArgs) {
            if (!arg.startsWith("--") || arg.length() == 2) continue;
            String flag = arg.substring(2).split("=", 2)[0];
            String variable = "ETCD_" + flag.toUpperCase(Locale.ROOT).replace('-', '_');
            if (environment.containsKey(variable)) conflicts.add(variable + " (--" + flag + ")");
        }
        return List.copyOf(conflicts);
    }
}
