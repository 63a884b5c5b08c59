package dev.etcdmigrate.etcd.client.jetcd;

import dev.etcdmigrate.etcd.client.Keyspace;
import dev.etcdmigrate.ondisk.V2Key;
import dev.etcdmigrate.v2.ConversionPlan;
import dev.etcdmigrate.v2.KeySetDigest;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Bulk work on a private etcd's v3 keyspace through jetcd (gRPC): applying a conversion's fix-ups in
 * batched transactions, and digesting every key page by page. Memory stays bounded by the batch size.
 * Loaded with jetcd by {@code etcd.client.JetcdLoader}, never by the runner's own class loader in a packaged runner.
 */
public final class V3Keyspace implements Keyspace {

    /** etcd's default --max-txn-ops: every bundled line accepts it. */
    static final int TXN_OPS = 128;
    /** Below etcd's default 1.5 MiB request limit; a single larger value still goes alone. */
    static final int TXN_BYTES = 1 << 20;
    /** Transactions in flight: etcd batches concurrent proposals into fewer raft rounds and fsyncs. */
    static final int IN_FLIGHT = 16;

    private static final ByteSequence ALL = ByteSequence.from(new byte[] {0});
    private static final int PAGE = 1000;

    private final Client client;

    public V3Keyspace(java.net.URI clientUrl) {
        this.client = Client.builder().endpoints(clientUrl).build();
    }

    @Override
    public long apply(Path fixes) throws IOException, InterruptedException {
        Map<Long, Long> leaseByTtl = new HashMap<>();
        List<Op> batch = new ArrayList<>();
        long[] bytes = new long[1];
        long[] leased = new long[1];
        Deque<CompletableFuture<?>> inFlight = new ArrayDeque<>();
        ConversionPlan.read(fixes, fix -> {
            ByteSequence key = ByteSequence.from(fix.key().getBytes(StandardCharsets.UTF_8));
            Op op;
            if (fix.delete()) {
                op = Op.delete(key, DeleteOption.DEFAULT);
            } else if (fix.leaseTtlSeconds() > 0) {
                Long lease = leaseByTtl.get(fix.leaseTtlSeconds());
                if (lease == null) {
                    lease = await(client.getLeaseClient().grant(fix.leaseTtlSeconds()), 30)
                            .getID();
                    leaseByTtl.put(fix.leaseTtlSeconds(), lease);
                }
                op = Op.put(
                        key,
                        ByteSequence.from(fix.value()),
                        PutOption.builder().withLeaseId(lease).build());
                leased[0]++;
            } else {
                op = Op.put(key, ByteSequence.from(fix.value()), PutOption.DEFAULT);
            }
            long size = fix.key().length() + fix.value().length;
            if (!batch.isEmpty() && (batch.size() == TXN_OPS || bytes[0] + size > TXN_BYTES)) {
                send(batch, inFlight);
                bytes[0] = 0;
            }
            batch.add(op);
            bytes[0] += size;
        });
        if (!batch.isEmpty()) send(batch, inFlight);
        while (!inFlight.isEmpty()) await(inFlight.removeFirst(), 60);
        return leased[0];
    }

    private void send(List<Op> batch, Deque<CompletableFuture<?>> inFlight) throws IOException, InterruptedException {
        if (inFlight.size() == IN_FLIGHT) await(inFlight.removeFirst(), 60);
        inFlight.addLast(
                client.getKVClient().txn().Then(batch.toArray(Op[]::new)).commit());
        batch.clear();
    }

    /** Digest (see {@link KeySetDigest}) of every key and value, and how many keys carry a lease. */
    @Override
    public Observed observe() throws IOException, InterruptedException {
        KeySetDigest digest = new KeySetDigest();
        long[] leased = new long[1];
        forEachKey(kv -> {
            String key = kv.getKey().toString(StandardCharsets.UTF_8);
            if (key.equals(V2Key.PROBE)) return;
            digest.add(key, kv.getValue().getBytes());
            if (kv.getLease() != 0) leased[0]++;
        });
        return new Observed(digest.value(), leased[0]);
    }

    private interface KeyValueConsumer {
        void accept(KeyValue kv) throws IOException, InterruptedException;
    }

    /**
     * Every key, a page at a time, each page a key range [from, end) that starts where the one before
     * stopped, so the ranges tile the keyspace. No sort order is asked for: with one, etcd up to 3.4 drops
     * the limit and reads every remaining key for each page; without one every line returns a range in
     * key order anyway (its index is a B-tree). Every line still walks its whole in-memory index over
     * the range asked for (to count it), so a range reaching to the end of the keyspace would make the
     * walk quadratic: each range's end is estimated from the key distance the page before covered
     * ({@link KeyRanges}), so a range holds about a page and a half of keys. {@link KeySetDigest} does
     * not depend on the order.
     */
    private void forEachKey(KeyValueConsumer consumer) throws IOException, InterruptedException {
        byte[] from = {0};
        java.math.BigInteger span = null; // unknown until a full page has been seen: the first range is open
        while (true) {
            byte[] end = span == null ? null : KeyRanges.end(from, span);
            GetResponse page = await(
                    client.getKVClient()
                            .get(
                                    ByteSequence.from(from),
                                    GetOption.builder()
                                            .withRange(end == null ? ALL : ByteSequence.from(end))
                                            .withLimit(PAGE)
                                            .build()),
                    60);
            byte[] previous = null;
            for (KeyValue kv : page.getKvs()) {
                byte[] key = kv.getKey().getBytes();
                // the next range starts after this page's last key: out of order, keys would be skipped
                if (previous != null && Arrays.compareUnsigned(previous, key) >= 0) {
                    throw new IllegalStateException(
                            "etcd returned a range page out of key order; cannot page through it");
                }
                previous = key;
                consumer.accept(kv);
            }
            if (page.isMore() && !page.getKvs().isEmpty()) {
                byte[] first = page.getKvs().getFirst().getKey().getBytes();
                span = KeyRanges.spanForNextPage(first, previous);
                from = Arrays.copyOf(previous, previous.length + 1); // the smallest key after the last one
            } else if (end == null) {
                return; // the open range is exhausted: every key was seen
            } else {
                from = end; // this range is exhausted; the next one starts at its end, twice as wide
                span = span.shiftLeft(1);
            }
        }
    }

    @Override
    public void dump(EntryConsumer consumer) throws IOException, InterruptedException {
        Map<Long, Long> ttlByLease = new HashMap<>();
        forEachKey(kv -> {
            long ttl = 0;
            if (kv.getLease() != 0) {
                Long known = ttlByLease.get(kv.getLease());
                if (known == null) {
                    known = await(
                                    client.getLeaseClient()
                                            .timeToLive(kv.getLease(), io.etcd.jetcd.options.LeaseOption.DEFAULT),
                                    30)
                            .getTTL();
                    ttlByLease.put(kv.getLease(), known);
                }
                ttl = Math.max(known, -1); // -1: the lease is gone, the key expires with it
            }
            consumer.accept(new Entry(kv.getKey().getBytes(), kv.getValue().getBytes(), ttl));
        });
    }

    /** A jetcd request's answer; its failure or a timeout is an I/O failure of the talk with etcd. */
    private static <T> T await(Future<T> answer, int seconds) throws IOException, InterruptedException {
        try {
            return answer.get(seconds, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw cause instanceof IOException io
                    ? io
                    : new IOException("etcd request failed: " + cause.getMessage(), cause);
        } catch (TimeoutException e) {
            throw new IOException("etcd did not answer within " + seconds + " s", e);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
