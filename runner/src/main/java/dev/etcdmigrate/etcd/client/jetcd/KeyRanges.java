package dev.etcdmigrate.etcd.client.jetcd;

import java.math.BigInteger;
import java.util.Arrays;

/**
 * Key arithmetic for paging by key range: a key read as a number (its first {@link #WIDTH} bytes,
 * zero-padded, big-endian), which orders keys as etcd does up to ties between keys that share those
 * bytes. Only the size of a range is estimated with it; where ranges start and end stays exact.
 */
final class KeyRanges {

    /** Longer than the common prefixes of Kubernetes keys, so the numbers tell keys apart. */
    static final int WIDTH = 64;

    private static final BigInteger LIMIT = BigInteger.ONE.shiftLeft(8 * WIDTH);

    private KeyRanges() {}

    static BigInteger value(byte[] key) {
        return new BigInteger(1, Arrays.copyOf(key, WIDTH));
    }

    /** The span for the next range: 1.5 times the distance the last full page covered (at least 1). */
    static BigInteger spanForNextPage(byte[] first, byte[] last) {
        BigInteger covered = value(last).subtract(value(first)).max(BigInteger.ONE);
        return covered.add(covered.shiftRight(1)).max(BigInteger.ONE);
    }

    /**
     * The end key of a range from {@code from} that spans {@code span}: always after {@code from}; null
     * (no end: the rest of the keyspace) when it would pass the largest number.
     */
    static byte[] end(byte[] from, BigInteger span) {
        BigInteger end = value(from).add(span.max(BigInteger.ONE));
        if (end.compareTo(LIMIT) >= 0) return null;
        byte[] bytes = end.toByteArray(); // big-endian, maybe with a sign byte or shorter than WIDTH
        byte[] key = new byte[WIDTH];
        int copy = Math.min(bytes.length, WIDTH);
        System.arraycopy(bytes, bytes.length - copy, key, WIDTH - copy, copy);
        return key;
    }
}
