package dev.etcdmigrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.it.support.RunnerArgs;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one exception root reaches the exit status and the final event, in either log format; no etcd involved. */
class MainTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(List<String> args, Map<String, String> env) {
        return Main.run(args, env, new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    private JsonNode lastEvent() throws Exception {
        List<String> lines = err.toString(StandardCharsets.UTF_8).lines().toList();
        return JSON.readTree(lines.getLast());
    }

    @Test
    void aUsageErrorIsExit2AndARefusedEvent() throws Exception {
        assertEquals(2, run(List.of("migrate", "--no-such-flag"), Map.of("LOG_FORMAT", "json")));
        JsonNode end = lastEvent();
        assertEquals("refused", end.path("event").asText());
        assertEquals(2, end.path("exitCode").asInt());
        assertTrue(end.path("reason").asText().contains("--no-such-flag"), end.toString());
    }

    @Test
    void aRefusedTransitionIsExit3(@TempDir Path dir) throws Exception {
        Path data = Files.createDirectories(dir.resolve("data/member/snap"));
        Files.writeString(data.resolve("db"), "not etcd's");
        Path bin = Files.createDirectories(dir.resolve("bin"));
        // data without version.txt and no --initial-version: the runner cannot tell what wrote it
        List<String> args = new ArrayList<>(List.of("--log-format=json"));
        args.addAll(RunnerArgs.flags(dir.resolve("data"), bin, "3.7.3", "m1"));
        args.add("--no-exec");
        assertEquals(3, run(args, Map.of()));
        JsonNode end = lastEvent();
        assertEquals("refused", end.path("event").asText());
        assertEquals(3, end.path("exitCode").asInt());
        List<String> lines = err.toString(StandardCharsets.UTF_8).lines().toList();
        JsonNode summary = JSON.readTree(lines.get(lines.size() - 2));
        assertEquals("run-summary", summary.path("event").asText(), "a migrate run ends with its summary");
        assertEquals("refused", summary.path("outcome").asText());
        assertEquals(3, summary.path("exitCode").asInt());
        assertEquals(0, summary.path("steps").size());
        assertFalse(Files.exists(dir.resolve("data/version.txt")));
        assertFalse(Files.exists(dir.resolve("data/.etcd-migrate")), "nothing was changed");
        String reason = end.path("reason").asText();
        assertEquals(
                reason.indexOf("nothing was changed"),
                reason.lastIndexOf("nothing was changed"),
                "said once: " + reason);
    }

    @Test
    void aBadLogFormatIsReportedInTextAndExit2() {
        assertEquals(2, run(List.of("--log-format=xml"), Map.of()));
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains(" ERROR [etcd-migrate] ") && text.contains("xml"), text);
    }

    @Test
    void theShortOutputFlagIsPlansOwn() {
        assertEquals(
                List.of("--output", "json", "--data-dir", "d"),
                dev.etcdmigrate.cli.OutputFlags.shortOutputFlag(List.of("-o", "json", "--data-dir", "d")));
        assertEquals(List.of("--output=json"), dev.etcdmigrate.cli.OutputFlags.shortOutputFlag(List.of("-ojson")));
        assertEquals(
                List.of("--output=json", "--", "-o", "x"),
                dev.etcdmigrate.cli.OutputFlags.shortOutputFlag(List.of("-o=json", "--", "-o", "x")));
    }

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    private int runPrinting(List<String> args) {
        return Main.run(
                args,
                Map.of(),
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(
            strings = {
                "migrate --help",
                "migrate -h",
                "help migrate",
                "plan --help",
                "plan -h",
                "inspect --help",
                "inspect -h",
                "help plan",
                "--help",
                "-h",
                "help"
            })
    void eachCommandPrintsItsOwnHelpAndExits0(String words) {
        assertEquals(0, runPrinting(List.of(words.split(" "))));
        String command = java.util.Arrays.stream(words.split(" "))
                .filter(w -> !w.equals("help") && !w.startsWith("-"))
                .findFirst()
                .orElse("");
        String expected = command.isEmpty()
                ? dev.etcdmigrate.cli.Help.text(dev.etcdmigrate.cli.ToolCommand.installed())
                : Main.helpText(List.of(command, "--help")).orElseThrow();
        assertEquals(expected, out.toString(StandardCharsets.UTF_8));
        assertEquals("", err.toString(StandardCharsets.UTF_8), "help logs nothing");
    }

    @Test
    void theHelpsDiffer() {
        List<String> texts = java.util.stream.Stream.of("", "migrate", "plan", "inspect")
                .map(c -> Main.helpText(c.isEmpty() ? List.of("--help") : List.of(c, "--help"))
                        .orElseThrow())
                .toList();
        assertEquals(texts.size(), new java.util.HashSet<>(texts).size());
    }

    @Test
    void aTypoedFlagIsExit2AndNamesTheNearest() throws Exception {
        assertEquals(2, run(List.of("migrate", "--target-verison", "3.6.16"), Map.of("LOG_FORMAT", "json")));
        JsonNode end = lastEvent();
        assertEquals("refused", end.path("event").asText());
        assertTrue(end.path("reason").asText().contains("--target-version?"), end.toString());
    }

    @Test
    void helpForAnUnknownCommandRefusesThatCommand() throws Exception {
        assertEquals(2, run(List.of("help", "inspekt"), Map.of("LOG_FORMAT", "json")));
        JsonNode end = lastEvent();
        assertEquals("refused", end.path("event").asText());
        assertTrue(end.path("reason").asText().contains("'inspekt'"), end.toString());
    }

    /** A command's answer is what it prints on out; the diary stays on err. */
    @Test
    void inspectAnswersOnOut(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        assertEquals(
                0,
                runPrinting(List.of(
                        "inspect",
                        "--log-format=json",
                        "-o",
                        "json",
                        "--data-dir",
                        data.toString(),
                        "--bin-dir",
                        dir.toString())));
        JsonNode report = JSON.readTree(out.toString(StandardCharsets.UTF_8));
        assertEquals(data.toString(), report.path("dataDir").asText(), report.toString());
        assertFalse(err.toString(StandardCharsets.UTF_8).contains("\"targets\""), "the report is not in the diary");
        assertFalse(Files.exists(data), "inspect wrote nothing");
    }

    @Test
    void versionWithoutBinDirSaysWhereItLooked(@TempDir Path dir) {
        assertEquals(0, runPrinting(List.of("--version")));
        String text = out.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("looked for etcd-<version> in /usr/local/bin (the default"), text);
        out.reset();
        assertEquals(0, runPrinting(List.of("--version", "--bin-dir", dir.toString())));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("in " + dir + " (--bin-dir)"), out.toString());
    }
}
