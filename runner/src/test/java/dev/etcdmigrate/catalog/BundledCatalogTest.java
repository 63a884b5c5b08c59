package dev.etcdmigrate.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import org.junit.jupiter.api.Test;

/** The catalog the runner starts with (constructor calls) is the one versions/catalog.yaml describes. */
class BundledCatalogTest {

    @Test
    void equalsTheYamlCatalog() throws Exception {
        assertEquals(
                CatalogSourceGenerator.yamlCatalog().releases(),
                Catalog.bundled().releases(),
                "BundledCatalog.java is stale: regenerate it (see CatalogSourceGenerator)");
    }

    @Test
    void theCommittedSourceIsWhatTheGeneratorPrints() throws Exception {
        // run from runner/ (surefire's working directory)
        assertEquals(
                CatalogSourceGenerator.generate(CatalogSourceGenerator.yamlCatalog()),
                Files.readString(CatalogSourceGenerator.SOURCE),
                "BundledCatalog.java is stale: regenerate it (see CatalogSourceGenerator)");
    }
}
