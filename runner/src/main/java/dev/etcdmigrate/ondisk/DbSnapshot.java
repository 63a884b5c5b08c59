package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * A v3 snapshot file read offline before it is restored: its SHA-256, etcd's integrity hash where the file carries
 * one, and what its bbolt db records (the versions, the newest revision, the members), every page checked.
 *
 * <p>{@code etcdctl snapshot save} appends the SHA-256 of the db to the file; etcd's restore tool tells such a
 * file from a bare db (a member's {@code member/snap/db}) by its size: a bbolt file is whole pages (multiples of 512
 * bytes), so a remainder of exactly 32 bytes is the appended hash.
 *
 * @param sha256 the whole file's SHA-256, lower-case hex (what {@code sha256sum} prints)
 * @param hashAppended whether the file ends in etcd's integrity hash (then it matched the rest)
 * @param storageVersion the db's storage version (3.6+)
 * @param clusterVersion the db's cluster version
 * @param revision the newest main revision in the key bucket (0: no key was ever written)
 * @param members the members the db names, as name=peerURL
 */
public record DbSnapshot(
        long bytes,
        String sha256,
        boolean hashAppended,
        Optional<String> storageVersion,
        Optional<String> clusterVersion,
        long revision,
        List<String> members) {

    private static final int HASH = 32;

    /** The version that tells the line that wrote it: the storage version where recorded, else the cluster version. */
    public Optional<String> writtenBy() {
        return storageVersion.or(() -> clusterVersion);
    }

    /**
     * Reads and checks the file: etcd's integrity hash where appended (a mismatch is damage), every bbolt page; the
     * caller compares {@link #sha256()} with the one it was given.
     */
    public static DbSnapshot read(Path file) throws IOException {
        long size = Files.size(file);
        boolean appended = size % 512 == HASH;
        MessageDigest whole = digest();
        MessageDigest db = digest();
        byte[] tail = new byte[HASH];
        long dbBytes = appended ? size - HASH : size;
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buffer = new byte[1 << 16];
            long read = 0;
            for (int n; (n = in.read(buffer)) > 0; ) {
                whole.update(buffer, 0, n);
                int intoDb = (int) Math.max(0, Math.min(n, dbBytes - read));
                db.update(buffer, 0, intoDb);
                for (int i = intoDb; i < n; i++) tail[(int) (read + i - dbBytes)] = buffer[i];
                read += n;
            }
        }
        if (appended && !MessageDigest.isEqual(db.digest(), tail)) {
            throw new DamagedFileException(new Damage(
                    file,
                    "its last 32 bytes",
                    "etcd's integrity hash, the SHA-256 of the " + dbBytes
                            + " bytes before it (the file was cut short or changed after etcdctl saved it)"));
        }
        try (BboltFile bbolt = BboltFile.open(file)) {
            bbolt.checkPages();
            Optional<String> storage = bbolt.value("meta", "storageVersion").map(EtcdJson::utf8);
            Optional<String> cluster = bbolt.value("cluster", "clusterVersion").map(EtcdJson::utf8);
            long[] newest = {0};
            bbolt.walk("key", (k, v) -> {
                if (k.remaining() >= 8) {
                    long main = 0; // mvcc's key: the main revision, 8 bytes big-endian, then '_' and the sub revision
                    for (int i = 0; i < 8; i++) main = (main << 8) | (k.get(k.position() + i) & 0xFF);
                    newest[0] = Math.max(newest[0], main);
                }
                return true;
            });
            List<String> members = new ArrayList<>();
            List<String> removed = new ArrayList<>();
            for (BboltFile.Entry e : bbolt.entries("members_removed", 1000)) removed.add(EtcdJson.utf8(e.key()));
            for (BboltFile.Entry e : bbolt.entries("members", 1000)) {
                String id = EtcdJson.utf8(e.key());
                if (removed.contains(id)) continue;
                EtcdJson.Node m = EtcdJson.parse(file, "bucket members, key " + id, e.value());
                List<String> peers = new ArrayList<>();
                m.path("peerURLs").forEach(u -> peers.add(u.asText()));
                members.add(m.path("name").asText("") + "=" + String.join(",", peers));
            }
            return new DbSnapshot(
                    size,
                    HexFormat.of().formatHex(whole.digest()),
                    appended,
                    storage,
                    cluster,
                    newest[0],
                    List.copyOf(members));
        }
    }

    private static MessageDigest digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
