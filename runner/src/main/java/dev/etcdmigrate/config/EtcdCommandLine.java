package dev.etcdmigrate.config;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * etcd's command line read the way etcd reads it, once, for every part of the runner that must know what
 * etcd will be told: Go's flag package ({@code -f} or {@code --f}; {@code -f=v} or {@code -f v} for a flag
 * that takes a value, only {@code -f} or {@code -f=v} for one that takes none; the last occurrence wins;
 * parsing stops at {@code --} or at the first word that is not a flag) and then etcd's
 * {@code pkg/flags.SetFlagsFromEnv}: {@code ETCD_<FLAG>} stands in for a flag not given, when not empty.
 * Used for the words after {@code --} (with the environment the target etcd gets) and for the private
 * etcd's extra flags (whose environment is scrubbed).
 */
public final class EtcdCommandLine {

    /**
     * etcd's flags that take no next word, in any bundled line (a line that does not define one refuses it
     * anyway): Go {@code bool} flags, and the legacy names etcd registers as {@code flags.IgnoredFlag} (a
     * Go boolean flag too). From etcd's tagged sources (etcdmain/config.go, embed/config.go) of 2.2.5-3.7,
     * confirmed by asking every bundled binary (EtcdCommandLineIT).
     */
    static final Set<String> NO_VALUE_FLAGS = Set.of(
            // bool
            "auto-tls",
            "client-cert-auth",
            "debug",
            "discovery-insecure-skip-tls-verify",
            "discovery-insecure-transport",
            "enable-distributed-tracing",
            "enable-grpc-gateway",
            "enable-log-rotation",
            "enable-pprof",
            "enable-v2",
            "experimental-compact-hash-check-enabled",
            "experimental-enable-distributed-tracing",
            "experimental-enable-lease-checkpoint",
            "experimental-enable-lease-checkpoint-persist",
            "experimental-initial-corrupt-check",
            "experimental-memory-mlock",
            "experimental-peer-skip-client-san-verification",
            "experimental-stop-grpc-service-on-defrag",
            "experimental-txn-mode-write-with-shared-buffer",
            "experimental-v3demo",
            "force-new-cluster",
            "initial-election-tick-advance",
            "memory-mlock",
            "peer-auto-tls",
            "peer-client-cert-auth",
            "peer-skip-client-san-verification",
            "pre-vote",
            "socket-reuse-address",
            "socket-reuse-port",
            "strict-reconfig-check",
            "unsafe-no-fsync",
            "version",
            // flags.IgnoredFlag
            "cluster-active-size",
            "cluster-remove-delay",
            "cluster-sync-interval",
            "config",
            "force",
            "max-result-buffer",
            "max-retry-attempts",
            "peer-heartbeat-interval",
            "peer-election-timeout",
            "retry-interval",
            "snapshot",
            "v",
            "vv",
            "test.coverprofile",
            "test.outputdir");

    private final List<String> args;
    /** Each flag given, by name: its last value and its last spelling (the name with its dashes). */
    private final Map<String, String> values;

    private final Map<String, String> spellings;
    /** Where Go's flag package stopped: index of "--" or of the first word it did not read as a flag. */
    private final int end;

    private final Optional<String> error;
    private final Map<String, String> environment;

    private EtcdCommandLine(
            List<String> args,
            Map<String, String> values,
            Map<String, String> spellings,
            int end,
            Optional<String> error,
            Map<String, String> environment) {
        this.args = args;
        this.values = values;
        this.spellings = spellings;
        this.end = end;
        this.error = error;
        this.environment = environment;
    }

    /** Reads {@code args} (etcd's arguments, without the program) as etcd does, with {@code environment} as its fallback. */
    public static EtcdCommandLine read(List<String> args, Map<String, String> environment) {
        Map<String, String> values = new LinkedHashMap<>();
        Map<String, String> spellings = new LinkedHashMap<>();
        Optional<String> error = Optional.empty();
        int i = 0;
        while (i < args.size()) {
            Next next = next(args, i);
            if (next instanceof Next.Bad bad) error = Optional.of(bad.error());
            if (!(next instanceof Next.Flag flag)) break;
            values.put(flag.name(), flag.value());
            spellings.put(flag.name(), flag.spelling());
            i += flag.words().size();
        }
        return new EtcdCommandLine(
                List.copyOf(args),
                Collections.unmodifiableMap(values),
                Collections.unmodifiableMap(spellings),
                i,
                error,
                Map.copyOf(environment));
    }

