package dev.etcdmigrate.etcd.client;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Bulk work on a private etcd's v3 keyspace: a conversion's fix-ups, a digest of every key, a dump. Made by
 * {@link #open}, which keeps jetcd and its gRPC stack off the runner's start (see {@link JetcdLoader}).
 */
public interface Keyspace extends AutoCloseable {

    /** Applies the fix-ups; returns how many keys were put with a lease. */
    long apply(Path fixes) throws IOException, InterruptedException;

    /** Digest (see {@code v2.KeySetDigest}) of every key and value, and how many keys carry a lease. */
    Observed observe() throws IOException, InterruptedException;

    /** Every key, page by page, with the remaining TTL of its lease (looked up once per lease). */
    void dump(EntryConsumer consumer) throws IOException, InterruptedException;

    @Override
    void close();

    /** A digest of every key and value, and how many keys carry a lease. */
    record Observed(String digest, long leased) {}

    /** A key, its value and its lease's remaining TTL in seconds (0: no lease). */
    record Entry(byte[] key, byte[] value, long leaseTtl) {}

    /** Takes the dumped keys one by one. */
    interface EntryConsumer {
        void accept(Entry entry) throws IOException, InterruptedException;
    }

    /** The keyspace of the etcd serving {@code clientUrl}. */
    static Keyspace open(java.net.URI clientUrl) throws IOException {
        return JetcdLoader.open(clientUrl);
    }
}
