package dev.etcdmigrate.ondisk;

import java.time.Instant;
import java.util.Optional;

/** A key (not a directory) of an etcd v2 store, as its snapshot holds it; hidden keys included. */
public record V2Key(String key, String value, long createdIndex, long modifiedIndex, Optional<Instant> expireTime) {

    /**
     * The key the runner's write probe puts and deletes, through the v2 or the v3 API: never data. Top-level
     * (a v2 probe leaves no directory behind) and outside any Kubernetes prefix.
     */
    public static final String PROBE = "/etcd-migrate-probe";

    /** A key with a path segment starting with '_' is hidden from v2 listings (its own or a parent's). */
    public boolean hidden() {
        return isHidden(key);
    }

    public static boolean isHidden(String key) {
        for (String segment : key.split("/")) {
            if (segment.startsWith("_")) return true;
        }
        return false;
    }
}
