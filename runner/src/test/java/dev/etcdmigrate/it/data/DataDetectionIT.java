package dev.etcdmigrate.it.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.it.support.WrittenDirs;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The detector over data dirs that every bundled release wrote (etcd2 and etcd3 storage, with and without
 * snapshots, with the WAL in another dir) and over the members of a rolling upgrade stopped midway: the
 * storage, the line that wrote the data and the evidence, and the tree untouched. The table is printed
 * (and kept in target/detection-table.txt).
 */
class DataDetectionIT {

    private static final List<String> TABLE = new ArrayList<>();

    @TempDir
    static Path dir;

    @AfterAll
    static void printTable() throws Exception {
        String text = String.join("\n", TABLE) + "\n";
        System.out.print(text);
        Files.writeString(Path.of("target", "detection-table.txt"), text);
    }

    static Stream<WrittenDirs.Variant> variants(Release release, Path walDir) {
        List<WrittenDirs.Variant> out = new ArrayList<>();
        if (release.line().v3Api()) {
            out.add(WrittenDirs.Variant.plain(StorageApi.ETCD3));
            out.add(new WrittenDirs.Variant(StorageApi.ETCD3, true, Optional.of(walDir)));
        }
        if (release.line().v2Api() != Release.V2Api.NEVER) {
            out.add(WrittenDirs.Variant.plain(StorageApi.ETCD2));
            if (!release.line().v3Api()) out.add(new WrittenDirs.Variant(StorageApi.ETCD2, true, Optional.of(walDir)));
        }
        return out.stream();
    }

    @TestFactory
    Stream<DynamicTest> everyBundledReleaseIsDetectedFromItsData() {
        return EtcdFixture.CATALOG.releases().stream().flatMap(release -> {
            Path base = dir.resolve(release.version());
            return variants(release, base.resolve("wal-elsewhere"))
                    .map(variant -> DynamicTest.dynamicTest(release.version() + " " + variant.label(), () -> {
                        Path data = base.resolve(variant.api() + (variant.snapshots() ? "-snap" : ""));
                        try (WrittenDirs dirs = new WrittenDirs()) {
                            dirs.write(release, data, variant, variant.snapshots() ? 40 : 3);
                        }
                        if (variant.snapshots()) {
                            try (Stream<Path> snaps = Files.list(data.resolve("member/snap"))) {
                                assertTrue(
                                        snaps.anyMatch(p -> p.toString().endsWith(".snap")), "a snapshot was written");
                            }
                        }
                        Map<String, String> before = TreeDigest.of(data);
                        long start = System.nanoTime();
                        DataDetection.Detection d =
                                DataDetection.detect(data, variant.walDir(), EtcdFixture.CATALOG, true);
                        long micros = (System.nanoTime() - start) / 1000;
                        assertEquals(before, TreeDigest.of(data), "detection changed nothing");
                        TABLE.add(String.format(
                                "%-7s %-26s -> %s %s (floor %s, %d us): %s",
                                release.version(),
                                variant.label(),
                                d.storage().map(Object::toString).orElse("?"),
                                d.line().map(Object::toString).orElse("?"),
                                d.floor().map(Object::toString).orElse("?"),
                                micros,
                                d.evidenceText()));
                        assertEquals(Optional.of(variant.api()), d.storage(), d.evidenceText());
                        assertEquals(Optional.of(release.minorLine()), d.line(), d.evidenceText());
                        assertEquals(Optional.of(release.minorLine()), d.floor(), d.evidenceText());
                        assertTrue(d.clusterVersion().isPresent(), d.evidenceText());
                        assertEquals(1, d.members().size(), "one member: " + d.members());
                        assertFalse(d.members().getFirst().peerUrls().isEmpty(), "peer URLs: " + d.members());
                        assertTrue(d.clusterId().isPresent() && d.memberId().isPresent(), "WAL metadata");
                    }));
        });
    }

    /**
     * Midway through a rolling upgrade: the cluster version stays at the old line (the floor) until every
     * member runs the new one. 3.4 -> 3.5: the upgraded member's db has 3.5's meta keys, so its line is
     * 3.5 while its peers show 3.4. 3.5 -> 3.6: 3.6 records its storage version only once the cluster
     * version is 3.6, so its member still reads as 3.5 (what a reader of the files can know; docs/inspect.md).
     */
    @ParameterizedTest
    @CsvSource({"3.4.23, 3.5.35, 3.5", "3.5.35, 3.6.16, 3.5"})
    void aRollingUpgradeStoppedMidwayShowsEachMembersLine(String fromVersion, String toVersion, String upgradedReadsAs)
            throws Exception {
        Release from = EtcdFixture.release(fromVersion);
        Release to = EtcdFixture.release(toVersion);
        Path parent = Files.createDirectories(dir.resolve("rolling-" + fromVersion + "-" + toVersion));
        List<Path> members;
        try (WrittenDirs dirs = new WrittenDirs()) {
            members = dirs.rollingUpgradeMidway(from, to, parent);
        }
        for (int i = 0; i < members.size(); i++) {
            Map<String, String> before = TreeDigest.of(members.get(i));
            DataDetection.Detection d =
                    DataDetection.detect(members.get(i), Optional.empty(), EtcdFixture.CATALOG, true);
            assertEquals(before, TreeDigest.of(members.get(i)));
            TABLE.add(String.format(
                    "rolling %s->%s member m%d -> %s %s (floor %s): %s",
                    from.version(),
                    to.version(),
                    i,
                    d.storage().orElseThrow(),
                    d.line().orElseThrow(),
                    d.floor().orElseThrow(),
                    d.evidenceText()));
            assertEquals(3, d.members().size(), d.members().toString());
            assertEquals(from.minorLine(), d.floor().orElseThrow(), "the cluster version: " + d.evidenceText());
            assertEquals(
                    i == 0 ? MinorLine.parse(upgradedReadsAs) : from.minorLine(),
                    d.line().orElseThrow(),
                    d.evidenceText());
        }
    }

    /** A dir with nothing etcd wrote, and one with only a WAL without a version record: no line. */
    @Test
    void dataThatCannotAnswerGivesNoLine() throws Exception {
        Path empty = Files.createDirectories(dir.resolve("empty"));
        DataDetection.Detection d = DataDetection.detect(empty, Optional.empty(), EtcdFixture.CATALOG, true);
        assertEquals(Optional.empty(), d.line());
        assertFalse(d.holdsEtcdData());
        Path walOnly = Files.createDirectories(dir.resolve("wal-only/member/wal"));
        Files.write(walOnly.resolve("0000000000000000-0000000000000000.wal"), new byte[64]);
        DataDetection.Detection w =
                DataDetection.detect(dir.resolve("wal-only"), Optional.empty(), EtcdFixture.CATALOG, true);
        TABLE.add("WAL of zeros only -> " + w.storage().orElse(null) + " "
                + w.line().map(MinorLine::toString).orElse("no line") + ": " + w.evidenceText());
        assertEquals(Optional.empty(), w.floor(), w.evidenceText());
        assertEquals(Optional.empty(), w.line().filter(l -> l.major() >= 2), w.evidenceText());
    }
}
