package dev.etcdmigrate.log;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * --etcd-output for the text log: every line the private etcds and tools print, or only the ones that
 * matter to an operator (warnings, errors, fatal lines, panics). The file under .etcd-migrate/ keeps all.
 */
public enum EtcdOutput {
    ALL,
    ERRORS;

    // zap JSON levels, capnslog's "W |"/"E |"/"C |"/"F |", a Go panic or fatal error
    private static final Pattern IMPORTANT = Pattern.compile(
            "\"level\":\"(warn|error|dpanic|panic|fatal)\"|\\s[WECF] \\| |^panic: |^fatal error: |^Error: |^\\{\"level\":\"(warn|error)");

    // etcd's warning about the runner's own files in the data dir (.etcd-migrate/, version.txt): expected, not the
    // operator's concern
    private static final Pattern OURS = Pattern.compile("found invalid file(/dir)? .*(\\.etcd-migrate|version\\.txt)"
            + "|\"msg\":\"found invalid file under data directory\",\"filename\":\"(\\.etcd-migrate|version\\.txt)\"");

    public static boolean isImportant(String line) {
        return IMPORTANT.matcher(line).find() && !OURS.matcher(line).find();
    }

    /** @throws IllegalArgumentException naming the accepted values */
    public static EtcdOutput parse(String value) {
        for (EtcdOutput o : values()) {
            if (o.name().toLowerCase(Locale.ROOT).equals(value)) return o;
        }
        throw new IllegalArgumentException("--etcd-output must be all or errors, not '" + value + "'");
    }
}
