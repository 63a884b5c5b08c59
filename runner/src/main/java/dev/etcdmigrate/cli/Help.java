package dev.etcdmigrate.cli;

import dev.etcdmigrate.error.ExitStatus;
import java.util.List;

/**
 * --help texts, generated from the flag tables so that every flag and variable is documented: a short overview
 * ({@code etcd-migrate --help}) and one text per command ({@code etcd-migrate COMMAND --help}, also {@code -h}
 * and {@code etcd-migrate help COMMAND}).
 */
public final class Help {

    private Help() {}

    /** The example of version.txt's format: a version the catalog bundles (HelpTest checks it), so it is accepted. */
    public static final String VERSION_FILE_EXAMPLE = "3.5.35/etcd3";

    private static final String USAGE_MIGRATE =
            "etcd-migrate [migrate] [FLAGS] [-- ETCD-ARGS...]   migrate, then exec etcd-<target> with ETCD-ARGS";
    private static final String USAGE_PLAN =
            "etcd-migrate plan [-o json] [FLAGS]                print the plan (-o json: as data); change nothing";
    private static final String USAGE_INSPECT =
            "etcd-migrate inspect --data-dir D [-o json]        what wrote the data dir, with the evidence, and each\n"
                    + "                                                     target's plan; offline, changes nothing"
                    + " (docs/inspect.md)";
    private static final String USAGE_STATUS =
            "etcd-migrate status [-o json] [FLAGS] [-- ETCD-ARGS] a cluster's rollout: members, record, who waits";

    /** {@code etcd-migrate --help}: the commands, the output flags and the exit statuses; each command has its own. */
    public static String text(List<ToolCommand> tools) {
        StringBuilder b = new StringBuilder();
        b.append("""
                etcd-migrate: carries an etcd data directory from the etcd version that last wrote it (version.txt)
                to the target version, one minor at a time with the bundled etcd binaries, then becomes that etcd.

                Usage:
                """);
        b.append("  ").append(USAGE_MIGRATE).append('\n');
        b.append("  ").append(USAGE_PLAN).append('\n');
        b.append("  ").append(USAGE_INSPECT).append('\n');
        b.append("  ").append(USAGE_STATUS).append('\n');
        for (ToolCommand tool : tools) {
            b.append("  etcd-migrate ").append(tool.usage()).append('\n');
        }
        b.append("""
                  etcd-migrate COMMAND --help (or -h)                that command's flags and environment variables
                  etcd-migrate --help | --version                    this text | the runner's and the bundled etcd versions

                Flags of every command:
                """);
        appendFlags(b, OutputFlags.FLAGS);
        b.append('\n');
        appendEvents(b);
        appendExitStatus(b);
        return b.toString();
    }

    /** {@code etcd-migrate migrate --help}: every flag of a migration, what happens after it, what is checked. */
    public static String migrate(List<Flag> migrateFlags) {
        StringBuilder b = new StringBuilder();
        b.append("""
                etcd-migrate migrate: carries the data dir to --target-version one minor at a time with the bundled
                etcd binaries, then becomes that etcd (exec, same PID). `migrate` is the default command.

                Usage:
                """);
        b.append("  ").append(USAGE_MIGRATE).append("\n\n");
        b.append("Flags (a flag overrides its environment variable; an empty variable is unset):\n");
        appendFlags(b, migrateFlags);
        b.append("""

                After migrating, the runner exec's <bin-dir>/etcd-<target> in its own process (same PID) with the
                arguments after --, the environment it was given, and --data-dir added when neither the arguments
                nor ETCD_DATA_DIR name one. The private etcd of each step listens on 127.0.0.1 only and gets the
                environment without any ETCD_* or ETCDCTL_* variable.

                """);
        appendVersionFile(b);
        b.append("""

                Before anything is touched, the runner checks: etcd's own --data-dir, --name, --initial-cluster,
                --initial-advertise-peer-urls and --listen-peer-urls after -- (or their ETCD_* variables) agree with
                its own settings (it takes etcd's where its own are unset); version.txt against the member dir
                (etcd2/etcd3 layout, where the WAL is, the storage version 3.6+ record); that every bundled binary
                the plan runs reports its own version; and that the target etcd accepts the arguments after --
                (etcd <args> --version), naming a replacement where a flag was renamed between lines.
                etcd's --config-file (or ETCD_CONFIG_FILE) is refused: etcd would ignore the flags the runner reads.
                Unknown commands, stray words and single-dash flags (other than -h) are refused (exit 2).

                """);
        appendEvents(b);
        appendExitStatus(b);
        return b.toString();
    }

    /** {@code etcd-migrate plan --help}: its own flag in full; it reads every flag of migrate the same way. */
    public static String plan(Flag outputFlag) {
        StringBuilder b = new StringBuilder();
        b.append("""
                etcd-migrate plan: the steps a migration with the same flags would take, and why; changes nothing
                (no lock, no version.txt, no etcd started).

                Usage:
                """);
        b.append("  ").append(USAGE_PLAN).append("\n\n");
        b.append("Flags of its own:\n");
        appendFlags(b, List.of(outputFlag));
        b.append("""

                plan reads every flag and variable of migrate (--target-version, --data-dir, --name, ... and etcd's
                arguments after --) exactly as migrate does: see etcd-migrate migrate --help.

                """);
        appendExitStatus(b);
        return b.toString();
    }

