package dev.etcdmigrate.it.support;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/** The few jetcd calls the cluster ITs make on their own clients: a key as bytes, a put that returns its revision. */
public final class Jetcd {

    private Jetcd() {}

    public static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    /** Puts {@code key}, waiting up to 30 s for the answer: the revision it was written at. */
    public static long put(Client client, String key, String value) throws Exception {
        return client.getKVClient()
                .put(bytes(key), bytes(value))
                .get(30, TimeUnit.SECONDS)
                .getHeader()
                .getRevision();
    }
}
