package dev.etcdmigrate.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Release.DebianPackages;
import dev.etcdmigrate.catalog.Release.DowngradeMethod;
import dev.etcdmigrate.catalog.Release.GoLegacy;
import dev.etcdmigrate.catalog.Release.GoModules;
import dev.etcdmigrate.catalog.Release.RestoreTool;
import dev.etcdmigrate.catalog.Release.Source;
import dev.etcdmigrate.catalog.Release.Tarball;
import dev.etcdmigrate.catalog.Release.V2Api;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class CatalogTest {

    private static final Catalog BUNDLED = Catalog.bundled();

    static Stream<Release> bundledReleases() {
        return BUNDLED.releases().stream();
    }

    // ---- the bundled catalog -------------------------------------------------------------------

    /** A filled tarball checksum is a SHA-256 (64 lowercase hex digits) and names its release's tarball. */
    @ParameterizedTest
    @MethodSource("bundledReleases")
    void tarballChecksumsAreWellFormed(Release release) {
        for (Release.Tarball tarball : release.upstream().tarballs()) {
            assertTrue(tarball.sha256().isEmpty() || tarball.sha256().matches("[0-9a-f]{64}"), tarball.url());
            assertTrue(
                    tarball.url()
                            .endsWith("/v" + release.version() + "/etcd-v" + release.version() + "-"
                                    + tarball.platform().replace('/', '-') + ".tar.gz"),
                    tarball.url());
        }
    }

    static final MinorLine L3_0 = MinorLine.parse("3.0");
    static final MinorLine L3_4 = MinorLine.parse("3.4");
    static final MinorLine L3_5 = MinorLine.parse("3.5");
    static final MinorLine L3_6 = MinorLine.parse("3.6");

    static boolean atLeast(Release r, MinorLine line) {
        return !r.minorLine().isOlderThan(line);
    }

    @Test
    void bundledCatalogHasOneReleasePerLineOldestFirst() {
        List<Release> releases = BUNDLED.releases();
        for (int i = 1; i < releases.size(); i++) {
            assertTrue(
                    releases.get(i - 1).minorLine().isOlderThan(releases.get(i).minorLine()),
                    releases.get(i - 1).version() + " before " + releases.get(i).version());
        }
        List<String> versions = releases.stream().map(Release::version).toList();
        assertTrue(versions.containsAll(List.of("3.4.23", "3.5.35", "3.6.16", "3.7.3")), versions.toString());
        assertEquals("3.7.3", versions.getLast());
        assertEquals(String.join(", ", versions), BUNDLED.versionList());
    }

    @Test
    void bundledLinesFormAnUnbrokenChain() {
        List<Release> releases = BUNDLED.releases();
        for (int i = 1; i < releases.size(); i++) {
            assertEquals(
                    releases.get(i - 1).minorLine(),
                    releases.get(i).line().upgrade().fromLine(),
                    releases.get(i).version() + " opens the data of the bundled line before it");
        }
    }

    @Test
    void lookupsByVersionAndLine() {
        assertEquals(
                "3.6.16",
                BUNDLED.release(EtcdVersion.parse("3.6.16")).orElseThrow().version());
        assertTrue(BUNDLED.release(EtcdVersion.parse("3.6.15")).isEmpty());
        assertEquals(
                "3.5.35", BUNDLED.line(MinorLine.parse("3.5")).orElseThrow().version());
        assertTrue(BUNDLED.line(MinorLine.parse("3.8")).isEmpty());
        assertTrue(BUNDLED.line(MinorLine.parse("1.0")).isEmpty());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bundledReleases")
    void upgradeFromAndDowngradeToAreThePreviousMinor(Release r) {
        MinorLine line = r.minorLine();
        if (line.minor() > 0) {
            assertEquals(
                    new MinorLine(line.major(), line.minor() - 1),
                    r.line().upgrade().fromLine(),
                    "upgrade.from");
        } else {
            assertEquals(
                    line.major() - 1,
                    r.line().upgrade().fromLine().major(),
                    "x.0 opens the last line of the previous major");
        }
        assertEquals(r.line().upgrade().fromLine(), r.line().downgrade().toLine(), "downgrade.to");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bundledReleases")
    void v2AndV3FactsMatchTheLine(Release r) {
        Release.Line line = r.line();
        if (atLeast(r, L3_6)) {
            assertTrue(line.v2ResidueRefused(), "v2ResidueRefused");
            assertEquals(V2Api.NEVER, line.v2Api());
            assertTrue(line.v2EnableFlags().isEmpty(), "no v2 enable flags on a line without v2");
        } else {
            assertFalse(line.v2ResidueRefused(), "v2ResidueRefused");
            assertNotEquals(V2Api.NEVER, line.v2Api());
        }
        if (line.v2Api() == V2Api.FLAG) {
            assertFalse(line.v2EnableFlags().isEmpty());
        }
        assertEquals(atLeast(r, L3_0), line.v3Api(), "v3Api from 3.0 on");
        if (atLeast(r, L3_4)) {
            assertEquals("/v3", line.jsonGateway());
            assertFalse(line.logFlags().isEmpty());
            assertEquals(Map.of(), line.etcdctlEnv(), "etcdctl speaks v3 by default from 3.4 on");
        } else if (line.v3Api()) {
            assertEquals(Map.of("ETCDCTL_API", "3"), line.etcdctlEnv(), "etcdctl of 3.0-3.3 defaults to v2");
        }
        assertEquals(atLeast(r, L3_6), line.statusReportsDowngrade(), "statusReportsDowngrade");
        assertEquals(
                atLeast(r, L3_4),
                line.envDuplicateRefused(),
                "etcd exits on a duplicating ETCD_* variable from 3.4 on");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bundledReleases")
    void toolsAreConsistent(Release r) {
        Release.Tools tools = r.line().tools();
        if (tools.checkV2Store()) assertTrue(tools.etcdutl(), "check v2store runs etcdutl");
        if (tools.snapshotRestore() == RestoreTool.ETCDUTL)
            assertTrue(tools.etcdutl(), "restore with etcdutl needs etcdutl");
        assertEquals(!r.line().v3Api(), tools.snapshotRestore() == RestoreTool.NONE, "v3 snapshots need the v3 API");
        if (tools.snapshotRestore() != RestoreTool.NONE) {
            assertTrue(r.toolNames().contains(tools.snapshotRestore().toolName()), "restore tool is installed");
        }
        // etcdutl exists from 3.5 on; etcdctl migrate (v2 -> v3) lived in 3.0-3.4
        boolean from35 = atLeast(r, L3_5);
        assertEquals(from35, tools.etcdutl(), "etcdutl");
        assertEquals(atLeast(r, L3_0) && !from35, tools.etcdctlMigrate(), "etcdctlMigrate");
        assertEquals(from35 ? List.of("etcd", "etcdctl", "etcdutl") : List.of("etcd", "etcdctl"), r.toolNames());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bundledReleases")
    void downgradeMethodMatchesTheLine(Release r) {
        MinorLine to = r.line().downgrade().toLine();
        boolean toV3 = BUNDLED.line(to).map(o -> o.line().v3Api()).orElse(false);
        DowngradeMethod expected = atLeast(r, L3_6)
                ? DowngradeMethod.DOWNGRADE_API
                : r.line().v3Api() && toV3 ? DowngradeMethod.SNAPSHOT_RESTORE : DowngradeMethod.NONE;
        assertEquals(expected, r.line().downgrade().method());
    }

    @Test
    void patchFloorsAreTheKnownOnes() {
        Map<String, String> floors = BUNDLED.releases().stream()
                .filter(r -> !r.line().upgrade().previousMinimumPatch().isEmpty())
                .collect(java.util.stream.Collectors.toMap(
                        r -> r.minorLine().toString(), r -> r.line().upgrade().previousMinimumPatch()));
        assertEquals(Map.of("3.6", "3.5.32", "3.7", "3.6.11"), floors);
        assertEquals(
                EtcdVersion.parse("3.5.32"),
                BUNDLED.line(L3_6).orElseThrow().line().upgrade().minimumPatch().orElseThrow());
        assertTrue(
                BUNDLED.line(L3_5).orElseThrow().line().upgrade().minimumPatch().isEmpty());
    }

    @Test
    void only37NeedsThePreviousLineToSnapshotFirst() {
        assertEquals(
                List.of("3.7"),
                BUNDLED.releases().stream()
                        .filter(r -> r.line().upgrade().previousSnapshotFirst())
                        .map(r -> r.minorLine().toString())
                        .toList());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bundledReleases")
    void floorsAreMetByTheBundledPreviousLine(Release r) {
        r.line().upgrade().minimumPatch().ifPresent(floor -> {
            Release previous =
                    BUNDLED.line(floor.line()).orElseThrow(() -> new AssertionError("no bundled " + floor.line()));
            assertFalse(previous.etcdVersion().isOlderThan(floor), previous.version() + " is below the floor " + floor);
        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bundledReleases")
    void upstreamTarballsNameTheVersion(Release r) {
        assertEquals("v" + r.version(), r.upstream().tag());
        // arm64 tarballs are listed from 3.4 on; the catalog lists none it has not confirmed for older releases
        List<String> platforms = atLeast(r, L3_4) ? List.of("linux/amd64", "linux/arm64") : List.of("linux/amd64");
        for (String platform : platforms) {
            Tarball t = r.upstream()
                    .tarballFor(platform)
                    .orElseThrow(() -> new AssertionError("no " + platform + " tarball"));
            assertTrue(t.url().contains("v" + r.version()), t.url());
            assertTrue(
                    t.url()
                            .endsWith("/v" + r.version() + "/etcd-v" + r.version() + "-" + platform.replace('/', '-')
                                    + ".tar.gz"),
                    t.url());
            assertTrue(t.url().startsWith("https://github.com/etcd-io/etcd/releases/download/"), t.url());
        }
        for (Tarball t : r.upstream().tarballs()) {
            assertTrue(t.url().contains("v" + r.version()), t.url());
        }
        assertTrue(r.upstream().tarballFor("darwin/amd64").isEmpty());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("bundledReleases")
    void everyReleaseHasAnOfflineSourceForEachOfItsTools(Release r) {
        assertFalse(r.sources().isEmpty(), "no offline source");
        for (Source s : r.sources()) {
            switch (s) {
                case GoModules g -> {
                    assertEquals("v" + r.version(), g.moduleVersion());
                    assertEquals(Set.copyOf(r.toolNames()), g.mains().keySet());
                    assertTrue(g.modules().containsAll(g.mains().values()), "each main's module is listed");
                }
                case GoLegacy g -> {
                    assertEquals("v" + r.version() + "+incompatible", g.moduleVersion());
                    assertEquals(Set.copyOf(r.toolNames()), g.mains().keySet());
                    assertTrue(g.toolchain().startsWith("go1."), g.toolchain());
                    if (g.layout().equals("module")) {
                        // the pinned go.mod and go.sum ship in the jar next to the catalog
                        for (String name : List.of("go.mod", "go.sum")) {
                            String resource = "/dev/etcdmigrate/catalog/legacy/" + r.version() + "/" + name;
                            assertNotNull(Catalog.class.getResource(resource), resource);
                        }
                    }
                }
                case DebianPackages d -> {
                    assertTrue(d.packages().keySet().containsAll(r.toolNames()), "packages " + d.packages());
                    assertTrue(d.paths().keySet().containsAll(r.toolNames()), "paths " + d.paths());
                }
            }
        }
    }

    @Test
    void bundledCatalogEqualsTheSourceFile() {
        // surefire runs in runner/; the jar's copy must be versions/catalog.yaml as it is now
        Path source = Path.of("..", "versions", "catalog.yaml").toAbsolutePath();
        assertTrue(Files.isRegularFile(source), source.toString());
        assertEquals(BUNDLED.releases(), Catalog.load(source).releases());
    }

    // ---- restrictTo ----------------------------------------------------------------------------

    @Test
    void restrictToKeepsOnlyTheListedVersions() {
        int before = BUNDLED.releases().size();
        Catalog c = BUNDLED.restrictTo(Set.of(EtcdVersion.parse("3.7.3"), EtcdVersion.parse("3.5.35")));
        assertEquals("3.5.35, 3.7.3", c.versionList());
        assertTrue(c.line(MinorLine.parse("3.6")).isEmpty());
        assertEquals(before, BUNDLED.releases().size(), "the original is unchanged");
    }

    @Test
    void restrictToRejectsUnknownVersions() {
        IllegalArgumentException e = assertThrows(
                IllegalArgumentException.class,
                () -> BUNDLED.restrictTo(
                        Set.of(EtcdVersion.parse("3.5.35"), EtcdVersion.parse("3.6.15"), EtcdVersion.parse("3.3.26"))));
        assertTrue(e.getMessage().contains("[3.3.26, 3.6.15]"), e.getMessage());
        assertTrue(e.getMessage().contains("(it has " + BUNDLED.versionList() + ")"), e.getMessage());
    }

    // ---- parsing small catalogs ----------------------------------------------------------------

    static final String VALID = """
            releases:
              - version: 3.6.16
                upstream:
                  tag: v3.6.16
                  tarballs:
                    - platform: linux/amd64
                      url: https://example.invalid/etcd-v3.6.16-linux-amd64.tar.gz
                      sha256: ""
                sources:
                  - kind: go-modules
                    toolchain: go1.26.8
                    moduleVersion: v3.6.16
                    modules: [go.etcd.io/etcd/server/v3]
                    mains:
                      etcd: go.etcd.io/etcd/server/v3
                line:
                  v3Api: true
                  v2Api: never
                  v2EnableFlags: []
                  v2ResidueRefused: true
                  jsonGateway: /v3
                  logFlags: ["--log-outputs=stderr"]
                  etcdctlEnv: {}
                  envDuplicateRefused: true
                  downgradeCheckFlag: "--downgrade-check-time"
                  statusReportsDowngrade: true
                  tools:
                    etcdutl: true
                    etcdctlMigrate: false
                    checkV2Store: true
                    snapshotRestore: etcdutl
                  upgrade:
                    from: "3.5"
                    previousMinimumPatch: 3.5.32
                    previousSnapshotFirst: false
                  downgrade:
                    to: "3.5"
                    method: downgrade-api
            """;

    static Catalog parse(String yaml) throws IOException {
        return Catalog.parse(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8)));
    }

    /** The message of whatever parsing throws, with its causes, for assertions on what it names. */
    static String failure(String yaml) {
        Exception e = assertThrows(Exception.class, () -> parse(yaml));
        StringBuilder b = new StringBuilder();
        for (Throwable t = e; t != null; t = t.getCause())
            b.append(t.getMessage()).append(" | ");
        return b.toString();
    }

    static void assertFailsNaming(String yaml, String expected) {
        assertNotEquals(VALID, yaml, "test setup: replacement did not apply");
        String message = failure(yaml);
        assertTrue(message.contains(expected), () -> "expected '" + expected + "' in: " + message);
    }

    @Test
    void smallValidCatalogParses() throws IOException {
        Catalog c = parse(VALID);
        Release r = c.releases().getFirst();
        assertEquals("3.6.16", r.version());
        assertEquals(V2Api.NEVER, r.line().v2Api());
        assertEquals(DowngradeMethod.DOWNGRADE_API, r.line().downgrade().method());
        assertEquals(RestoreTool.ETCDUTL, r.line().tools().snapshotRestore());
        GoModules g = assertInstanceOf(GoModules.class, r.sources().getFirst());
        assertEquals(Map.of("etcd", "go.etcd.io/etcd/server/v3"), g.mains());
        assertFalse(r.upstream().tarballs().getFirst().verified());
    }

    static Stream<Arguments> missingFields() {
        return Stream.of(
                Arguments.of("version: 3.6.16\n", "version"),
                Arguments.of("      tag: v3.6.16\n", "upstream.tag"),
                Arguments.of("          url: https://example.invalid/etcd-v3.6.16-linux-amd64.tar.gz\n", "tarball.url"),
                Arguments.of("        moduleVersion: v3.6.16\n", "go-modules.moduleVersion"),
                Arguments.of("        toolchain: go1.26.8\n", "go-modules.toolchain"),
                Arguments.of("      v3Api: true\n", "line.v3Api"),
                Arguments.of("      v2Api: never\n", "line.v2Api"),
                Arguments.of("      v2EnableFlags: []\n", "line.v2EnableFlags"),
                Arguments.of("      v2ResidueRefused: true\n", "line.v2ResidueRefused"),
                Arguments.of("      jsonGateway: /v3\n", "line.jsonGateway"),
                Arguments.of("      logFlags: [\"--log-outputs=stderr\"]\n", "line.logFlags"),
                Arguments.of("      etcdctlEnv: {}\n", "line.etcdctlEnv"),
                Arguments.of("      envDuplicateRefused: true\n", "line.envDuplicateRefused"),
                Arguments.of("      downgradeCheckFlag: \"--downgrade-check-time\"\n", "line.downgradeCheckFlag"),
                Arguments.of("      statusReportsDowngrade: true\n", "line.statusReportsDowngrade"),
                Arguments.of("        etcdutl: true\n", "tools.etcdutl"),
                Arguments.of("        etcdctlMigrate: false\n", "tools.etcdctlMigrate"),
                Arguments.of("        checkV2Store: true\n", "tools.checkV2Store"),
                Arguments.of("        snapshotRestore: etcdutl\n", "tools.snapshotRestore"),
                Arguments.of("        from: \"3.5\"\n", "upgrade.from"),
                Arguments.of("        previousSnapshotFirst: false\n", "upgrade.previousSnapshotFirst"),
                Arguments.of("        to: \"3.5\"\n", "downgrade.to"),
                Arguments.of("        method: downgrade-api\n", "downgrade.method"));
    }

    @ParameterizedTest(name = "missing {1}")
    @MethodSource("missingFields")
    void aMissingFieldIsRejectedByName(String line, String field) {
        assertTrue(VALID.contains(line), "test setup: line not in VALID: " + line);
        String yaml = VALID.replace(line, "");
        assertTrue(failure(yaml).contains("'" + field + "'"), () -> failure(yaml));
    }

    @Test
    void aMissingSectionIsRejectedByName() {
        String noSources = VALID.replaceAll("(?s)    sources:.*?    line:", "    line:");
        assertTrue(failure(noSources).contains("'sources'"), () -> failure(noSources));
        String noTools = VALID.replaceAll("(?s)      tools:.*?      upgrade:", "      upgrade:");
        assertTrue(failure(noTools).contains("'line.tools'"), () -> failure(noTools));
        String noUpgrade = VALID.replaceAll("(?s)      upgrade:.*?      downgrade:", "      downgrade:");
        assertTrue(failure(noUpgrade).contains("'line.upgrade'"), () -> failure(noUpgrade));
        String noReleases = "other: 1\n";
        assertTrue(failure(noReleases).contains("releases"), () -> failure(noReleases));
        String emptyDoc = "{}\n";
        assertTrue(failure(emptyDoc).contains("releases"), () -> failure(emptyDoc));
    }

    static Stream<Arguments> unknownFields() {
        return Stream.of(
                Arguments.of("  - version: 3.6.16\n", "  - version: 3.6.16\n    codename: bravo\n", "codename"),
                Arguments.of("      v2Api: never\n", "      v2Api: never\n      v2ApiMaybe: yes\n", "v2ApiMaybe"),
                Arguments.of("        etcdutl: true\n", "        etcdutl: true\n        etcdutil: true\n", "etcdutil"),
                Arguments.of("          sha256: \"\"\n", "          sha256: \"\"\n          md5: abc\n", "md5"),
                Arguments.of(
                        "        method: downgrade-api\n",
                        "        method: downgrade-api\n        methods: none\n",
                        "methods"),
                Arguments.of("releases:\n", "releasez: []\nreleases:\n", "releasez"));
    }

    @ParameterizedTest(name = "unknown {2}")
    @MethodSource("unknownFields")
    void anUnknownFieldIsRejectedByName(String line, String replacement, String field) {
        assertTrue(VALID.contains(line), "test setup: line not in VALID: " + line);
        String yaml = VALID.replace(line, replacement);
        assertTrue(failure(yaml).contains("\"" + field + "\""), () -> failure(yaml));
    }

    @Test
    void badEnumValuesAndKindsAreRejected() {
        assertFailsNaming(VALID.replace("v2Api: never", "v2Api: sometimes"), "sometimes");
        assertFailsNaming(VALID.replace("method: downgrade-api", "method: rollback"), "rollback");
        assertFailsNaming(VALID.replace("kind: go-modules", "kind: homebrew"), "homebrew");
        assertFailsNaming(VALID.replace("snapshotRestore: etcdutl", "snapshotRestore: etcdadm"), "etcdadm");
    }

    @Test
    void aMissingTarballPlatformIsRejectedByName() {
        String yaml = VALID.replace("- platform: linux/amd64\n          url:", "- url:");
        assertNotEquals(VALID, yaml);
        assertTrue(failure(yaml).contains("'tarball.platform'"), () -> failure(yaml));
    }

    @Test
    void semanticChecksOfAnEntry() {
        assertFailsNaming(VALID.replace("version: 3.6.16", "version: v3.6.16"), "v3.6.16");
        assertFailsNaming(
                VALID.replace("from: \"3.5\"", "from: \"3.6\"")
                        .replace("previousMinimumPatch: 3.5.32", "previousMinimumPatch: \"\""),
                "older lines");
        assertFailsNaming(VALID.replace("to: \"3.5\"", "to: \"3.7\""), "older lines");
        assertFailsNaming(VALID.replace("previousMinimumPatch: 3.5.32", "previousMinimumPatch: 3.4.32"), "3.5.x");
        assertFailsNaming(VALID.replace("etcdutl: true", "etcdutl: false"), "checkV2Store needs etcdutl");
        assertFailsNaming(VALID.replace("v2Api: never", "v2Api: flag"), "v2EnableFlags");
        assertFailsNaming(VALID.replace("sha256: \"\"", "sha256: ABC"), "sha256");
        assertFailsNaming(VALID.replace("v3Api: true", "v3Api: false"), "jsonGateway");
        assertFailsNaming(
                VALID.replace("v3Api: true", "v3Api: false").replace("jsonGateway: /v3", "jsonGateway: \"\""),
                "v2 or the v3 API");
        assertFailsNaming(VALID.replace("jsonGateway: /v3", "jsonGateway: \"\""), "jsonGateway");
        assertFailsNaming(
                VALID.replace("downgradeCheckFlag: \"--downgrade-check-time\"", "downgradeCheckFlag: \"\""),
                "downgradeCheckFlag");
    }

    @Test
    void twoReleasesOfOneLineAreRejected() {
        String second = VALID.substring(VALID.indexOf("  - version")).replace("3.6.16", "3.6.17");
        String yaml = VALID + second;
        String message = failure(yaml);
        assertTrue(message.contains("3.6.16 and 3.6.17"), message);
    }

    @Test
    void loadNamesTheFileItCannotRead(@TempDir Path dir) {
        Path missing = dir.resolve("nope.yaml");
        Exception e = assertThrows(java.io.UncheckedIOException.class, () -> Catalog.load(missing));
        assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
    }
}
