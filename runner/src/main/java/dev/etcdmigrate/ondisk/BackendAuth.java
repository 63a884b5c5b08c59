package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Whether etcd's own auth is enabled, as this member's v3 backend records it. etcd applies auth changes through
 * raft and stores the flag in every member's db (bucket {@code auth}, key {@code authEnabled}: one byte, 1
 * enabled, 0 disabled; the same name and values from 3.0's auth/store.go to 3.6's storage/schema), so one
 * stopped member's data answers for the whole cluster, up to the entries its WAL holds beyond the db.
 */
public final class BackendAuth {

    static final String BUCKET = "auth";
    static final String KEY = "authEnabled";

    private BackendAuth() {}

    /**
     * Whether the db records auth as enabled. False when the db, the bucket or the key is missing (etcd before
     * any auth command, a data dir without a v3 backend). A value other than one byte 0 or 1 is damage
     * (etcd itself would read it as disabled; nothing writes it), as is a damaged page on the way to it.
     */
    public static boolean enabled(Path db) throws IOException {
        if (!Files.isRegularFile(db)) return false;
        Optional<byte[]> value;
        try (BboltFile file = BboltFile.open(db)) {
            value = file.value(BUCKET, KEY);
        }
        if (value.isEmpty()) return false;
        byte[] v = value.get();
        if (v.length != 1 || (v[0] != 0 && v[0] != 1))
            throw new DamagedFileException(new Damage(
                    db,
                    "bucket " + BUCKET + ", key " + KEY,
                    "one byte, 0 or 1, as etcd writes it; found " + v.length + " byte(s)"));
        return v[0] == 1;
    }
}
