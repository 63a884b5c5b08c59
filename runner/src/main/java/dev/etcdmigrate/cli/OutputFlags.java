package dev.etcdmigrate.cli;

import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.log.EtcdOutput;
import dev.etcdmigrate.log.LogFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How a run reports, for every command: read before the command's own flags are parsed, so that even
 * a usage error is reported in the format asked for.
 */
public record OutputFlags(LogFormat format, EtcdOutput etcdOutput) {

    public static final List<Flag> FLAGS = List.of(
            Flag.value(
                    "log-format",
                    "LOG_FORMAT",
                    "text|json",
                    "text",
                    "text: the operator's diary on stderr. json: one object per line with \"event\", \"source\" and"
                            + " \"message\" (never a key's value); etcd's own JSON lines pass through with \"source\""
                            + " (e.g. \"etcd-3.6.16\") added in front."),
            Flag.value(
                    "etcd-output",
                    "LOG_ETCD_OUTPUT",
                    "errors|all",
                    "errors",
                    "text format: show only the warnings and errors the private etcds and tools print that the runner"
                            + " did not cause itself (a private etcd's complaints while it stops, its single-port warning),"
                            + " and the hidden lines too when the run fails; or show every line. Every line is also kept"
                            + " in <data dir>/.etcd-migrate/etcd-output.log (owner-only) for the last run with steps."));

    /** {@code flags} plus the output flags: every command accepts them. */
    public static List<Flag> with(List<Flag> flags) {
        List<Flag> all = new ArrayList<>(flags);
        all.addAll(FLAGS);
        return List.copyOf(all);
    }

    public static OutputFlags read(List<String> runnerArgs, Map<String, String> environment) throws UsageException {
        try {
            return new OutputFlags(
                    LogFormat.parse(value(runnerArgs, environment, "log-format", "LOG_FORMAT")
                            .orElse("text")),
                    EtcdOutput.parse(value(runnerArgs, environment, "etcd-output", "LOG_ETCD_OUTPUT")
                            .orElse("errors")));
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage());
        }
    }

    /** The text diary as a run without flags writes it: what a run reports in before its flags are known. */
    public static OutputFlags defaults() {
        return new OutputFlags(LogFormat.TEXT, EtcdOutput.ERRORS);
    }

    private static Optional<String> value(
            List<String> args, Map<String, String> environment, String flag, String variable) {
        Optional<String> given = flagValue(args, flag);
        return given.isPresent()
                ? given
                : Optional.ofNullable(environment.get(variable)).filter(v -> !v.isEmpty());
    }

    /** The value of --NAME VALUE / --NAME=VALUE among the runner's own arguments (the last one wins, as in parsing). */
    public static Optional<String> flagValue(List<String> args, String name) {
        Optional<String> found = Optional.empty();
        for (int i = 0; i < args.size(); i++) {
            if (args.get(i).equals("--" + name) && i + 1 < args.size()) found = Optional.of(args.get(i + 1));
            if (args.get(i).startsWith("--" + name + "="))
                found = Optional.of(args.get(i).substring(name.length() + 3));
        }
        return found;
    }

    /** {@code flags} plus plan and inspect's -o/--output. */
    public static List<Flag> withOutput(List<Flag> flags) {
        List<Flag> all = new ArrayList<>(flags);
        all.add(Flag.value(
                "output",
                null,
                "text|json",
                "text",
                "plan and inspect (also -o): the answer as lines, or as one JSON object on stdout."));
        return all;
    }

    /** kubectl's habit: -o json, -o=json, -ojson mean --output json (the runner's other flags take two dashes). */
    public static List<String> shortOutputFlag(List<String> args) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            if (a.equals("--")) {
                out.addAll(args.subList(i, args.size()));
                break;
            }
            if (a.equals("-o") && i + 1 < args.size()) {
                out.add("--output");
                out.add(args.get(++i));
            } else if (a.startsWith("-o=")) {
                out.add("--output=" + a.substring(3));
            } else if (a.startsWith("-o") && !a.startsWith("--") && a.length() > 2) {
                out.add("--output=" + a.substring(2));
            } else {
                out.add(a);
            }
        }
        return out;
    }
}
