package dev.etcdmigrate.it.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerProcess;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorOutputStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * `provision` from a release tarball: a tarball made here (holding the real 3.5.35 binaries, laid
 * out like an upstream release), served by a file: URL from a catalog written here.
 */
class ProvisionTarballIT {

    private static final String VERSION = "3.5.35";

    @TempDir
    static Path shared;

    static Path tarball;
    static String sha256;

    @BeforeAll
    static void makeTarball() throws Exception {
        tarball = shared.resolve("etcd-v" + VERSION + "-linux-amd64.tar.gz");
        try (OutputStream file = Files.newOutputStream(tarball);
                TarArchiveOutputStream tar = new TarArchiveOutputStream(new GzipCompressorOutputStream(file))) {
            tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
            for (String tool : List.of("etcd", "etcdctl", "etcdutl")) {
                Path binary = EtcdFixture.binDir().resolve(tool + "-" + VERSION);
                TarArchiveEntry entry = new TarArchiveEntry("etcd-v" + VERSION + "-linux-amd64/" + tool);
                entry.setSize(Files.size(binary));
                entry.setMode(0755);
                tar.putArchiveEntry(entry);
                Files.copy(binary, tar);
                tar.closeArchiveEntry();
            }
            TarArchiveEntry readme = new TarArchiveEntry("etcd-v" + VERSION + "-linux-amd64/README.md");
            byte[] text = "upstream readme\n".getBytes();
            readme.setSize(text.length);
            tar.putArchiveEntry(readme);
            tar.write(text);
            tar.closeArchiveEntry();
        }
        sha256 = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(tarball)));
    }

    private static Path catalog(Path dir, String checksum) throws Exception {
        String yaml = """
                releases:
                  - version: %s
                    upstream:
                      tag: v%s
                      tarballs:
                        - platform: linux/amd64
                          url: %s
                          sha256: "%s"
                    sources: []
                    line:
                      v3Api: true
                      v2Api: flag
                      v2EnableFlags: ["--enable-v2=true"]
                      v2ResidueRefused: false
                      jsonGateway: /v3
                      logFlags: []
                      etcdctlEnv: {}
                      envDuplicateRefused: true
                      downgradeCheckFlag: "--experimental-downgrade-check-time"
                      statusReportsDowngrade: false
                      tools: {etcdutl: true, etcdctlMigrate: false, checkV2Store: true, snapshotRestore: etcdutl}
                      upgrade: {from: "3.4", previousMinimumPatch: "", previousSnapshotFirst: false}
                      downgrade: {to: "3.4", method: snapshot-restore}
                """.formatted(VERSION, VERSION, tarball.toUri(), checksum);
        Path file = dir.resolve("catalog.yaml");
        Files.writeString(file, yaml);
        return file;
    }

    private static List<String> listing(Path dir) throws Exception {
        try (Stream<Path> walk = Files.walk(dir)) {
            return walk.map(p -> dir.relativize(p).toString()).sorted().toList();
        }
    }

    /** Each file's inode and modification time: a file written again gets another. */
    private static Map<String, String> identities(Path dir) throws Exception {
        Map<String, String> ids = new TreeMap<>();
        for (String name : listing(dir)) {
            BasicFileAttributes a =
                    Files.readAttributes(dir.resolve(name), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            ids.put(name, a.fileKey() + " " + a.lastModifiedTime().toMillis());
        }
        return ids;
    }

    private static final java.util.function.Function<com.fasterxml.jackson.databind.JsonNode, List<String>> JSON_LIST =
            array -> java.util.stream.StreamSupport.stream(array.spliterator(), false)
                    .map(n -> n.asText())
                    .toList();

    /** `provision` for linux/amd64 into {@code bin} of the releases in {@code catalog}. */
    private static List<String> provision(Path bin, Path catalog) {
        return List.of(
                "provision", "--bin-dir", bin.toString(), "--platform", "linux/amd64", "--catalog", catalog.toString());
    }

    @Test
    void aTarballWhoseChecksumDiffersIsRefusedAndLeavesTheBinDirUnchanged(@TempDir Path dir) throws Exception {
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Files.writeString(bin.resolve("already-here"), "x");
        List<String> before = listing(bin);
        String wrong = sha256.substring(1) + (sha256.charAt(0) == '0' ? "1" : "0");
        try (RunnerProcess runner = RunnerProcess.run(provision(bin, catalog(dir, wrong)))) {
            assertEquals(1, runner.exitCode(), runner.output());
            String reason = runner.ending().path("reason").asText();
            assertEquals("failed", runner.ending().path("event").asText());
            assertTrue(
                    reason.contains(VERSION) && reason.contains(wrong) && reason.contains(sha256),
                    "the release and both checksums: " + reason);
            assertEquals(0, runner.events("provisioned").size(), runner.output());
        }
        assertEquals(before, listing(bin));
    }

    @Test
    void aMatchingTarballIsUnpackedCheckedAndCached(@TempDir Path dir) throws Exception {
        Path bin = dir.resolve("bin");
        List<String> args = provision(bin, catalog(dir, sha256));
        try (RunnerProcess first = RunnerProcess.run(args)) {
            assertEquals(0, first.exitCode(), first.output());
            var provisioned = first.events("provisioned");
            assertEquals(1, provisioned.size(), first.output());
            assertEquals("installed", provisioned.getFirst().path("how").asText());
            assertEquals(VERSION, provisioned.getFirst().path("version").asText());
            assertEquals(
                    List.of("etcd-" + VERSION, "etcdctl-" + VERSION, "etcdutl-" + VERSION),
                    JSON_LIST.apply(provisioned.getFirst().path("binaries")));
            assertEquals(
                    "trying",
                    first.events("provision-source").getFirst().path("outcome").asText());
        }
        for (String tool : List.of("etcd", "etcdctl", "etcdutl")) {
            Path installed = bin.resolve(tool + "-" + VERSION);
            assertTrue(Files.isExecutable(installed), installed + " executable");
            assertEquals(Files.size(EtcdFixture.binDir().resolve(tool + "-" + VERSION)), Files.size(installed));
        }
        assertTrue(
                listing(bin).stream().noneMatch(p -> p.contains("staging") || p.contains("README")),
                listing(bin).toString());
        Map<String, String> installed = identities(bin);

        try (RunnerProcess again = RunnerProcess.run(args)) {
            assertEquals(0, again.exitCode(), again.output());
            assertEquals(
                    "already",
                    again.events("provisioned").getFirst().path("how").asText(),
                    again.output());
            assertEquals(0, again.count("provision-source"), "a cached version fetches nothing");
        }
        assertEquals(installed, identities(bin), "a cached version is not installed again");
    }
}
