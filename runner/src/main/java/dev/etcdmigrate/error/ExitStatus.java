package dev.etcdmigrate.error;

import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The runner's exit statuses, part of the operator contract: what Main returns, what --help prints and
 * what the README's table says (HelpTest and ExitStatusTest compare them with this one table).
 */
public enum ExitStatus {
    OK(0, "done (or exec'd: from then on the status is etcd's)"),
    FAILED(1, "a step failed (version.txt names the last completed step)"),
    USAGE(2, "bad flags, environment, binaries or version.txt (nothing touched)"),
    REFUSED(3, "refused: the transition, or the data contradicts version.txt or etcd's flags (nothing touched)"),
    ROLLING(4, "status: a rollout is under way (members on several lines, a restart record or a downgrade job)"),
    STUCK(5, "status: a stale restart record, or one held longer than --stuck-after"),
    TERMINATED(143, "stopped by SIGTERM (children stopped first); after exec, etcd's own status on SIGTERM");

    private final int code;
    private final String meaning;

    ExitStatus(int code, String meaning) {
        this.code = code;
        this.meaning = meaning;
    }

    public int code() {
        return code;
    }

    public String meaning() {
        return meaning;
    }

    /** One sentence for --help: "Exit status: 0 done ...; 1 ...". */
    public static String sentence() {
        return "Exit status: "
                + Arrays.stream(values()).map(s -> s.code + " " + s.meaning).collect(Collectors.joining("; ")) + ".";
    }

    /** The README's table (Markdown). */
    public static String markdownTable() {
        return "| exit | meaning |\n|---|---|\n"
                + Arrays.stream(values())
                        .map(s -> "| " + s.code + " | " + s.meaning + " |\n")
                        .collect(Collectors.joining());
    }
}
