package dev.etcdmigrate.v2;

import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * A digest of a set of key/value pairs that does not depend on their order (the sum of each pair's
 * SHA-256, modulo 2^256, plus the count), so the v2 store (walked as a tree) and the v3 keyspace
 * (ranged in byte order) can be compared while streaming, without holding either in memory.
 */
public final class KeySetDigest {

    private static final BigInteger MODULUS = BigInteger.ONE.shiftLeft(256);

    private final MessageDigest sha;
    private BigInteger sum = BigInteger.ZERO;
    private long count;

    public KeySetDigest() {
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    public void add(String key, byte[] value) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        sha.update(ByteBuffer.allocate(8).putInt(k.length).putInt(value.length).array());
        sha.update(k);
        sha.update(value);
        sum = sum.add(new BigInteger(1, sha.digest())).mod(MODULUS);
        count++;
    }

    public long count() {
        return count;
    }

    /** count:hex, for logs and comparison. */
    public String value() {
        return count + ":" + sum.toString(16);
    }
}
