package dev.etcdmigrate.restore;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The identity a restore gives the cluster, as etcd computes it: the cluster token derived from the snapshot's hash,
 * each member's ID from its peer URLs and that token, and the cluster ID from the member IDs. A restore tool writes
 * members with no start time in their ID, so the IDs of a cluster restored from one snapshot follow from its peer
 * URLs alone; {@code status} checks a member list against them to tell which cluster is that snapshot's restore.
 */
public final class RestoreIdentity {

    /** The restored cluster's token: derived from the snapshot, so every member restored from it agrees. */
    static final String TOKEN_PREFIX = "etcd-restore-";

    private RestoreIdentity() {}

    /** The {@code --initial-cluster-token} a restore of the snapshot with this SHA-256 (hex) uses. */
    public static String token(String sha256) {
        return TOKEN_PREFIX + sha256.substring(0, 16);
    }

    /**
     * etcd's member ID of a member with these peer URLs in a cluster bootstrapped (or restored) with {@code token}:
     * the first 8 bytes, big-endian, of the SHA-1 of the sorted peer URLs joined and the token.
     */
    public static long memberId(Collection<String> peerUrls, String token) {
        List<String> sorted = new ArrayList<>(peerUrls);
        sorted.sort(null);
        return first8(sha1((String.join("", sorted) + token).getBytes(StandardCharsets.UTF_8)));
    }

    /** etcd's cluster ID of these members: the first 8 bytes of the SHA-1 of their IDs, sorted, 8 bytes each. */
    public static long clusterId(Collection<Long> memberIds) {
        List<Long> sorted = new ArrayList<>(memberIds);
        sorted.sort(Long::compareUnsigned);
        ByteBuffer ids = ByteBuffer.allocate(8 * sorted.size());
        sorted.forEach(ids::putLong);
        return first8(sha1(ids.array()));
    }

    /** An ID as etcd's logs and etcdctl's tables print it. */
    public static String hex(long id) {
        return Long.toHexString(id);
    }

    private static long first8(byte[] hash) {
        return ByteBuffer.wrap(hash, 0, 8).getLong();
    }

    private static byte[] sha1(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-1").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("no SHA-1 in this Java runtime", e);
        }
    }
}
