package dev.etcdmigrate.it.input;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.config.EtcdCommandLine;
import dev.etcdmigrate.it.support.EtcdFixture;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * EtcdCommandLine's table of etcd's facts against every bundled etcd binary: which flags take no next
 * word, and whether the line exits on an ETCD_* variable that duplicates a flag. Nothing is started:
 * each question makes etcd exit before it opens a data dir or a port.
 */
class EtcdFlagTableIT {

    private static final Pattern HELP_FLAG = Pattern.compile("^\\s+--?([a-z0-9][a-z0-9.-]*)");

    static List<Release> releases() {
        return EtcdFixture.CATALOG.releases();
    }

    private static Path etcd(Release release) {
        return EtcdFixture.binDir().resolve("etcd-" + release.version());
    }

    /**
     * {@code etcd --F -- --version}: a flag that takes a value eats "--" and etcd prints its version (or
     * rejects "--" as the value); one that takes none leaves "--version" as a stray word, which etcd refuses.
     */
    @ParameterizedTest
    @MethodSource("releases")
    void theFlagsThatTakeNoValueAreEtcdsOwn(Release release) throws Exception {
        TreeSet<String> flags = new TreeSet<>();
        for (String line : run(etcd(release), List.of("--help"), Map.of())) {
            Matcher m = HELP_FLAG.matcher(line);
            if (m.find()) flags.add(m.group(1));
        }
        assertTrue(flags.size() > 30, "etcd --help lists its flags: " + flags);
        for (String f : List.of(
                "name",
                "data-dir",
                "peer-client-cert-auth",
                "force-new-cluster",
                "version",
                "v",
                "snapshot",
                "config",
                "test.coverprofile",
                "experimental-v3demo",
                "enable-v2",
                "peer-auto-tls",
                "unsafe-no-fsync",
                "pre-vote",
                "memory-mlock")) {
            flags.add(f); // the table's, also where --help leaves them out
        }
        List<String> wrong = new ArrayList<>();
        int defined = 0;
        for (String flag : flags) {
            String out = String.join("\n", run(etcd(release), List.of("--" + flag, "--", "--version"), Map.of()));
            if (out.contains("flag provided but not defined")) continue;
            defined++;
            boolean noValue = out.contains("is not a valid flag");
            if (noValue != EtcdCommandLine.takesNoValue(flag))
                wrong.add(flag + (noValue ? " takes no value" : " takes a value"));
        }
        assertTrue(defined > 30, release.version() + " defines " + defined);
        assertEquals(List.of(), wrong, "etcd " + release.version() + " against EtcdCommandLine's table");
    }

    /**
     * ETCD_NAME with -name: the lines the catalog marks envDuplicateRefused (3.4+) exit on it at once; older lines let the flag win, log it, and go on to
     * listen on an address this host does not have, where they exit.
     */
    @ParameterizedTest
    @MethodSource("releases")
    void aDuplicatingVariableIsRefusedWhereTheCatalogSays(Release release, @TempDir Path dir) throws Exception {
        List<String> out = run(
                etcd(release),
                List.of(
                        "-name",
                        "flag",
                        "--data-dir",
                        dir.resolve("data").toString(),
                        "--listen-peer-urls",
                        "http://192.0.2.1:1",
                        "--listen-client-urls",
                        "http://192.0.2.1:2",
                        "--advertise-client-urls",
                        "http://192.0.2.1:2"),
                Map.of("ETCD_NAME", "variable"));
        String all = String.join("\n", out);
        boolean refused = all.contains("conflicting environment variable");
        assertEquals(
                release.line().envDuplicateRefused(),
                refused,
                release.version() + " (catalog: line.envDuplicateRefused):\n" + all);
        if (!refused) assertTrue(all.contains("shadowed by corresponding flag"), all);
        assertNotEquals(List.of(), out);
    }

    /** Runs the binary with only {@code env} as its environment; its output lines. */
    private static List<String> run(Path binary, List<String> args, Map<String, String> env) throws Exception {
        List<String> command = new ArrayList<>(List.of(binary.toString()));
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().clear();
        builder.environment().putAll(env);
        Process process = builder.start();
        try {
            byte[][] read = new byte[1][];
            Thread reader = Thread.ofVirtual().start(() -> {
                try (InputStream in = process.getInputStream()) {
                    read[0] = in.readAllBytes();
                } catch (IOException e) {
                    read[0] = new byte[0];
                }
            });
            assertTrue(process.waitFor(20, TimeUnit.SECONDS), binary + " " + args + " did not exit");
            reader.join(5000);
            return new String(read[0] == null ? new byte[0] : read[0], StandardCharsets.UTF_8)
                    .lines()
                    .toList();
        } finally {
            if (process.isAlive()) process.destroyForcibly().waitFor();
        }
    }
}
