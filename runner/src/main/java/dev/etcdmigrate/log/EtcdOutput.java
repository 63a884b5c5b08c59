package dev.etcdmigrate.log;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * --etcd-output for the text log: every line the private etcds and tools print, or (the default) only the ones that
 * matter to an operator (warnings, errors, fatal lines, panics the runner did not cause itself), with the rest shown
 * when the run fails. The file under .etcd-migrate/ keeps all.
 */
public enum EtcdOutput {
    ALL,
    ERRORS;

    // zap JSON levels, capnslog's "W |"/"E |"/"C |"/"F |", a Go panic or fatal error
    private static final Pattern IMPORTANT = Pattern.compile(
            "\"level\":\"(warn|error|dpanic|panic|fatal)\"|\\s[WECF] \\| |^panic: |^fatal error: |^Error: |^\\{\"level\":\"(warn|error)");

    // What the runner causes itself, expected and not the operator's concern: etcd's warning about the runner's own
    // files in the data dir (.etcd-migrate/, version.txt), the single-port warning that the private etcd's one
    // client URL (HTTP and gRPC on 127.0.0.1:--port) makes 3.4+ print, and the warning about etcd's default auth
    // token, which the private etcd (loopback only, auth off) runs with. (etcd's complaints while it shuts down after
    // the
    // runner's SIGTERM are classified by the pump, which knows it sent one.)
    private static final Pattern OURS = Pattern.compile("found invalid file(/dir)? .*(\\.etcd-migrate|version\\.txt)"
            + "|\"msg\":\"found invalid file under data directory\",\"filename\":\"(\\.etcd-migrate|version\\.txt)\""
            + "|Running http and grpc server on single port"
            + "|simple token is not cryptographically signed");

    public static boolean isImportant(String line) {
        return looksImportant(line) && !isExpected(line);
    }

    /** A warning, an error or worse by its level, whoever caused it. */
    public static boolean looksImportant(String line) {
        return IMPORTANT.matcher(line).find();
    }

    /** A line the runner's own setup makes etcd print (see OURS). */
    public static boolean isExpected(String line) {
        return OURS.matcher(line).find();
    }

    /** @throws IllegalArgumentException naming the accepted values */
    public static EtcdOutput parse(String value) {
        for (EtcdOutput o : values()) {
            if (o.name().toLowerCase(Locale.ROOT).equals(value)) return o;
        }
        throw new IllegalArgumentException("--etcd-output must be all or errors, not '" + value + "'");
    }
}
