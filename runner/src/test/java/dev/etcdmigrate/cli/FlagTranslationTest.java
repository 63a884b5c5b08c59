package dev.etcdmigrate.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.config.EtcdCommandLine;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The operator's etcd flags in each line's vocabulary ({@link EtcdCommandLine#translate}) with the bundled catalog's
 * renames: kubeadm 1.34+'s flags for etcd 3.6+ ({@code --feature-gates=InitialCorruptCheck=true},
 * {@code --watch-progress-notify-interval=5s}) and kubeadm 1.33's ({@code --experimental-*}) for every supported
 * line; whatever a line has no name for stays (and its etcd refuses it before anything changes).
 */
class FlagTranslationTest {

    static final List<String> KUBEADM_137 =
            List.of("--name=m0", "--feature-gates=InitialCorruptCheck=true", "--watch-progress-notify-interval=5s");
    static final List<String> KUBEADM_133 = List.of(
            "--name=m0",
            "--experimental-initial-corrupt-check=true",
            "--experimental-watch-progress-notify-interval=5s");

    static Stream<Arguments> table() {
        return Stream.of(
                // kubeadm 1.37 (and 1.34 for etcd 3.6+): 3.5 and 3.4 know only the experimental spellings
                Arguments.of("3.7", KUBEADM_137, KUBEADM_137, List.of()),
                Arguments.of("3.6", KUBEADM_137, KUBEADM_137, List.of()),
                Arguments.of(
                        "3.5",
                        KUBEADM_137,
                        KUBEADM_133,
                        List.of(
                                "--feature-gates=InitialCorruptCheck=true -> --experimental-initial-corrupt-check=true",
                                "--watch-progress-notify-interval=5s -> --experimental-watch-progress-notify-interval=5s")),
                Arguments.of(
                        "3.4",
                        KUBEADM_137,
                        KUBEADM_133,
                        List.of(
                                "--feature-gates=InitialCorruptCheck=true -> --experimental-initial-corrupt-check=true",
                                "--watch-progress-notify-interval=5s -> --experimental-watch-progress-notify-interval=5s")),
                // kubeadm 1.33: 3.7 rejects the experimental spellings, 3.6 still takes both
                Arguments.of(
                        "3.7",
                        KUBEADM_133,
                        KUBEADM_137,
                        List.of(
                                "--experimental-initial-corrupt-check=true -> --feature-gates=InitialCorruptCheck=true",
                                "--experimental-watch-progress-notify-interval=5s -> --watch-progress-notify-interval=5s")),
                Arguments.of("3.6", KUBEADM_133, KUBEADM_133, List.of()),
                Arguments.of("3.5", KUBEADM_133, KUBEADM_133, List.of()),
                // spellings Go's flag package reads the same: one dash, the value as the next word, a bool without one
                Arguments.of(
                        "3.7",
                        List.of("-experimental-initial-corrupt-check", "-experimental-corrupt-check-time", "3m"),
                        List.of("--feature-gates=InitialCorruptCheck=true", "--corrupt-check-time=3m"),
                        List.of(
                                "-experimental-initial-corrupt-check -> --feature-gates=InitialCorruptCheck=true",
                                "-experimental-corrupt-check-time 3m -> --corrupt-check-time=3m")),
                // the value is the operator's, false included
                Arguments.of(
                        "3.7",
                        List.of("--experimental-initial-corrupt-check=false"),
                        List.of("--feature-gates=InitialCorruptCheck=false"),
                        List.of(
                                "--experimental-initial-corrupt-check=false -> --feature-gates=InitialCorruptCheck=false")),
                // several gates: those with a flag on 3.5 become it; one without stays in the list (3.5 refuses it)
                Arguments.of(
                        "3.5",
                        List.of("--feature-gates=InitialCorruptCheck=true, CompactHashCheck=false,SomeGate=true"),
                        List.of(
                                "--experimental-initial-corrupt-check=true",
                                "--experimental-compact-hash-check-enabled=false",
                                "--feature-gates=SomeGate=true"),
                        List.of("--feature-gates=InitialCorruptCheck=true, CompactHashCheck=false,SomeGate=true ->"
                                + " --experimental-initial-corrupt-check=true"
                                + " --experimental-compact-hash-check-enabled=false --feature-gates=SomeGate=true")),
                // no gate with a flag: the list stays as it is (the refusal names the catalog's hint)
                Arguments.of(
                        "3.5",
                        List.of("--feature-gates=SomeGate=true"),
                        List.of("--feature-gates=SomeGate=true"),
                        List.of()),
                // words etcd does not read as flags (after a stray word or --) are left alone
                Arguments.of(
                        "3.5",
                        List.of("--watch-progress-notify-interval=5s", "stray", "--watch-progress-notify-interval=5s"),
                        List.of(
                                "--experimental-watch-progress-notify-interval=5s",
                                "stray",
                                "--watch-progress-notify-interval=5s"),
                        List.of(
                                "--watch-progress-notify-interval=5s -> --experimental-watch-progress-notify-interval=5s")),
                // a flag without its value: left for etcd to refuse
                Arguments.of(
                        "3.7",
                        List.of("--experimental-corrupt-check-time"),
                        List.of("--experimental-corrupt-check-time"),
                        List.of()));
    }

    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("table")
    void eachLineGetsItsOwnSpelling(String line, List<String> given, List<String> expected, List<String> renames) {
        Map<String, String> replacements = release(line).line().flagReplacements();
        EtcdCommandLine.Translated translated = EtcdCommandLine.translate(given, replacements);
        assertEquals(expected, translated.args());
        assertEquals(
                renames,
                translated.renamed().stream()
                        .map(r -> r.given() + " -> " + r.as())
                        .toList());
        // translating again changes nothing: the result is already the line's own vocabulary
        assertEquals(expected, EtcdCommandLine.translate(expected, replacements).args());
    }

    private static Release release(String line) {
        return Catalog.bundled().releases().stream()
                .filter(r -> r.minorLine().toString().equals(line))
                .findFirst()
                .orElseThrow();
    }
}
