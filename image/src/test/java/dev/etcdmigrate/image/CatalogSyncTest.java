package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The image module's etcd.bundled.versions / etcd.newest.version properties follow versions/catalog.yaml. */
class CatalogSyncTest {

    @Test
    void bundledVersionsAreTheCatalogReleases() {
        List<String> catalog =
                Catalog.bundled().releases().stream().map(Release::version).toList();
        List<String> property =
                Arrays.asList(System.getProperty("etcd.bundled.versions").split(","));
        assertEquals(
                catalog,
                property,
                "image/pom.xml <etcd.bundled.versions> must list versions/catalog.yaml's releases in order");
    }

    @Test
    void newestVersionIsTheCatalogsNewest() {
        Release newest = Catalog.bundled().releases().stream()
                .max((a, b) -> a.etcdVersion().compareTo(b.etcdVersion()))
                .orElseThrow();
        assertEquals(
                newest.version(),
                System.getProperty("etcd.newest.version"),
                "image/pom.xml <etcd.newest.version> (the image tag's version and the etcd/etcdctl/etcdutl aliases) must be the catalog's newest");
    }

    /** The default flavour bundles the catalog's newest releases from 3.4 on, oldest first, and nothing else. */
    @Test
    void defaultFlavourIsTheSupportedLines() {
        List<String> all =
                Arrays.asList(System.getProperty("etcd.bundled.versions").split(","));
        List<String> lean =
                Arrays.asList(System.getProperty("etcd.default.versions").split(","));
        assertEquals(
                all.subList(all.indexOf("3.4.23"), all.size()),
                lean,
                "image/pom.xml <etcd.default.versions> must be the catalog's releases from 3.4 on");
    }

    /** Each Jib execution's layer list (one etcd/<v> path per release) matches its flavour's versions. */
    @Test
    void jibLayersMatchTheFlavours() throws Exception {
        String pom = Files.readString(Path.of(System.getProperty("image.pom")));
        assertEquals(
                Arrays.asList(System.getProperty("etcd.default.versions").split(",")), etcdLayers(pom, "image-tar"));
        assertEquals(
                Arrays.asList(System.getProperty("etcd.bundled.versions").split(",")),
                etcdLayers(pom, "image-tar-full"));
        // -Parm64: the default flavour for linux/arm64
        assertEquals(
                Arrays.asList(System.getProperty("etcd.default.versions").split(",")),
                etcdLayers(pom, "image-tar-arm64"));
    }

    /**
     * Every binary the image bundles is pinned (prepare-image.sh refuses a bin dir without the pin): per
     * platform and release a pins file with the binary's SHA-256, its source, and that source's hash.
     */
    @Test
    void everyBundledBinaryIsPinnedWithItsSource() throws Exception {
        Path pins = Path.of(System.getProperty("image.pom"))
                .toAbsolutePath()
                .getParent()
                .resolveSibling("versions")
                .resolve("pins");
        int checked = 0;
        for (String platform : List.of("linux-amd64", "linux-arm64")) {
            String versions = System.getProperty(
                    platform.equals("linux-amd64") ? "etcd.bundled.versions" : "etcd.default.versions");
            for (String v : versions.split(",")) {
                Path file = pins.resolve(v).resolve(platform + ".pins");
                List<String> lines = Files.readAllLines(file);
                Release release = Catalog.bundled().releases().stream()
                        .filter(r -> r.version().equals(v))
                        .findFirst()
                        .orElseThrow();
                for (String tool : release.toolNames()) {
                    assertEquals(
                            1,
                            lines.stream()
                                    .filter(l -> l.matches("bin " + tool + " sha256:[0-9a-f]{64}"))
                                    .count(),
                            file + ": bin " + tool);
                    String from = lines.stream()
                            .filter(l -> l.startsWith("from " + tool + " "))
                            .findFirst()
                            .orElseThrow(() -> new AssertionError(file + ": from " + tool))
                            .split(" ")[2];
                    String kind = from.substring(0, from.indexOf(':'));
                    String input = kind + " " + from.substring(kind.length() + 1) + " ";
                    assertEquals(
                            1,
                            lines.stream().filter(l -> l.startsWith(input)).count(),
                            file + ": the source's hash, " + input);
                    checked++;
                }
            }
        }
        assertEquals(23 + 11, checked, "23 amd64 and 11 arm64 binaries");
    }

    private static List<String> etcdLayers(String pom, String executionId) {
        int start = pom.indexOf("<id>" + executionId + "</id>");
        int end = pom.indexOf("</execution>", start);
        Matcher m = Pattern.compile("/image(?:-arm64)?/etcd/([0-9.]+)</from>").matcher(pom.substring(start, end));
        List<String> versions = new ArrayList<>();
        while (m.find()) versions.add(m.group(1));
        return versions;
    }
}
