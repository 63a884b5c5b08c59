package dev.etcdmigrate;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.error.UsageException;
import java.io.UncheckedIOException;

/** The catalog migrate, plan and inspect plan with: --catalog's or the bundled one, held to BUNDLED_VERSIONS. */
final class RunCatalog {

    private RunCatalog() {}

    /** A catalog that cannot be read or does not hold together is a usage error (exit 2). */
    static Catalog of(RunConfig options) throws UsageException {
        try {
            Catalog catalog = options.catalogFile().map(Catalog::load).orElseGet(Catalog::bundled);
            return options.bundledVersions().map(catalog::restrictTo).orElse(catalog);
        } catch (IllegalArgumentException | UncheckedIOException e) {
            throw new UsageException(e.getMessage());
        }
    }
}
