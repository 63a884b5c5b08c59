package dev.etcdmigrate.cli;

import dev.etcdmigrate.config.EtcdCommandLine;
import dev.etcdmigrate.config.StatusConfig;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** {@code etcd-migrate status}'s flags: the help table, read once into a {@link StatusConfig}. */
public final class StatusFlags {

    private StatusFlags() {}

    public static final List<Flag> FLAGS = List.of(
            Flag.value(
                    "endpoints",
                    null,
                    "URL[,URL...]",
                    "etcd's --advertise-client-urls, else http://127.0.0.1:2379",
                    "client URLs to ask first; the member list names the rest."),
            Flag.value(
                    "target-version",
                    "TARGET_VERSION",
                    "VERSION",
                    "none",
                    "the version the rollout goes to: each member's next restart and what it waits for."),
            Flag.value(
                    "stuck-after",
                    null,
                    "DURATION",
                    "10m",
                    "a restart record held longer than this is reported stuck (exit 5)."),
            Flag.value(
                    "restore-sha256",
                    "RESTORE_SHA256",
                    "HEX",
                    "none",
                    "a restore's snapshot SHA-256: which members serve the cluster restored from it and which do not"
                            + " yet (docs/restore.md)."),
            Flag.value("output", null, "text|json", "text", "the report as lines, or as one JSON object (also -o)."));

    static final Duration DEFAULT_STUCK_AFTER = Duration.ofMinutes(10);

    public static StatusConfig read(ParsedArgs args) throws UsageException {
        String format = args.get("output").orElse("text");
        if (!format.equals("text") && !format.equals("json")) {
            throw new UsageException("-o/--output must be text or json, not '" + format + "'");
        }
        EtcdCommandLine etcd = EtcdCommandLine.read(args.passThrough(), args.environment());
        List<URI> endpoints = new ArrayList<>();
        for (String url : args.get("endpoints")
                .or(() -> etcd.get("advertise-client-urls"))
                .orElse("http://127.0.0.1:2379")
                .split(",")) {
            if (url.isBlank()) continue;
            try {
                endpoints.add(URI.create(url.trim()));
            } catch (IllegalArgumentException e) {
                throw new UsageException("--endpoints: '" + url.trim() + "' is not a URL");
            }
        }
        if (endpoints.isEmpty()) throw new UsageException("--endpoints names no URL");
        Optional<MinorLine> target = Optional.empty();
        if (args.get("target-version").isPresent()) {
            try {
                target = Optional.of(
                        EtcdVersion.parse(args.get("target-version").get()).line());
            } catch (IllegalArgumentException e) {
                throw new UsageException(args.source("target-version") + " is not a version: " + e.getMessage());
            }
        }
        Optional<String> restoreSha256 = args.get("restore-sha256")
                .filter(v -> !v.isBlank())
                .map(v -> v.strip().toLowerCase(java.util.Locale.ROOT));
        if (restoreSha256.isPresent() && !restoreSha256.get().matches("[0-9a-f]{64}")) {
            throw new UsageException(args.source("restore-sha256") + " must be 64 hex digits (a SHA-256), got '"
                    + args.get("restore-sha256").get() + "'");
        }
        return new StatusConfig(
                List.copyOf(endpoints),
                target,
                FlagValues.duration(args, "stuck-after", DEFAULT_STUCK_AFTER),
                format,
                etcd.get("cert-file").map(Path::of),
                etcd.get("key-file").map(Path::of),
                etcd.get("trusted-ca-file").map(Path::of),
                restoreSha256);
    }
}
