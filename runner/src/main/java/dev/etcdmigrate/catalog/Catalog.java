package dev.etcdmigrate.catalog;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/** The bundled etcd releases, oldest first. Immutable; one release per minor line. */
public final class Catalog {

    static final String RESOURCE = "/dev/etcdmigrate/catalog/catalog.yaml";

    private final List<Release> releases;

    public Catalog(Collection<Release> releases) {
        List<Release> sorted = new ArrayList<>(releases);
        // a lambda of this class, which the AOT cache holds linked; Comparator.comparing's own is spun at first use
        sorted.sort((a, b) -> a.etcdVersion().compareTo(b.etcdVersion()));
        for (int i = 1; i < sorted.size(); i++) {
            if (sorted.get(i).minorLine().equals(sorted.get(i - 1).minorLine())) {
                throw new IllegalArgumentException("catalog bundles two releases of line "
                        + sorted.get(i).minorLine() + ": " + sorted.get(i - 1).version() + " and "
                        + sorted.get(i).version());
            }
        }
        this.releases = List.copyOf(sorted);
    }

    /**
     * The catalog packed into the runner: versions/catalog.yaml as constructor calls (BundledCatalog,
     * generated; BundledCatalogTest keeps it equal to the YAML), so a start parses no YAML.
     */
    public static Catalog bundled() {
        return new Catalog(BundledCatalog.releases());
    }

    public static Catalog load(Path file) {
        try (InputStream in = Files.newInputStream(file)) {
            return parse(in);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read catalog " + file + ": " + e.getMessage(), e);
        }
    }

    static Catalog parse(InputStream in) throws IOException {
        ObjectMapper yaml = new ObjectMapper(new YAMLFactory())
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
        return new Catalog(yaml.readValue(in, CatalogFile.class).releases());
    }

    /** The document's top level. */
    record CatalogFile(List<Release> releases) {
        CatalogFile {
            releases = List.copyOf(java.util.Objects.requireNonNull(releases, "catalog has no 'releases' list"));
        }
    }

    /** Keeps only the listed versions (BUNDLED_VERSIONS); each must be in the catalog. */
    public Catalog restrictTo(Set<EtcdVersion> versions) {
        Set<EtcdVersion> known = releases.stream().map(Release::etcdVersion).collect(Collectors.toSet());
        List<EtcdVersion> unknown =
                versions.stream().filter(v -> !known.contains(v)).sorted().toList();
        if (!unknown.isEmpty()) {
            throw new IllegalArgumentException(
                    "bundled versions " + unknown + " are not in the catalog (it has " + versionList() + ")");
        }
        return new Catalog(releases.stream()
                .filter(r -> versions.contains(r.etcdVersion()))
                .toList());
    }

    public List<Release> releases() {
        return releases;
    }

    public Optional<Release> release(EtcdVersion version) {
        return releases.stream().filter(r -> r.etcdVersion().equals(version)).findFirst();
    }

    /**
     * The oldest bundled line that writes this record into its data: finding the record means that line or a
     * newer one wrote the data. Empty when no bundled line writes it.
     */
    public Optional<MinorLine> firstLineRecording(Release.DataRecord record) {
        return releases.stream()
                .filter(r -> r.line().records().contains(record))
                .map(Release::minorLine)
                .findFirst();
    }

    public Optional<Release> line(MinorLine line) {
        return releases.stream().filter(r -> r.minorLine().equals(line)).findFirst();
    }

    public String versionList() {
        return releases.stream().map(Release::version).collect(Collectors.joining(", "));
    }
}
