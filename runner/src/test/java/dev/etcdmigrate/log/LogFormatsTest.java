package dev.etcdmigrate.log;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.cli.OutputFlags;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.event.EtcdEvent;
import dev.etcdmigrate.event.Event;
import dev.etcdmigrate.event.RunEvent;
import dev.etcdmigrate.event.StepEvent;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The text diary, the JSON lines and the etcd output file, fed the same events. */
class LogFormatsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ETCD_INFO =
            "{\"level\":\"info\",\"ts\":\"2026-11-23T01:00:00Z\",\"msg\":\"closed etcd server\",\"name\":\"m1\"}";
    private static final String ETCD_WARN =
            "{\"level\":\"warn\",\"ts\":\"2026-11-23T01:00:01Z\",\"msg\":\"slow fdatasync\"}";

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    private List<String> lines() {
        return out.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @Test
    void jsonLinesCarryTheEventItsFieldsAndTheSentence() throws Exception {
        Log log = Log.json(new PrintStream(out, true, StandardCharsets.UTF_8));
        log.emit(new StepEvent.StepFinished(2, 3, "minor-upgrade", 1234, "3.6.16/etcd3"));
        JsonNode line = JSON.readTree(lines().getFirst());
        assertEquals("etcd-migrate", line.path("source").asText());
        assertEquals("step-finished", line.path("event").asText());
        assertEquals(2, line.path("index").asInt());
        assertEquals(1234, line.path("tookMillis").asLong());
        assertEquals("3.6.16/etcd3", line.path("versionTxt").asText());
        assertEquals("info", line.path("level").asText());
        assertTrue(line.path("message").asText().contains("3.6.16/etcd3"));
    }

    @Test
    void etcdsJsonLinesPassThroughWithTheirSourceInFront() throws Exception {
        Log log = Log.json(new PrintStream(out, true, StandardCharsets.UTF_8));
        log.child("etcd-3.6.16", ETCD_INFO);
        log.child("etcd-2.3.8", "2026-11-23 01:00:00.000000 I | etcdserver: name = m1 \"quoted\"");
        String passed = lines().get(0);
        assertEquals(
                "{\"source\":\"etcd-3.6.16\"," + ETCD_INFO.substring(1), passed, "etcd's own fields byte for byte");
        JsonNode wrapped = JSON.readTree(lines().get(1));
        assertEquals("etcd-2.3.8", wrapped.path("source").asText());
        assertEquals("child-output", wrapped.path("event").asText());
        assertTrue(wrapped.path("line").asText().endsWith("name = m1 \"quoted\""));
    }

    @Test
    void aMultiLineSentenceIsOneJsonObjectAndSeveralTextLines() throws Exception {
        Event plan = new DecisionEvent.PlanMade(
                "3.5.35/etcd3",
                "3.6.16/etcd3",
                List.of(new DecisionEvent.PlannedStep(
                        1, "minor-upgrade", "upgrade 3.5.35 -> 3.6.16", "3.6.16/etcd3", 1 << 20, "nothing")),
                "");
        Log.json(new PrintStream(out, true, StandardCharsets.UTF_8)).emit(plan);
        assertEquals(1, lines().size());
        assertEquals(1, JSON.readTree(lines().getFirst()).path("steps").size());
        out.reset();
        Log.text(new PrintStream(out, true, StandardCharsets.UTF_8)).emit(plan);
        assertEquals(2, lines().size());
        assertTrue(lines().stream().allMatch(l -> l.contains(" INFO  [etcd-migrate] ")), lines().toString());
    }

    @Test
    void theTextLogShowsOnlyEtcdsWarningsAndErrorsWhenAsked() {
        Log log = Log.text(new PrintStream(out, true, StandardCharsets.UTF_8), EtcdOutput.ERRORS);
        log.child("etcd-3.6.16", ETCD_INFO);
        log.child("etcd-3.6.16", ETCD_WARN);
        log.child("etcd-2.3.8", "2026-11-23 01:00:00.000000 E | rafthttp: failed to dial");
        log.child("etcd-2.3.8", "2026-11-23 01:00:00.000000 I | etcdserver: published");
        log.child(
                "etcd-3.2.32",
                "2026-11-23 02:27:32.815943 W | etcdmain: found invalid file/dir .etcd-migrate under data dir /d");
        log.child(
                "etcd-3.7.3",
                "{\"level\":\"warn\",\"msg\":\"found invalid file under data directory\",\"filename\":\"version.txt\"}");
        log.info("runner lines are always shown");
        assertEquals(3, lines().size(), lines().toString());
        assertFalse(out.toString(StandardCharsets.UTF_8).contains("closed etcd server"));
        out.reset();
        Log.text(new PrintStream(out, true, StandardCharsets.UTF_8), EtcdOutput.ALL)
                .child("etcd-3.6.16", ETCD_INFO);
        assertEquals(1, lines().size());
    }

    @Test
    void theEtcdOutputFileKeepsEveryChildLineOwnerOnly(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("etcd-output.log");
        Files.writeString(file, "a previous run's lines\n");
        Log log = Log.text(new PrintStream(out, true, StandardCharsets.UTF_8), EtcdOutput.ERRORS);
        try (ChildOutputFile kept = ChildOutputFile.create(file)) {
            log.subscribe(kept);
            log.child("etcd-3.6.16", ETCD_INFO);
            log.info("not a child line");
            log.unsubscribe(kept);
        }
        List<String> kept = Files.readAllLines(file);
        assertEquals(1, kept.size(), kept.toString());
        assertTrue(kept.getFirst().endsWith("[etcd-3.6.16] " + ETCD_INFO));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    }

    @Test
    void everyEventTypeRendersAsJson() throws Exception {
        java.util.Set<String> envelope = java.util.Set.of("time", "level", "source", "event", "message");
        for (Class<?> type : eventRecords(Event.class)) {
            if (type == Event.Note.class || type == EtcdEvent.ChildOutput.class)
                continue; // written by the formats themselves
            for (var component : type.getRecordComponents()) {
                assertFalse(
                        envelope.contains(component.getName()),
                        type.getSimpleName() + "." + component.getName()
                                + " would repeat a key of the JSON line's envelope");
            }
        }
        Event refused = new RunEvent.Refused(3, "refused: a \"quoted\"\nreason\t(nothing was changed)");
        JsonNode line = JSON.readTree(JsonFormat.line(refused, java.time.Instant.EPOCH));
        assertEquals("refused", line.path("event").asText());
        assertEquals(3, line.path("exitCode").asInt());
        assertEquals(
                "refused: a \"quoted\"\nreason\t(nothing was changed)",
                line.path("reason").asText());
        assertEquals("error", line.path("level").asText());
    }

    /** The leaves under Event's sealed subject interfaces. */
    private static List<Class<?>> eventRecords(Class<?> sealed) {
        List<Class<?>> records = new java.util.ArrayList<>();
        for (Class<?> type : sealed.getPermittedSubclasses()) {
            if (type.isRecord()) records.add(type);
            else {
                assertTrue(type.isInterface() && type.isSealed(), type + " is a record or a sealed subject");
                records.addAll(eventRecords(type));
            }
        }
        return records;
    }

    private static final String SINGLE_PORT = "{\"level\":\"warn\",\"ts\":\"2026-11-27T21:00:00.000Z\",\"caller\":"
            + "\"embed/serve.go:250\",\"msg\":\"Running http and grpc server on single port. This is not recommended"
            + " for production.\"}";
    private static final String MUX_CLOSED = "{\"level\":\"error\",\"msg\":\"stopping insecure grpc server due to"
            + " error\",\"error\":\"accept tcp 127.0.0.1:18629: use of closed network connection\","
            + "\"stacktrace\":\"go.etcd.io/etcd/server/v3/embed.(*serveCtx).serve\"}";

    @Test
    void theDefaultHidesWhatTheRunnerCausedAndShowsTheRestOnlyWhenTheRunFails() throws Exception {
        OutputFlags given = OutputFlags.read(List.of(), java.util.Map.of());
        assertEquals(EtcdOutput.ERRORS, given.etcdOutput(), "the default");
        Log log = Log.of(given.format(), given.etcdOutput(), new PrintStream(out, true, StandardCharsets.UTF_8));
        log.child("etcd-3.6.16", ETCD_INFO);
        log.child("etcd-3.6.16", SINGLE_PORT); // the runner's one client URL causes it
        log.child("etcd-3.6.16", MUX_CLOSED, false); // after the runner's SIGTERM (the pump's call)
        log.emit(new StepEvent.StepFinished(1, 1, "minor-upgrade", 10, "3.6.16/etcd3"));
        assertEquals(1, lines().size(), "a success shows the runner's lines only: " + lines());
        log.child("etcd-3.6.16", ETCD_WARN); // a warning the runner did not cause
        assertEquals(2, lines().size(), lines().toString());
        out.reset();
        log.emit(new RunEvent.Failed(1, "step 1/1 failed"));
        List<String> shown = lines();
        assertTrue(shown.getLast().contains("step 1/1 failed"), "the reason stays last: " + shown);
        assertTrue(shown.stream().anyMatch(l -> l.endsWith(ETCD_INFO)), shown.toString());
        assertTrue(shown.stream().anyMatch(l -> l.endsWith(MUX_CLOSED)), shown.toString());
        assertEquals(5, shown.size(), "a header, the 3 hidden lines, the reason: " + shown);
        out.reset();
        log.emit(new RunEvent.Failed(1, "again"));
        assertEquals(1, lines().size(), "each hidden line is shown once");
    }

    @Test
    void theRunnersOwnSinglePortWarningIsExpectedAndSaysSoInJson() throws Exception {
        assertFalse(EtcdOutput.isImportant(SINGLE_PORT));
        assertFalse(EtcdOutput.isImportant("{\"level\":\"warn\",\"ts\":\"2026-11-27T22:01:33.083755Z\",\"caller\":"
                + "\"auth/store.go:1243\",\"msg\":\"simple token is not cryptographically signed\"}"));
        assertTrue(EtcdOutput.isImportant(ETCD_WARN));
        Log log = Log.json(new PrintStream(out, true, StandardCharsets.UTF_8));
        log.child("etcd-3.6.16", SINGLE_PORT);
        log.child("etcd-3.6.16", MUX_CLOSED, false);
        log.child("etcd-3.6.16", ETCD_WARN);
        log.child("etcd-3.6.16", ETCD_INFO);
        List<String> lines = lines();
        assertTrue(JSON.readTree(lines.get(0)).path("expected").asBoolean());
        assertTrue(JSON.readTree(lines.get(1)).path("expected").asBoolean());
        assertTrue(JSON.readTree(lines.get(2)).path("expected").isMissingNode());
        assertTrue(JSON.readTree(lines.get(3)).path("expected").isMissingNode());
    }

    @Test
    void timeStampsAlwaysHaveThreeDigitsOfMilliseconds() {
        assertEquals("2026-11-27T21:00:00.000Z", Stamp.of(java.time.Instant.parse("2026-11-27T21:00:00Z")));
        assertEquals("2026-11-27T21:00:00.040Z", Stamp.of(java.time.Instant.parse("2026-11-27T21:00:00.040999Z")));
        JsonNode line = null;
        try {
            line = JSON.readTree(JsonFormat.line(new RunEvent.Failed(1, "x"), java.time.Instant.EPOCH));
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        assertEquals("1970-01-01T00:00:00.000Z", line.path("time").asText());
    }
}
