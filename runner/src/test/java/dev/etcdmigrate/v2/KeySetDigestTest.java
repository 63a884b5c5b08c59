package dev.etcdmigrate.v2;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class KeySetDigestTest {

    private static String digest(String... keyValues) {
        KeySetDigest d = new KeySetDigest();
        for (int i = 0; i < keyValues.length; i += 2) {
            d.add(keyValues[i], keyValues[i + 1].getBytes(StandardCharsets.UTF_8));
        }
        return d.value();
    }

    @Test
    void orderDoesNotMatterContentDoes() {
        assertEquals(digest("/a", "1", "/b", "2"), digest("/b", "2", "/a", "1"));
        assertNotEquals(digest("/a", "1", "/b", "2"), digest("/a", "1", "/b", "3"));
        assertNotEquals(digest("/a", "1"), digest("/a", "1", "/b", ""), "an extra key with an empty value counts");
        // the key/value boundary is part of each entry's hash
        assertNotEquals(digest("/ab", "c"), digest("/a", "bc"));
        assertEquals("0:0", new KeySetDigest().value());
    }

    @Test
    void leaseTtlsComeInBoundedStepsNeverShorterThanTheV2Ttl() {
        assertEquals(2, ConversionPlan.leaseTtl(Duration.ofMillis(300)));
        assertEquals(600, ConversionPlan.leaseTtl(Duration.ofSeconds(600)));
        assertEquals(600, ConversionPlan.leaseTtl(Duration.ofMillis(599_001)));
        assertEquals(602, ConversionPlan.leaseTtl(Duration.ofMillis(600_001)));
        assertEquals(3600, ConversionPlan.leaseTtl(Duration.ofSeconds(3600)));
        assertEquals(3660, ConversionPlan.leaseTtl(Duration.ofSeconds(3601)));
        for (long ms = 1; ms < 7_200_000; ms += 7_777) {
            long ttl = ConversionPlan.leaseTtl(Duration.ofMillis(ms));
            long seconds = (ms + 999) / 1000;
            assertEquals(true, ttl >= seconds && ttl - seconds < (seconds <= 3600 ? 2 : 60), ms + " ms -> " + ttl);
        }
    }
}
