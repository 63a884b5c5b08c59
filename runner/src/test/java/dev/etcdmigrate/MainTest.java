package dev.etcdmigrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
        assertEquals(
                3,
                run(
                        List.of(
                                "--log-format=json",
                                "--data-dir",
                                dir.resolve("data").toString(),
                                "--bin-dir",
                                bin.toString(),
                                "--target-version",
                                "3.7.3",
                                "--name",
                                "m1",
                                "--no-exec"),
                        Map.of()));
        JsonNode end = lastEvent();
        assertEquals("refused", end.path("event").asText());
        assertEquals(3, end.path("exitCode").asInt());
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
                Main.shortOutputFlag(List.of("-o", "json", "--data-dir", "d")));
        assertEquals(List.of("--output=json"), Main.shortOutputFlag(List.of("-ojson")));
        assertEquals(
                List.of("--output=json", "--", "-o", "x"), Main.shortOutputFlag(List.of("-o=json", "--", "-o", "x")));
    }
}
