package dev.etcdmigrate.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The private etcd gets ETCD_CREDS (--etcd-server-extra-args) as its own flags. A TLS file it cannot
 * read, or a certificate without its key, would only show when that etcd dies in the middle of a step;
 * checked before anything is touched instead.
 */
public final class ServerArgsCheck {

    /** etcd refuses one of each pair without the other. */
    private static final Map<String, String> PAIRS = Map.of(
            "peer-cert-file",
            "peer-key-file",
            "peer-key-file",
            "peer-cert-file",
            "cert-file",
            "key-file",
            "key-file",
            "cert-file");

    private ServerArgsCheck() {}

    /** What is wrong with the files the {@code --*-file} flags name, each problem naming the flag and the path. */
    public static List<String> problems(List<String> serverArgs) {
        return problems(EtcdCommandLine.read(serverArgs, Map.of())); // the private etcd's environment is scrubbed
    }

    /** The same, for flags already read ({@code RunConfig.creds()}). */
    public static List<String> problems(EtcdCommandLine flags) {
        Map<String, String> files = new LinkedHashMap<>();
        for (String name : flags.names()) {
            if (name.endsWith("-file")) files.put(name, flags.flag(name).orElseThrow());
        }
        List<String> problems = new ArrayList<>();
        files.forEach((flag, value) -> {
            Path file = Path.of(value);
            if (value.isEmpty()) {
                problems.add("--" + flag + " names no file");
            } else if (!Files.exists(file)) {
                problems.add("--" + flag + "=" + value + ": no such file");
            } else if (!Files.isRegularFile(file)) {
                problems.add("--" + flag + "=" + value + ": not a regular file");
            } else if (!Files.isReadable(file)) {
                problems.add("--" + flag + "=" + value + ": not readable by this process");
            }
            String partner = PAIRS.get(flag);
            if (partner != null && !files.containsKey(partner)) {
                problems.add("--" + flag + " without --" + partner);
            }
        });
        flags.error().ifPresent(problems::add);
        if (!flags.unread().isEmpty()) {
            problems.add("'" + flags.unread().getFirst() + "' is not a flag, and etcd reads none after it");
        }
        return problems;
    }
}