    /** {@code etcd-migrate status --help}: the rollout's reading, its flags and its exit statuses. */
    public static String status(List<Flag> statusFlags) {
        StringBuilder b = new StringBuilder();
        b.append("""
                etcd-migrate status: one reading of a cluster's rollout over its client URLs: each member's etcd
                version, line, storage version and raft lag; the cluster version, any downgrade job, the restart
                record (holder, restart, age); what each member's runner waits for, by the runners' own rules; and a
                stale record with the exact command that removes it. Changes nothing.

                Usage:
                """);
        b.append("  ").append(USAGE_STATUS).append("\n\n");
        b.append("Flags of its own:\n");
        appendFlags(b, statusFlags);
        b.append("""

                The TLS files are etcd's own flags after -- (--cert-file, --key-file, --trusted-ca-file) or
                ETCD_CERT_FILE, ETCD_KEY_FILE, ETCD_TRUSTED_CA_FILE, as the runner reads them; in a member's pod:
                kubectl exec POD -- etcd-migrate status -- --cert-file=... --key-file=... --trusted-ca-file=...

                """);
        appendExitStatus(b);
        return b.toString();
    }

    /** {@code etcd-migrate inspect --help}: the flags inspect reads; the target and member name default for it. */
    public static String inspect(Flag outputFlag, List<Flag> migrateFlags) {
        StringBuilder b = new StringBuilder();
        b.append("""
                etcd-migrate inspect: reads the data dir offline and says what wrote it, with the evidence (version.txt,
                the member dir's layout, the db's and WAL's records), any damage found, and each target's plan.
                Changes nothing; no etcd runs. docs/inspect.md describes its report.

                Usage:
                """);
        b.append("  ").append(USAGE_INSPECT).append("\n\n");
        b.append("Flags:\n");
        appendFlags(b, List.of(outputFlag));
        appendFlags(
                b,
                migrateFlags.stream()
                        .filter(f -> INSPECT_READS.contains(f.name()))
                        .toList());
        b.append("""

                inspect accepts migrate's other flags and etcd's arguments after -- (e.g. --wal-dir, --name); the
                target defaults to the newest bundled version and the member name to etcd-inspect.

                """);
        appendVersionFile(b);
        b.append('\n');
        appendExitStatus(b);
        return b.toString();
    }

    private static final List<String> INSPECT_READS =
            List.of("data-dir", "initial-version", "catalog", "bundled-versions", "bin-dir");

    /** {@code etcd-migrate provision --help} (and any other tool command's). */
    public static String tool(ToolCommand tool) {
        StringBuilder b = new StringBuilder("Usage:\n  etcd-migrate ")
                .append(tool.usage())
                .append("\n\n");
        wrap(b, tool.flagsHeading(), "", 100);
        appendFlags(b, OutputFlags.with(tool.flags()));
        b.append('\n');
        appendExitStatus(b);
        return b.toString();
    }

    private static void appendVersionFile(StringBuilder b) {
        wrap(
                b,
                "version.txt holds <version>/<etcd2|etcd3>, e.g. " + VERSION_FILE_EXAMPLE
                        + ", and is rewritten atomically after each completed step, so a crash resumes where it"
                        + " stopped.",
                "",
                104);
    }

    private static void appendEvents(StringBuilder b) {
        b.append("""
                Every run reports typed events: the text diary on stderr by default, or with --log-format=json one
                object per line ("event": run-started, plan-made, step-started, step-finished, step-failed,
                etcd-started, etcd-accepted-write, etcd-stopped, backup-made, backup-deleted, progress, exec,
                run-summary, refused, failed, ...), each with its fields and a "message"; no event carries a key's
                value. A migrate run ends with run-summary: its steps and their times, the backups it kept, the key
                counts it compared, and how long etcd was out of service.

                """);
    }

    private static void appendExitStatus(StringBuilder b) {
        wrap(
                b,
                ExitStatus.sentence()
                        + " A failed run also writes its reason to --termination-log when that file exists.",
                "",
                104);
    }

    /** Appends text in lines of at most width characters, each starting with indent. */
    static void wrap(StringBuilder b, String text, String indent, int width) {
        StringBuilder line = new StringBuilder(indent);
        for (String word : text.split(" ")) {
            if (line.length() > indent.length() && line.length() + 1 + word.length() > width) {
                b.append(line).append('\n');
                line = new StringBuilder(indent);
            }
            if (line.length() > indent.length()) line.append(' ');
            line.append(word);
        }
        b.append(line).append('\n');
    }

    private static void appendFlags(StringBuilder b, List<Flag> flags) {
        for (Flag f : flags) {
            b.append("  --").append(f.name());
            if (f.takesValue()) b.append(' ').append(f.valueName());
            f.env().ifPresent(env -> b.append("   [env ").append(env).append(']'));
            b.append('\n');
            wrap(b, f.help() + " Default: " + f.defaultText() + ".", "      ", 104);
        }
    }
}
