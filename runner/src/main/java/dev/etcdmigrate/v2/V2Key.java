package dev.etcdmigrate.v2;

import java.time.Instant;
import java.util.Optional;

/** A key (not a directory) of an etcd v2 store, as its snapshot holds it; hidden keys included. */
public record V2Key(String key, String value, long createdIndex, long modifiedIndex, Optional<Instant> expireTime) {

    /** A key whose name (last path segment) starts with '_' is hidden from v2 listings. */
    public boolean hidden() {
        for (String segment : key.split("/")) {
            if (segment.startsWith("_")) return true;
        }
        return false;
    }
}
