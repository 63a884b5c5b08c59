package dev.etcdmigrate.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.demo.Demo;
import dev.etcdmigrate.demo.DemoTool;
import dev.etcdmigrate.provision.ProvisionCommand;
import dev.etcdmigrate.provision.ProvisionTool;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class HelpTest {

    private static final List<ToolCommand> TOOLS = List.of(new ProvisionTool(), new DemoTool());
    private static final String OVERVIEW = Help.text(TOOLS);
    private static final String MIGRATE = Help.migrate(MigrateFlags.FLAGS);
    /** Every help text the runner prints, together. */
    private static final String HELP =
            OVERVIEW + MIGRATE + TOOLS.stream().map(Help::tool).reduce("", String::concat);
    /** The help text with its line wrapping undone. */
    private static final String FLAT = HELP.replaceAll("\\s+", " ");

    static Stream<Flag> allFlags() {
        return Stream.of(MigrateFlags.FLAGS, ProvisionCommand.FLAGS, Demo.FLAGS).flatMap(List::stream);
    }

    @ParameterizedTest(name = "--{0}")
    @MethodSource("allFlags")
    void mentionsEveryFlagWithItsVariableAndDefault(Flag f) {
        String head = "  --" + f.name() + (f.takesValue() ? " " + f.valueName() : "")
                + f.env().map(env -> "   [env " + env + "]").orElse("") + "\n";
        assertTrue(HELP.contains(head), "missing line: " + head);
        assertTrue(
                FLAT.contains((f.help() + " Default: " + f.defaultText() + ".").replaceAll("\\s+", " ")),
                "help of --" + f.name());
    }

    @Test
    void mentionsEveryMigrateFlagNameAndVariable() {
        for (Flag f : MigrateFlags.FLAGS) {
            assertTrue(HELP.contains("--" + f.name()), f.name());
            f.env().ifPresent(env -> assertTrue(HELP.contains(env), env));
        }
    }

    @Test
    void theKubernetesImageVariablesAreAllThere() {
        // the variables the Kubernetes etcd image's migrate reads
        for (String env : List.of(
                "TARGET_VERSION",
                "TARGET_STORAGE",
                "DATA_DIRECTORY",
                "ETCD_NAME",
                "INITIAL_CLUSTER",
                "LISTEN_PEER_URLS",
                "LISTEN_CLIENT_URLS",
                "ETCD_CREDS",
                "ETCD_DATA_PREFIX",
                "TTL_KEYS_DIRECTORY",
                "INITIAL_ADVERTISE_PEER_URLS",
                "BUNDLED_VERSIONS")) {
            assertTrue(MigrateFlags.FLAGS.stream().anyMatch(f -> f.env().equals(java.util.Optional.of(env))), env);
        }
    }

    @Test
    void flagNamesAndVariablesAreUnique() {
        Set<String> names = new HashSet<>();
        Set<String> envs = new HashSet<>();
        for (Flag f : MigrateFlags.FLAGS) {
            assertTrue(names.add(f.name()), "duplicate flag " + f.name());
            f.env().ifPresent(env -> assertTrue(envs.add(env), "duplicate variable " + env));
        }
        assertEquals(MigrateFlags.FLAGS.size(), names.size());
    }

    @Test
    void documentsTheExitStatusesAndVersionFile() {
        for (String s : List.of(
                "Exit status",
                "0 done",
                "1 a step failed",
                "2 bad flags",
                "3 refused",
                "143",
                "version.txt",
                Help.VERSION_FILE_EXAMPLE,
                "--help",
                "--version",
                "etcd-migrate demo",
                "Flags of demo")) {
            assertTrue(FLAT.contains(s), s);
        }
    }

    @Test
    void isWrappedAndSaysNothingThatIsNoLongerTrue() {
        for (String line : HELP.split("\n")) {
            assertTrue(line.length() <= 110, "too long: " + line);
        }
        assertTrue(!FLAT.contains("etcd2 is refused"), "etcd2 conversions exist");
    }

    @Test
    void theVersionFileExampleIsAVersionTheToolAccepts() {
        var example = dev.etcdmigrate.version.DataVersion.parse(Help.VERSION_FILE_EXAMPLE);
        assertTrue(
                dev.etcdmigrate.catalog.Catalog.bundled().releases().stream()
                        .anyMatch(r -> r.version().equals(example.version().toString())),
                Help.VERSION_FILE_EXAMPLE + " is not a bundled version");
    }

    @Test
    void eachCommandHasItsOwnHelpNamingItsUsage() {
        Flag output = Flag.value("output", null, "text|json", "text", "the answer's format.");
        Map<String, String> texts = Map.of(
                "etcd-migrate [migrate]", MIGRATE,
                "etcd-migrate plan", Help.plan(output),
                "etcd-migrate inspect", Help.inspect(output, MigrateFlags.FLAGS),
                "etcd-migrate provision", Help.tool(new ProvisionTool()));
        texts.forEach((usage, text) -> {
            assertTrue(text.contains("Usage:\n  " + usage), usage + ": " + text);
            texts.keySet().stream()
                    .filter(other -> !other.equals(usage))
                    .forEach(other ->
                            assertFalse(text.contains("  " + other + " "), other + " in " + usage + "'s help"));
            assertTrue(
                    text.lines().count()
                            < OVERVIEW.lines().count() + MIGRATE.lines().count(),
                    usage);
        });
        assertTrue(Help.plan(output).contains("--output"));
        assertTrue(Help.inspect(output, MigrateFlags.FLAGS).contains("--data-dir DIR"));
        // the overview lists the commands, not migrate's flags
        assertFalse(OVERVIEW.contains("--target-version"), OVERVIEW);
        assertTrue(OVERVIEW.lines().count() < 50, OVERVIEW.lines().count() + " lines");
    }
}
