package dev.etcdmigrate.cli;

import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.version.EtcdVersion;
import java.time.Duration;
import java.util.Optional;

/** The value kinds the commands' flags share: versions, ports, durations; each bad value a usage error naming its flag. */
final class FlagValues {

    private FlagValues() {}

    static EtcdVersion version(ParsedArgs args, String flag, String text) throws UsageException {
        try {
            return EtcdVersion.parse(text);
        } catch (IllegalArgumentException e) {
            throw new UsageException(args.source(flag) + ": " + e.getMessage());
        }
    }

    static int port(ParsedArgs args, String flag, int fallback) throws UsageException {
        Optional<String> text = args.get(flag);
        if (text.isEmpty()) return fallback;
        try {
            int port = Integer.parseInt(text.get());
            if (port >= 1 && port <= 65535) return port;
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new UsageException("--" + flag + " must be a port number 1-65535, got '" + text.get() + "'");
    }

    /** Accepts 500ms, 90s, 2m, 1h, or a bare number of seconds. */
    static Duration duration(ParsedArgs args, String flag, Duration fallback) throws UsageException {
        Optional<String> text = args.get(flag);
        if (text.isEmpty()) return fallback;
        String t = text.get().trim();
        try {
            Duration d;
            if (t.endsWith("ms")) d = Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
            else if (t.endsWith("s")) d = Duration.ofSeconds(Long.parseLong(t.substring(0, t.length() - 1)));
            else if (t.endsWith("m")) d = Duration.ofMinutes(Long.parseLong(t.substring(0, t.length() - 1)));
            else if (t.endsWith("h")) d = Duration.ofHours(Long.parseLong(t.substring(0, t.length() - 1)));
            else d = Duration.ofSeconds(Long.parseLong(t));
            if (!d.isNegative() && !d.isZero()) return d;
        } catch (NumberFormatException | ArithmeticException ignored) {
            // reported below
        }
        throw new UsageException(
                "--" + flag + " must be a positive duration such as 500ms, 90s or 2m, got '" + t + "'");
    }
}
