package dev.etcdmigrate.cli;

import java.util.List;

/** --help text, generated from the flag tables so that every flag and variable is documented. */
public final class Help {

    private Help() {}

    public static String text(List<Flag> migrateFlags, List<Flag> provisionFlags) {
        StringBuilder b = new StringBuilder();
        b.append("""
                etcd-migrate: carries an etcd data directory from the etcd version that last wrote it (version.txt)
                to the target version, one minor at a time with the bundled etcd binaries, then becomes that etcd.

                Usage:
                  etcd-migrate [migrate] [FLAGS] [-- ETCD-ARGS...]   migrate, then exec etcd-<target> with ETCD-ARGS
                  etcd-migrate plan [FLAGS]                          print the plan; change nothing
                  etcd-migrate provision --bin-dir DIR [VERSION...]  install etcd-<v>, etcdctl-<v>, etcdutl-<v>
                  etcd-migrate demo --bin-dir DIR --work-dir DIR     migrate a sample data dir end to end
                  etcd-migrate --help

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

                Flags of provision:
                """);
        appendFlags(b, provisionFlags);
        b.append("""

                Exit status: 0 done (or exec'd); 1 a step failed (version.txt names the last completed step);
                2 bad flags, environment or version.txt (nothing touched); 3 transition refused (nothing touched);
                143 stopped by SIGTERM (children stopped first).
                """);
        return b.toString();
    }

    private static void appendFlags(StringBuilder b, List<Flag> flags) {
        for (Flag f : flags) {
            b.append("  --").append(f.name());
            if (f.takesValue()) b.append(' ').append(f.valueName());
            f.env().ifPresent(env -> b.append("   [env ").append(env).append(']'));
            b.append('\n');
            b.append("      ").append(f.help()).append(" Default: ").append(f.defaultText()).append(".\n");
        }
    }
}
