package dev.etcdmigrate.it.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.it.support.WrittenDirs;
import dev.etcdmigrate.version.StorageApi;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code inspect}: the offline report on every bundled line's data (text and JSON), on a dir an etcd holds
 * open, on a dir carrying a NOSPACE alarm and on one whose v2 store holds keys (what 3.6+ refuses). It
 * changes nothing.
 */
class InspectIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void everyBundledLinesDataIsReportedInTextAndJsonUntouched(@TempDir Path dir) throws Exception {
        List<String> summary = new ArrayList<>();
        for (Release release : EtcdFixture.CATALOG.releases()) {
            StorageApi api = release.line().v3Api() ? StorageApi.ETCD3 : StorageApi.ETCD2;
            Path data = dir.resolve(release.version());
            try (WrittenDirs dirs = new WrittenDirs()) {
                dirs.write(release, data, WrittenDirs.Variant.plain(api), 3);
            }
            Map<String, String> before = TreeDigest.of(data);
            JsonNode report = json(data);
            String text = text(data);
            assertEquals(before, TreeDigest.of(data), "inspect changed nothing");
            assertEquals(1, report.path("schema").asInt());
            assertEquals(
                    release.minorLine().toString(), report.path("writtenBy").asText(), report.toString());
            assertEquals(api.toString(), report.path("storage").asText(), report.toString());
            assertTrue(report.path("pinned").asBoolean(), report.toString());
            assertEquals("absent", report.path("label").path("verdict").asText(), report.toString());
            assertEquals(1, report.path("members").size(), report.toString());
            assertFalse(report.path("members").get(0).path("peerUrls").isEmpty(), report.toString());
            assertTrue(
                    report.path("clusterId").isTextual()
                            && report.path("memberId").isTextual(),
                    report.toString());
            assertTrue(report.path("wal").path("segments").asInt() >= 1, report.toString());
            if (api == StorageApi.ETCD3) {
                long inUse = report.path("db").path("bytesInUse").asLong(-1);
                assertTrue(
                        inUse >= 4096
                                && inUse <= report.path("db").path("bytes").asLong(),
                        report.path("db").toString());
            }
            assertEquals(
                    EtcdFixture.CATALOG.releases().size(),
                    report.path("targets").size(),
                    report.toString());
            // the line itself is always a target without a step (a restart), with the storage the line serves
            for (JsonNode t : report.path("targets")) {
                if (t.path("version").asText().equals(release.version())
                        && t.path("storage").asText().equals(api.toString())) {
                    assertTrue(t.path("steps").isArray() && t.path("steps").isEmpty(), t.toString());
                }
            }
            assertTrue(text.contains("written by: etcd " + release.minorLine() + " (" + api + ")"), text);
            assertTrue(text.contains("evidence:") && text.contains("targets:"), text);
            summary.add(release.version() + ": "
                    + text.lines().skip(1).limit(1).findFirst().orElse(""));
        }
        summary.forEach(System.out::println);
    }

    /** While etcd runs on the data: the report is made, says who holds the db, and writes nothing into the dir. */
    @Test
    void aDirAnEtcdHoldsIsReportedAndSaysSo(@TempDir Path dir) throws Exception {
        Release release = EtcdFixture.release("3.5.35");
        Path data = dir.resolve("data");
        etcd.seed(release, data, 20);
        Files.delete(data.resolve("version.txt"));
        try (PrivateEtcd running = etcd.start(release, data)) {
            JsonNode report = json(data);
            long pid = report.path("heldByPid").asLong();
            String command =
                    ProcessHandle.of(pid).flatMap(h -> h.info().command()).orElse("");
            assertTrue(
                    command.endsWith("etcd-" + release.version()),
                    "held by the running etcd: " + pid + " " + command + " " + report);
            assertTrue(report.path("access").asText().contains("holds the db open"), report.toString());
            assertEquals("3.5", report.path("writtenBy").asText(), report.toString());
            assertTrue(text(data).contains("holds the db open"));
            assertFalse(Files.exists(data.resolve(".etcd-migrate")), "no lock, no own dir");
            assertFalse(Files.exists(data.resolve("version.txt")));
            running.stop(Duration.ofSeconds(20));
        }
    }

    @Test
    void aNospaceAlarmRecordedInTheDbIsReported(@TempDir Path dir) throws Exception {
        Release release = EtcdFixture.release("3.5.35");
        Path data = dir.resolve("data");
        etcd.seed(release, data, 20);
        String member;
        try (PrivateEtcd running = etcd.start(release, data)) {
            member = running.gateway().status().path("header").path("member_id").asText();
            // the maintenance API's ACTIVATE: the alarm etcd itself raises at its quota, without filling a disk
            HttpResponse<String> reply = HttpClient.newHttpClient()
                    .send(
                            HttpRequest.newBuilder(running.gateway()
                                            .baseUrl()
                                            .resolve(release.line().jsonGateway() + "/maintenance/alarm"))
                                    .POST(HttpRequest.BodyPublishers.ofString("{\"action\":\"ACTIVATE\",\"memberID\":\""
                                            + member + "\",\"alarm\":\"NOSPACE\"}"))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            assertEquals(200, reply.statusCode(), reply.body());
            assertEquals(1, running.gateway().alarms().size());
            running.stop(Duration.ofSeconds(20));
        }
        Map<String, String> before = TreeDigest.of(data);
        JsonNode report = json(data);
        assertEquals(before, TreeDigest.of(data));
        assertEquals(1, report.path("alarms").size(), report.toString());
        assertEquals("NOSPACE", report.path("alarms").get(0).path("type").asText());
        assertEquals(
                Long.toHexString(Long.parseUnsignedLong(member)),
                report.path("alarms").get(0).path("memberId").asText());
        assertTrue(
                text(data).contains("alarms: NOSPACE of member " + Long.toHexString(Long.parseUnsignedLong(member))));
    }

    /** v2 keys in the store (in the snapshot, and as WAL writes): counted, and the lines that refuse them named. */
    @Test
    void v2CustomContentIsReportedWithTheLinesThatRefuseIt(@TempDir Path dir) throws Exception {
        Release release = EtcdFixture.release("3.5.35");
        Path data = dir.resolve("data");
        try (WrittenDirs dirs = new WrittenDirs()) {
            dirs.write(release, data, new WrittenDirs.Variant(StorageApi.ETCD2, true, java.util.Optional.empty()), 30);
        }
        Map<String, String> before = TreeDigest.of(data);
        JsonNode report = json(data);
        assertEquals(before, TreeDigest.of(data));
        JsonNode v2 = report.path("v2");
        assertTrue(v2.path("keysOutsideMembership").asLong() > 0, report.toString());
        List<String> refusing = new ArrayList<>();
        v2.path("linesRefusingIt").forEach(l -> refusing.add(l.asText()));
        List<String> expected = EtcdFixture.CATALOG.releases().stream()
                .filter(r -> r.line().v2ResidueRefused())
                .map(r -> r.minorLine().toString())
                .toList();
        assertEquals(expected, refusing, report.toString());
        assertEquals("etcd2", report.path("storage").asText(), "v2 keys and no v3 key: etcd2 data of a 3.x line");
        assertTrue(text(data).contains("refuses to start on such content"));
    }

    /**
     * A 3.5 db whose root page says it is another page (bbolt's "Page expected to be" assertion): the report
     * is still made, its damage section names the db and the page, says inspect changed nothing, and names
     * the way back (no backup here: a snapshot restore); the WAL still gives the line.
     */
    @Test
    void aDamagedDbIsReportedWithTheFileThePageAndTheWayBack(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("damaged");
        try (WrittenDirs dirs = new WrittenDirs()) {
            dirs.write(EtcdFixture.release("3.5.35"), data, WrittenDirs.Variant.plain(StorageApi.ETCD3), 3);
        }
        Path db = data.resolve("member/snap/db");
        long root;
        try (java.nio.channels.FileChannel f = java.nio.channels.FileChannel.open(
                db, java.nio.file.StandardOpenOption.READ, java.nio.file.StandardOpenOption.WRITE)) {
            java.nio.ByteBuffer meta = java.nio.ByteBuffer.allocate(80).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            f.read(meta, 0);
            int pageSize = meta.getInt(24);
            root = meta.getLong(32); // meta 0's root; meta 1's may differ, so both roots get the wrong id
            java.nio.ByteBuffer meta1 = java.nio.ByteBuffer.allocate(80).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            f.read(meta1, pageSize);
            for (long r : new long[] {root, meta1.getLong(32)}) {
                f.write(
                        java.nio.ByteBuffer.allocate(8)
                                .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                                .putLong(0, 0),
                        r * pageSize);
            }
        }
        JsonNode report = json(data);
        JsonNode damage = report.path("damage");
        assertTrue(damage.path("files").get(0).asText().startsWith("member/snap/db (page "), report.toString());
        assertTrue(damage.path("files").get(0).asText().contains("found 0"), report.toString());
        assertEquals("nothing (inspect only reads)", damage.path("changed").asText());
        assertTrue(
                damage.path("wayBack").asText().contains("etcdutl snapshot restore SNAPSHOT.db --name"),
                damage.toString());
        assertEquals("3.5", report.path("writtenBy").asText(), "the WAL still says: " + report);
        assertTrue(text(data).contains("  damage (nothing (inspect only reads)):\n    - member/snap/db (page "));
    }

    private static JsonNode json(Path data) throws Exception {
        try (RunnerProcess runner =
                RunnerProcess.run(List.of("inspect", "--data-dir", data.toString(), "-o", "json"))) {
            assertEquals(0, runner.exitCode(), runner.output());
            String line = runner.output()
                    .lines()
                    .filter(l -> l.startsWith("{\"schema\""))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no report: " + runner.output()));
            return JSON.readTree(line);
        }
    }

    private static String text(Path data) throws Exception {
        try (RunnerProcess runner = RunnerProcess.run(List.of("inspect", "--data-dir", data.toString()))) {
            assertEquals(0, runner.exitCode(), runner.output());
            return runner.output();
        }
    }
}