    /** What Go's flag.FlagSet.parseOne makes of the words from {@code args[i]}: the end of the flags, an error, or a flag. */
    private sealed interface Next {
        /** A word that is not a flag, or "--": the flags end before it. */
        record End() implements Next {}

        record Bad(String error) implements Next {}

        /** One flag: its name, value, spelling (the name with its dashes) and the words it took (one or two). */
        record Flag(String name, String value, String spelling, List<String> words) implements Next {}
    }

    private static Next next(List<String> args, int i) {
        String arg = args.get(i);
        if (arg.length() < 2 || arg.charAt(0) != '-') return new Next.End();
        int dashes = arg.charAt(1) == '-' ? 2 : 1;
        if (dashes == 2 && arg.length() == 2) return new Next.End();
        String body = arg.substring(dashes);
        if (body.isEmpty() || body.charAt(0) == '-' || body.charAt(0) == '=') {
            return new Next.Bad("bad flag syntax: " + arg);
        }
        int eq = body.indexOf('=');
        String name = eq < 0 ? body : body.substring(0, eq);
        String spelling = arg.substring(0, dashes) + name;
        if (eq >= 0) return new Next.Flag(name, body.substring(eq + 1), spelling, List.of(arg));
        if (takesNoValue(name)) return new Next.Flag(name, "true", spelling, List.of(arg));
        if (i + 1 < args.size()) {
            // whatever the next word is, even one starting with a dash
            return new Next.Flag(name, args.get(i + 1), spelling, List.of(arg, args.get(i + 1)));
        }
        return new Next.Bad("flag needs an argument: " + arg);
    }

    /**
     * Flags given as one string of words (ETCD_CREDS, the Kubernetes etcd image's variable for the private
     * etcd's extra flags), split at white space and read as etcd reads its arguments, without an environment
     * (the private etcd's is scrubbed).
     */
    public static EtcdCommandLine ofWords(String words) {
        String trimmed = words.strip();
        return read(trimmed.isEmpty() ? List.of() : List.of(trimmed.split("\\s+")), Map.of());
    }

    /** Whether etcd takes the flag without a next word ({@code -f} means {@code -f=true}). */
    public static boolean takesNoValue(String flag) {
        return NO_VALUE_FLAGS.contains(flag);
    }

    /** etcd's variable for a flag: ETCD_ and the flag in upper case with underscores (pkg/flags.FlagToEnv). */
    public static String variable(String flag) {
        return "ETCD_" + flag.toUpperCase(Locale.ROOT).replace('-', '_');
    }

    /** The arguments as given. */
    public List<String> args() {
        return args;
    }

    /** The flag's value on the command line (its last occurrence), without the environment. */
    public Optional<String> flag(String name) {
        return Optional.ofNullable(values.get(name));
    }

    /** The value etcd runs with: the flag's, else its ETCD_* variable's when that is not empty. */
    public Optional<String> get(String name) {
        return flag(name)
                .or(() -> Optional.ofNullable(environment.get(variable(name))).filter(v -> !v.isEmpty()));
    }

    /** Where {@link #get} found the value, for messages: "etcd's -name after --" or "$ETCD_NAME (etcd's --name)". */
    public String source(String name) {
        if (values.containsKey(name)) return "etcd's " + spellings.get(name) + " after --";
        return "$" + variable(name) + " (etcd's --" + name + ")";
    }

    /** The names of the flags given, in the order first given. */
    public List<String> names() {
        return List.copyOf(values.keySet());
    }

    /** Why Go's flag package would reject the arguments (a flag without its value, "---x"); etcd then exits. */
    public Optional<String> error() {
        return error;
    }

    /** The words Go's flag package leaves unread (a stray word and all after it, or all after {@code --}): etcd refuses them. */
    public List<String> unread() {
        int from = end < args.size() && args.get(end).equals("--") ? end + 1 : end;
        return error.isPresent() ? List.of() : args.subList(Math.min(from, args.size()), args.size());
    }

    /**
     * The ETCD_* variables that duplicate a flag on the command line, set even if empty (verifyEnv looks at
     * the name), each as "ETCD_NAME (-name)". Whether etcd exits on them is its line's (catalog:
     * {@code line.envDuplicateRefused}); where it does, it exits before it opens anything.
     */
    public List<String> duplicateVariables() {
        TreeSet<String> duplicates = new TreeSet<>();
        spellings.forEach((name, spelled) -> {
            if (environment.containsKey(variable(name))) duplicates.add(variable(name) + " (" + spelled + ")");
        });
        return List.copyOf(duplicates);
    }

