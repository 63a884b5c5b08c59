package dev.etcdmigrate.demo;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Kubernetes-like keys for the demo and the tests: JSON objects under /registry, binary (protobuf-like)
 * secrets, events attached to leases, some keys updated and some deleted so revisions differ.
 */
public final class SampleData {

    private SampleData() {}

    /** Writes about {@code count} keys; every tenth is an event attached to one of a few leases. */
    public static void seed(Client client, int count, long leaseTtlSeconds) throws Exception {
        Random random = new Random(42);
        List<Long> leases = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            leases.add(client.getLeaseClient()
                    .grant(leaseTtlSeconds)
                    .get(30, TimeUnit.SECONDS)
                    .getID());
        }
        List<CompletableFuture<?>> pending = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String key;
            byte[] value;
            PutOption option = PutOption.DEFAULT;
            switch (i % 10) {
                case 0 -> {
                    key = "/registry/events/default/pod-" + i + ".event";
                    value = json("Event", "pod-" + i, random);
                    option = PutOption.builder()
                            .withLeaseId(leases.get(i % leases.size()))
                            .build();
                }
                case 1 -> {
                    key = "/registry/secrets/kube-system/token-" + i;
                    value = new byte[64 + random.nextInt(512)];
                    random.nextBytes(value);
                    value[0] = 'k';
                    value[1] = '8';
                    value[2] = 's';
                    value[3] = 0; // protobuf envelope magic
                }
                case 2, 3 -> {
                    key = "/registry/configmaps/ns-" + (i % 7) + "/cm-" + i;
                    value = json("ConfigMap", "cm-" + i, random);
                }
                default -> {
                    key = "/registry/pods/ns-" + (i % 13) + "/pod-" + i;
                    value = json("Pod", "pod-" + i, random);
                }
            }
            pending.add(client.getKVClient().put(bytes(key), ByteSequence.from(value), option));
            if (pending.size() == 256) drain(pending);
        }
        drain(pending);
        // updates and deletes, so that create and mod revisions and versions differ
        for (int i = 4; i < count; i += 50) {
            pending.add(client.getKVClient()
                    .put(
                            bytes("/registry/pods/ns-" + (i % 13) + "/pod-" + i),
                            ByteSequence.from(json("Pod", "pod-" + i + "-v2", random))));
        }
        drain(pending);
        for (int i = 5; i < count; i += 97) {
            pending.add(client.getKVClient().delete(bytes("/registry/pods/ns-" + (i % 13) + "/pod-" + i)));
        }
        drain(pending);
    }

    private static void drain(List<CompletableFuture<?>> pending) throws Exception {
        CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        pending.clear();
    }

    private static byte[] json(String kind, String name, Random random) {
        return ("{\"kind\":\"" + kind + "\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"" + name + "\",\"uid\":\""
                        + Long.toHexString(random.nextLong()) + "\"},\"spec\":{\"note\":\""
                        + "x".repeat(random.nextInt(200)) + "\"}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    public static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
