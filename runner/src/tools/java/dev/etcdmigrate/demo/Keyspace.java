package dev.etcdmigrate.demo;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.util.Arrays;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Every key of a v3 keyspace with its value, revisions and lease, read in one consistent range at one
 * revision: what a migration must carry over intact. Values are compared, never printed.
 */
public record Keyspace(long revision, Map<String, Entry> entries) {

    private static final ByteSequence ALL = ByteSequence.from(new byte[] {0});

    public record Entry(byte[] value, long createRevision, long modRevision, long version, long lease) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Entry e
                    && Arrays.equals(value, e.value)
                    && createRevision == e.createRevision
                    && modRevision == e.modRevision
                    && version == e.version
                    && lease == e.lease;
        }

        @Override
        public int hashCode() {
            return Objects.hash(Arrays.hashCode(value), createRevision, modRevision, version, lease);
        }

        @Override
        public String toString() {
            return "Entry[" + value.length + " bytes, create=" + createRevision + ", mod=" + modRevision + ", version="
                    + version + ", lease=" + lease + "]";
        }
    }

    public static Keyspace read(Client client) throws ExecutionException, InterruptedException, TimeoutException {
        var response = client.getKVClient()
                .get(ALL, GetOption.builder().withRange(ALL).build())
                .get(60, TimeUnit.SECONDS);
        Map<String, Entry> entries = new TreeMap<>();
        for (KeyValue kv : response.getKvs()) {
            entries.put(
                    kv.getKey().toString(),
                    new Entry(
                            kv.getValue().getBytes(),
                            kv.getCreateRevision(),
                            kv.getModRevision(),
                            kv.getVersion(),
                            kv.getLease()));
        }
        return new Keyspace(response.getHeader().getRevision(), Collections.unmodifiableMap(entries));
    }

    /** Keys whose value or revisions differ, or that are missing on either side; empty when identical. */
    public Map<String, String> differences(Keyspace after) {
        Map<String, String> diff = new TreeMap<>();
        entries.forEach((key, before) -> {
            Entry now = after.entries.get(key);
            if (now == null) diff.put(key, "missing after");
            else if (!Arrays.equals(before.value(), now.value())) diff.put(key, "value differs");
            else if (before.createRevision() != now.createRevision() || before.modRevision() != now.modRevision()) {
                diff.put(
                        key,
                        "revisions " + before.createRevision() + "/" + before.modRevision() + " became "
                                + now.createRevision() + "/" + now.modRevision());
            }
        });
        after.entries.keySet().stream().filter(k -> !entries.containsKey(k)).forEach(k -> diff.put(k, "new after"));
        return diff;
    }

    public long leasedKeys() {
        return entries.values().stream().filter(e -> e.lease() != 0).count();
    }
}
