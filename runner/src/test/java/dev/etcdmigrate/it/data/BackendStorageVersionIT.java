package dev.etcdmigrate.it.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.ondisk.BackendStorageVersion;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The storage version read straight from the bbolt file agrees with what etcdutl's {@code snapshot status}
 * reports, on dbs that real etcd 3.4 - 3.7 wrote (3.4 and 3.5 record none; 3.6 and 3.7 their own).
 */
class BackendStorageVersionIT {

    private static final Pattern VERSION = Pattern.compile("\"version\":\"([^\"]*)\"");

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    @Test
    void agreesWithEtcdutlOnEveryV3LineFrom34(@TempDir Path dir) throws Exception {
        for (String version : List.of("3.4.23", "3.5.35", "3.6.16", "3.7.3")) {
            Release release = EtcdFixture.release(version);
            Path data = dir.resolve(version);
            // enough keys that the key bucket spans many pages and the root is not a single inline bucket
            etcd.seed(release, data, 3000);
            if (release.line().tools().statusReportsStorageVersion()) {
                // 3.6+ set the storage version a few seconds after start: run until it reports one, then one more write
                try (var again = etcd.start(release, data)) {
                    Poll.untilTrue(
                            java.time.Duration.ofMinutes(2),
                            java.time.Duration.ofMillis(100),
                            version + " reporting a storage version",
                            () -> !again.gateway()
                                    .version()
                                    .path("storage")
                                    .asText("")
                                    .isEmpty());
                    // reported is not yet committed: wait until the db file itself holds it (etcd commits in batches)
                    Path db = data.resolve("member/snap/db");
                    Poll.untilTrue(
                            java.time.Duration.ofMinutes(2),
                            java.time.Duration.ofMillis(100),
                            version + "'s db holding its storage version",
                            () -> BackendStorageVersion.read(db).isPresent());
                    again.awaitWrite(java.time.Duration.ofSeconds(30));
                    again.stop(java.time.Duration.ofSeconds(20));
                }
            }
            Path db = data.resolve("member/snap/db");
            Optional<String> read = BackendStorageVersion.read(db);
            String reported = etcdutlVersion(db);
            assertEquals(reported.isEmpty() ? Optional.empty() : Optional.of(reported), read, version + ": " + read);
            if (version.startsWith("3.6") || version.startsWith("3.7")) {
                assertEquals(release.version().substring(0, 3) + ".0", read.orElseThrow(), version);
            }
        }
    }

    @Test
    void aRunningEtcdShowsAsTheDbsLockHolder(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("data");
        etcd.seed(EtcdFixture.release("3.5.35"), data, 100);
        Path db = data.resolve("member/snap/db");
        assertTrue(BackendStorageVersion.lockHolder(db).isEmpty(), "no etcd runs yet");
        try (var running = etcd.start(EtcdFixture.release("3.5.35"), data)) {
            assertTrue(BackendStorageVersion.lockHolder(db).isPresent(), "etcd holds bbolt's flock while it runs");
            running.stop(java.time.Duration.ofSeconds(20));
        }
        assertTrue(BackendStorageVersion.lockHolder(db).isEmpty(), "released when etcd stopped");
    }

    @Test
    void aFileThatIsNotBboltIsRefused(@TempDir Path dir) throws Exception {
        Path junk = dir.resolve("db");
        Files.write(
                junk,
                "not a bbolt file, just text long enough to cover two meta pages? no"
                        .repeat(200)
                        .getBytes(StandardCharsets.US_ASCII));
        assertThrows(IOException.class, () -> BackendStorageVersion.read(junk));
        Path empty = Files.createFile(dir.resolve("empty"));
        assertThrows(IOException.class, () -> BackendStorageVersion.read(empty));
    }

    /** What `etcdutl-3.7.3 snapshot status -w json` reports as the db's storage version ("" for none). */
    private static String etcdutlVersion(Path db) throws Exception {
        Process p = new ProcessBuilder(
                        EtcdFixture.binDir().resolve("etcdutl-3.7.3").toString(),
                        "snapshot",
                        "status",
                        db.toString(),
                        "-w",
                        "json")
                .redirectErrorStream(true)
                .start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, p.waitFor(), out);
        Matcher m = VERSION.matcher(out);
        assertTrue(m.find(), out);
        return m.group(1);
    }
}
