package dev.etcdmigrate.cli;

import dev.etcdmigrate.error.UsageException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Flags as given on the command line, resolved against the environment: a flag wins over its
 * variable; a variable set to the empty string counts as unset. Everything after {@code --} is
 * kept verbatim for the etcd that is exec'd at the end.
 */
public final class ParsedArgs {

    private final Map<String, String> values;
    private final List<String> positional;
    private final List<String> passThrough;
    private final Map<String, Flag> flags;
    private final Map<String, String> environment;

    private ParsedArgs(
            Map<String, String> values,
            List<String> positional,
            List<String> passThrough,
            Map<String, Flag> flags,
            Map<String, String> environment) {
        this.values = values;
        this.positional = positional;
        this.passThrough = passThrough;
        this.flags = flags;
        this.environment = environment;
    }

    public static ParsedArgs parse(List<Flag> table, List<String> args, Map<String, String> environment)
            throws UsageException {
        Map<String, Flag> flags = new HashMap<>();
        table.forEach(f -> flags.put(f.name(), f));
        Map<String, String> values = new HashMap<>();
        List<String> positional = new ArrayList<>();
        List<String> passThrough = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg.equals("--")) {
                passThrough.addAll(args.subList(i + 1, args.size()));
                break;
            }
            if (arg.startsWith("-") && !arg.startsWith("--") && arg.length() > 1) {
                // -h never gets here: Main prints the command's help for it
                throw new UsageException("'" + arg + "' has one dash: this runner's flags take two (--"
                        + arg.substring(1).split("=", 2)[0] + "); etcd's own flags go after --");
            }
            if (!arg.startsWith("--")) {
                positional.add(arg);
                continue;
            }
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg.substring(2) : arg.substring(2, eq);
            Flag flag = flags.get(name);
            if (flag == null) {
                throw new UsageException("unknown flag --" + name
                        + Nearest.to(name, table.stream().map(Flag::name).toList())
                                .map(n -> ": did you mean --" + n + "?")
                                .orElse("")
                        + " (see --help)");
            }
            String value;
            if (!flag.takesValue()) {
                if (eq >= 0) throw new UsageException("--" + name + " takes no value");
                value = "true";
            } else if (eq >= 0) {
                value = arg.substring(eq + 1);
            } else if (i + 1 < args.size()) {
                value = args.get(++i);
            } else {
                throw new UsageException("--" + name + " needs a value (" + flag.valueName() + ")");
            }
            values.put(name, value);
        }
        return new ParsedArgs(values, positional, passThrough, flags, environment);
    }

    /** The flag's value, else its environment variable's, else empty. */
    public Optional<String> get(String name) {
        Flag flag = flags.get(name);
        if (flag == null) throw new IllegalArgumentException("no flag " + name);
        if (values.containsKey(name)) return Optional.of(values.get(name));
        return flag.env().map(environment::get).filter(v -> !v.isEmpty());
    }

    /** Where a value came from, for messages: "--flag" or "$VAR". */
    public String source(String name) {
        Flag flag = flags.get(name);
        if (values.containsKey(name) || flag.env().isEmpty()) return "--" + name;
        return "$" + flag.env().get();
    }

    public boolean isSet(String name) {
        return get(name).isPresent();
    }

    public List<String> positional() {
        return positional;
    }

    /** For commands that take no words: a stray one (a typo'd command, a value without its flag) is refused. */
    public ParsedArgs withoutPositional(String command) throws UsageException {
        if (!positional.isEmpty()) {
            throw new UsageException(command + " takes no word here, got '" + positional.getFirst() + "'"
                    + (positional.size() > 1 ? " (and " + (positional.size() - 1) + " more)" : "")
                    + ": flags start with --, and etcd's own flags go after --");
        }
        return this;
    }

    public List<String> passThrough() {
        return passThrough;
    }

    public Map<String, String> environment() {
        return environment;
    }
}
