package dev.etcdmigrate.ondisk;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

/** {@link BboltFixture}'s files for tests outside this package. */
public final class BboltFixtures {

    private BboltFixtures() {}

    /** A db as 3.6 leaves it at its simplest: storage and cluster version 3.6.0, meta/term. */
    public static byte[] db36() {
        Map<String, Map<String, byte[]>> buckets = new TreeMap<>();
        buckets.put("cluster", Map.of("clusterVersion", "3.6.0".getBytes(StandardCharsets.US_ASCII)));
        buckets.put("meta", new TreeMap<>(Map.of("storageVersion", "3.6.0".getBytes(StandardCharsets.US_ASCII))));
        return BboltFixture.db(buckets);
    }
}
