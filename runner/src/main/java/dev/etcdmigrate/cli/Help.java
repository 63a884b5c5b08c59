package dev.etcdmigrate.cli;

import dev.etcdmigrate.error.ExitStatus;
import java.util.List;

/** --help text, generated from the flag tables so that every flag and variable is documented. */
public final class Help {

    private Help() {}

    /** @param tools the tool commands on the class path (none in the image): their usage lines and flags */
    public static String text(List<Flag> migrateFlags, List<ToolCommand> tools) {
        StringBuilder b = new StringBuilder();
        b.append("""
                etcd-migrate: carries an etcd data directory from the etcd version that last wrote it (version.txt)
                to the target version, one minor at a time with the bundled etcd binaries, then becomes that etcd.

                Usage:
                  etcd-migrate [migrate] [FLAGS] [-- ETCD-ARGS...]   migrate, then exec etcd-<target> with ETCD-ARGS
                  etcd-migrate plan [-o json] [FLAGS]                print the plan (-o json: as data); change nothing
                  etcd-migrate inspect --data-dir D [-o json]        what wrote the data dir, with the evidence, and each
                                                                     target's plan; offline, changes nothing (docs/inspect.md)
                """);
        for (ToolCommand tool : tools) {
            b.append("  etcd-migrate ").append(tool.usage()).append('\n');
        }
        b.append("""
                  etcd-migrate --help | --version                   this text | the runner's and the bundled etcd versions

                Flags of migrate and plan (a flag overrides its environment variable; an empty variable is unset):
                """);
        appendFlags(b, migrateFlags);
        b.append("""

                After migrating, the runner exec's <bin-dir>/etcd-<target> in its own process (same PID) with the
                arguments after --, the environment it was given, and --data-dir added when neither the arguments
                nor ETCD_DATA_DIR name one. The private etcd of each step listens on 127.0.0.1 only and gets the
                environment without any ETCD_* or ETCDCTL_* variable.

                version.txt holds <version>/<etcd2|etcd3>, e.g. 3.5.21/etcd3, and is rewritten atomically after each
                completed step, so a crash resumes where it stopped.
                """);
        for (ToolCommand tool : tools) {
            b.append('\n');
            wrap(b, tool.flagsHeading(), "", 100);
            appendFlags(b, OutputFlags.with(tool.flags()));
        }
        b.append("""

                Every run reports typed events: the text diary on stderr by default, or with --log-format=json one
                object per line ("event": run-started, plan-made, step-started, step-finished, step-failed,
                etcd-started, etcd-accepted-write, etcd-stopped, backup-made, backup-deleted, progress, exec,
                refused, failed, ...), each with its fields and a "message"; no event carries a key's value.

                """);
        wrap(
                b,
                ExitStatus.sentence()
                        + " A failed run also writes its reason to --termination-log when that file exists.",
                "",
                104);
        b.append("""

                Before anything is touched, the runner checks: etcd's own --data-dir, --name, --initial-cluster,
                --initial-advertise-peer-urls and --listen-peer-urls after -- (or their ETCD_* variables) agree with
                its own settings (it takes etcd's where its own are unset); version.txt against the member dir
                (etcd2/etcd3 layout, where the WAL is, the storage version 3.6+ record); that every bundled binary
                the plan runs reports its own version; and that the target etcd accepts the arguments after --
                (etcd <args> --version), naming a replacement where a flag was renamed between lines.
                etcd's --config-file (or ETCD_CONFIG_FILE) is refused: etcd would ignore the flags the runner reads.
                Unknown commands, stray words and single-dash flags are refused (exit 2).
                """);
        return b.toString();
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
