package dev.etcdmigrate.etcd.client.jetcd;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class KeyRangesTest {

    private static byte[] k(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void anEndIsAlwaysAfterItsStartEvenForLongKeysThatShareThePrefix() {
        SplittableRandom random = new SplittableRandom(7);
        for (int i = 0; i < 10_000; i++) {
            byte[] from = new byte[1 + random.nextInt(100)];
            random.nextBytes(from);
            if (from[0] == (byte) 0xff) from[0] = 0x7f; // keep below the largest number
            byte[] end = KeyRanges.end(from, BigInteger.valueOf(random.nextInt(3)));
            assertTrue(Arrays.compareUnsigned(from, end) < 0, Arrays.toString(from));
        }
        byte[] longKey = k("/registry/events/kube-system/coredns-5d78c9869d-abcde.17a2b3c4d5e6f7a8-0000000000000001");
        assertTrue(Arrays.compareUnsigned(longKey, KeyRanges.end(longKey, BigInteger.ZERO)) < 0);
    }

    @Test
    void aSpanCoversOneAndAHalfTimesTheLastPageAndTheTopOfTheKeyspaceIsOpen() {
        byte[] first = k("/registry/pods/ns-1/pod-1000");
        byte[] last = k("/registry/pods/ns-1/pod-1999");
        BigInteger span = KeyRanges.spanForNextPage(first, last);
        BigInteger covered = KeyRanges.value(last).subtract(KeyRanges.value(first));
        assertTrue(span.compareTo(covered) > 0 && span.compareTo(covered.shiftLeft(1)) < 0);
        byte[] top = new byte[KeyRanges.WIDTH];
        Arrays.fill(top, (byte) 0xff);
        assertNull(KeyRanges.end(top, BigInteger.ONE));
        assertTrue(KeyRanges.spanForNextPage(k("same"), k("same")).signum() > 0);
    }
}
