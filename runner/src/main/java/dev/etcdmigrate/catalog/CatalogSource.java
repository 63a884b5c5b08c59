package dev.etcdmigrate.catalog;

import dev.etcdmigrate.error.UsageException;

/** Where a run's catalog comes from, read only when a plan needs a catalog fact; a bad catalog is a usage error. */
@FunctionalInterface
public interface CatalogSource {
    Catalog get() throws UsageException;
}