    /** One flag given in another line's spelling, and the words the line's etcd gets instead. */
    public record Renamed(String given, String as) {}

    /** The arguments in a line's vocabulary, and each flag that was renamed on the way. */
    public record Translated(List<String> args, List<Renamed> renamed) {
        public Translated {
            args = List.copyOf(args);
            renamed = List.copyOf(renamed);
        }
    }

    private static final java.util.regex.Pattern FLAG_NAME = java.util.regex.Pattern.compile("--[a-z0-9][a-z0-9-]*");
    private static final java.util.regex.Pattern GATE =
            java.util.regex.Pattern.compile("--feature-gates=([A-Za-z0-9]+)=true");
    private static final String GATES = "feature-gates";

    /**
     * {@code args} in the vocabulary of a line whose etcd rejects the flags {@code replacements} names (the
     * catalog's {@code line.flagReplacements}): each such flag, read as etcd reads it, becomes the line's flag of
     * the same meaning with the same value. A replacement {@code --name} takes the value as it is; one
     * {@code --feature-gates=Gate=true} makes the value the gate's ({@code --feature-gates=Gate=<value>}); a key
     * {@code --feature-gates=Gate} (a line without feature gates) turns that gate of a {@code --feature-gates} list
     * into its flag ({@code --experimental-x=<value>}), gates without one staying in the list. Any other
     * replacement is a hint for a refusal, not a flag: that flag stays, and the line's etcd refuses it before
     * anything changes (BinaryCheck). Words after the flags (a stray word, {@code --}) are left as they are.
     */
    public static Translated translate(List<String> args, Map<String, String> replacements) {
        if (replacements.isEmpty()) return new Translated(args, List.of());
        List<String> out = new ArrayList<>();
        List<Renamed> renamed = new ArrayList<>();
        int i = 0;
        while (i < args.size()) {
            if (!(next(args, i) instanceof Next.Flag flag)) break; // the flags end here, or etcd will refuse them
            List<String> words = flag.words();
            i += words.size();
            List<String> as = inVocabulary(flag.name(), flag.value(), replacements);
            if (as == null) {
                out.addAll(words);
            } else {
                out.addAll(as);
                renamed.add(new Renamed(String.join(" ", words), String.join(" ", as)));
            }
        }
        out.addAll(args.subList(Math.min(i, args.size()), args.size()));
        return new Translated(out, renamed);
    }

    /** The line's words for one flag, or null when it stays as given. */
    private static List<String> inVocabulary(String name, String value, Map<String, String> replacements) {
        String replacement = replacements.get("--" + name);
        if (replacement != null) {
            java.util.regex.Matcher gate = GATE.matcher(replacement);
            if (gate.matches()) return List.of("--" + GATES + "=" + gate.group(1) + "=" + value);
            if (FLAG_NAME.matcher(replacement).matches()) return List.of(replacement + "=" + value);
        }
        if (!name.equals(GATES)) return null;
        // a line without feature gates: each gate it has a flag for becomes that flag
        List<String> as = new ArrayList<>();
        List<String> kept = new ArrayList<>();
        for (String part : value.split(",")) {
            String gate = part.strip();
            int eq = gate.indexOf('=');
            String flag = eq < 0
                    ? null
                    : replacements.get(
                            "--" + GATES + "=" + gate.substring(0, eq).strip());
            if (flag != null && FLAG_NAME.matcher(flag).matches()) {
                as.add(flag + "=" + gate.substring(eq + 1).strip());
            } else if (!gate.isEmpty()) {
                kept.add(gate);
            }
        }
        if (as.isEmpty()) return null;
        if (!kept.isEmpty()) as.add("--" + GATES + "=" + String.join(",", kept));
        return as;
    }

    /**
     * The arguments with {@code --flag=value} added where etcd still reads it (before a {@code --} or a
     * stray word, after which etcd would take it for a stray word too), when neither a flag nor its variable
     * gives one.
     */
    public List<String> withDefault(String flag, String value) {
        if (get(flag).isPresent()) return args;
        List<String> with = new ArrayList<>(args);
        with.add(Math.min(end, args.size()), "--" + flag + "=" + value);
        return List.copyOf(with);
    }
}
