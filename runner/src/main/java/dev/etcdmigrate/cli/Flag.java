package dev.etcdmigrate.cli;

import java.util.Optional;

/**
 * One command-line flag: its name, the environment variable it overrides (if any), and the help
 * text that --help prints. The flag table is the single source of both parsing and documentation.
 */
public record Flag(String name, Optional<String> env, String valueName, String defaultText, String help) {

    public static Flag value(String name, String env, String valueName, String defaultText, String help) {
        return new Flag(name, Optional.ofNullable(env), valueName, defaultText, help);
    }

    public static Flag toggle(String name, String help) {
        return new Flag(name, Optional.empty(), "", "off", help);
    }

    public boolean takesValue() {
        return !valueName.isEmpty();
    }
}
