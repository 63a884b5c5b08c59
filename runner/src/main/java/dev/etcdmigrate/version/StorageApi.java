package dev.etcdmigrate.version;

import java.util.Locale;

/** Which etcd storage API holds the data: the v2 store (etcd2) or the v3 MVCC store (etcd3). */
public enum StorageApi {
    ETCD2,
    ETCD3;

    public static StorageApi parse(String text) {
        return switch (text == null ? "" : text) {
            case "etcd2" -> ETCD2;
            case "etcd3" -> ETCD3;
            default -> throw new IllegalArgumentException("not a storage API (etcd2 or etcd3): '" + text + "'");
        };
    }

    @Override
    public String toString() {
        return name().toLowerCase(Locale.ROOT);
    }
}
