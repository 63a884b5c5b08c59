package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The image module's etcd.bundled.versions / etcd.newest.version properties follow versions/catalog.yaml. */
class CatalogSyncTest {

    @Test
    void bundledVersionsAreTheCatalogReleases() {
        List<String> catalog = Catalog.bundled().releases().stream().map(Release::version).toList();
        List<String> property = Arrays.asList(System.getProperty("etcd.bundled.versions").split(","));
        assertEquals(catalog, property, "image/pom.xml <etcd.bundled.versions> must list versions/catalog.yaml's releases in order");
    }

    @Test
    void newestVersionIsTheCatalogsNewest() {
        Release newest = Catalog.bundled().releases().stream().max((a, b) -> a.etcdVersion().compareTo(b.etcdVersion())).orElseThrow();
        assertEquals(newest.version(), System.getProperty("etcd.newest.version"),
                "image/pom.xml <etcd.newest.version> (the image tag's version and the etcd/etcdctl/etcdutl aliases) must be the catalog's newest");
    }
}
