package dev.etcdmigrate.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.process.ToolRunner;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A rerun of provision takes the hash of a binary that is unchanged since its last full hash from the record,
 * and reads every binary that changed in any way again: the pin check is as strict as a full hash.
 */
class VerifiedHashesTest {

    @TempDir
    Path binDir;

    private final Release release = Catalog.bundled().releases().getLast();

    /** A clock far enough ahead that every file written by the test counts as settled. */
    private static final Clock LATER = Clock.offset(Clock.systemUTC(), VerifiedHashes.SETTLED.plusSeconds(1));

    private Provisioner provisioner(ProvisionerRecipeTest.ScriptSource source, Clock clock) throws Exception {
        Log log = Log.text(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        String pins = pins();
        return new Provisioner(
                binDir,
                List.of(source),
                List.of(),
                new ToolRunner(log, new Children(Duration.ofSeconds(5))),
                log,
                r -> Pins.of(r.version(), "linux/amd64", pins),
                clock);
    }

    private String script(String tool) {
        return "#!/bin/sh\necho '" + tool + " Version: " + release.version() + "'\n";
    }

    private String pins() throws Exception {
        StringBuilder pins = new StringBuilder();
        for (String tool : release.toolNames()) {
            pins.append("bin ")
                    .append(tool)
                    .append(" sha256:")
                    .append(HexFormat.of()
                            .formatHex(java.security.MessageDigest.getInstance("SHA-256")
                                    .digest(script(tool).getBytes(StandardCharsets.UTF_8))))
                    .append('\n');
        }
        return pins.toString();
    }

    private Path binary(String tool) {
        return binDir.resolve(tool + "-" + release.version());
    }

    /** Installs, then checks once with a full hash of every binary, which records them. */
    private ProvisionerRecipeTest.ScriptSource installedAndRecorded() throws Exception {
        var source = new ProvisionerRecipeTest.ScriptSource("r", true);
        provisioner(source, LATER).provision(release);
        Provisioner first = provisioner(source, LATER);
        first.provision(release);
        assertEquals(0, first.recalled(), "the first check after an install reads every binary");
        return source;
    }

    /** Until a file written now gets a later ctime than path's: a write from then on shows in the ctime. */
    private void afterTheFileClockTicks(Path path) throws Exception {
        FileTime ctime = ctime(path);
        Poll.untilTrue(Duration.ofSeconds(10), Duration.ofMillis(1), "the file clock to tick", () -> {
            Path probe = Files.createTempFile(binDir, "tick", "");
            try {
                return ctime(probe).compareTo(ctime) > 0;
            } finally {
                Files.delete(probe);
            }
        });
    }

    private static FileTime ctime(Path path) throws Exception {
        return (FileTime) Files.getAttribute(path, "unix:ctime");
    }

    @Test
    void anUnchangedBinaryIsNotReadAgain() throws Exception {
        var source = installedAndRecorded();
        Provisioner again = provisioner(source, LATER);
        Pins pins = again.provision(release);
        assertEquals(release.toolNames().size(), again.recalled(), "every hash from its record");
        assertEquals(release.toolNames().size(), pins.checked(), "and each still compared with its pin");
        assertEquals(1, source.fetches);
    }

    /** In place, same size, mtime put back (as cp -p or rsync -t leave it): the ctime shows the write. */
    @Test
    void aBinaryRewrittenWithItsSizeAndMtimeKeptIsCaught() throws Exception {
        var source = installedAndRecorded();
        Path etcd = binary("etcd");
        afterTheFileClockTicks(etcd);
        FileTime mtime = Files.getLastModifiedTime(etcd);
        String tampered = script("etcd").replace("Version", "VERSION");
        assertEquals(script("etcd").length(), tampered.length());
        Files.writeString(etcd, tampered);
        Files.setLastModifiedTime(etcd, mtime);

        Provisioner again = provisioner(source, LATER);
        again.provision(release);
        assertEquals(2, source.fetches, "the changed binary differs from its pin: provisioned again");
        assertEquals(script("etcd"), Files.readString(etcd));
        assertEquals(0, again.recalled(), "a release provisioned again is not recalled");
    }

    /** A file moved over the binary (another inode) is read again; with the same bytes it still matches. */
    @Test
    void aReplacedBinaryIsReadAgain() throws Exception {
        var source = installedAndRecorded();
        Path etcd = binary("etcd");
        Path copy = binDir.resolve("copy");
        Files.copy(etcd, copy, StandardCopyOption.COPY_ATTRIBUTES);
        Files.move(copy, etcd, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);

        Provisioner again = provisioner(source, LATER);
        again.provision(release);
        assertEquals(1, source.fetches, "the same bytes match their pin");
        assertEquals(release.toolNames().size() - 1, again.recalled(), "etcd was read, the others recalled");
    }

    /** A file written in the last moments may change again within one tick of the file clock: not recorded. */
    @Test
    void aJustWrittenBinaryIsNotRecorded() throws Exception {
        var source = new ProvisionerRecipeTest.ScriptSource("r", true);
        Clock now = Clock.systemUTC();
        provisioner(source, now).provision(release);
        provisioner(source, now).provision(release);
        Provisioner again = provisioner(source, now);
        again.provision(release);
        assertEquals(0, again.recalled(), "files younger than the settling time are read every time");
        assertEquals(1, source.fetches);
    }

    /** A record whose hash is not the pin's is never believed: the binary is read, and matches. */
    @Test
    void aRecordThatDisagreesWithThePinIsNotBelieved() throws Exception {
        var source = installedAndRecorded();
        Path record = binDir.resolve(".provisioned").resolve(release.version() + ".verified");
        String text = Files.readString(record);
        String etcdLine =
                text.lines().filter(l -> l.startsWith("etcd ")).findFirst().orElseThrow();
        String recorded = etcdLine.split(" ")[1];
        Files.writeString(record, text.replace(etcdLine, etcdLine.replace(recorded, "0".repeat(64))));

        Provisioner again = provisioner(source, LATER);
        again.provision(release);
        assertEquals(1, source.fetches, "read in full, the binary matches its pin");
        assertEquals(release.toolNames().size() - 1, again.recalled());
        assertTrue(Files.readString(record).contains("etcd " + recorded + " "), "the record is written afresh");
    }
}
