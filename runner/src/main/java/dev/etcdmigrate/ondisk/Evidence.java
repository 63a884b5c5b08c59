package dev.etcdmigrate.ondisk;

import dev.etcdmigrate.version.MinorLine;
import java.util.Optional;

/** One fact read from the data, where it was read, and the line it proves wrote the data (if any). */
public record Evidence(String where, String found, Optional<MinorLine> line) {
    @Override
    public String toString() {
        return where + ": " + found + line.map(l -> " (etcd " + l + "+)").orElse("");
    }
}
