package dev.etcdmigrate.v2;

import dev.etcdmigrate.ondisk.V2Key;
import dev.etcdmigrate.ondisk.V2SnapshotReader;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;

/**
 * What `etcdctl migrate` leaves undone, worked out from the v2 store's snapshot and written to a file
 * (streamed: a large store never sits in memory): keys whose TTL ran out are deleted (v2 would have
 * expired them); keys with a live TTL, and keys under the TTL directory without one, are put again
 * with a lease; hidden keys, which migrate skips, are put. Also the digest of every key that must
 * exist afterwards.
 */
public final class ConversionPlan {

    /** One fix-up of the converted v3 keyspace. */
    public record Fix(String key, byte[] value, long leaseTtlSeconds, boolean delete) {}

    public interface FixConsumer {
        void accept(Fix fix) throws IOException, InterruptedException;
    }

    /** Counts for the log, and the digest the converted keyspace must match. */
    public record Summary(long keys, long expired, long leased, long hidden, String digest) {}

    private ConversionPlan() {}

    /**
     * Reads the snapshot and writes the fix-ups to {@code fixes}.
     *
     * @param now the moment remaining TTLs are measured from
     */
    public static Summary write(Path snapshot, Path fixes, String ttlDirectory, Duration defaultTtl, Instant now)
            throws IOException {
        KeySetDigest digest = new KeySetDigest();
        long[] expired = new long[1];
        long[] leased = new long[1];
        long[] hidden = new long[1];
        String ttlPrefix = ttlDirectory.endsWith("/") ? ttlDirectory : ttlDirectory + "/";
        try (DataOutputStream out =
                new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(fixes), 1 << 16))) {
            V2SnapshotReader.read(snapshot, key -> {
                if (key.key().equals(V2Key.PROBE)) {
                    return; // a snapshot can fall between the probe's put and its delete
                }
                byte[] value = key.value().getBytes(StandardCharsets.UTF_8);
                long ttl = 0;
                if (key.expireTime().isPresent()) {
                    long remainingMillis =
                            Duration.between(now, key.expireTime().get()).toMillis();
                    if (remainingMillis <= 0) {
                        expired[0]++;
                        record(out, key.key(), new byte[0], 0, true);
                        return;
                    }
                    ttl = leaseTtl(Duration.ofMillis(remainingMillis));
                } else if (key.key().startsWith(ttlPrefix)) {
                    ttl = defaultTtl.toSeconds();
                }
                digest.add(key.key(), value);
                if (ttl > 0) leased[0]++;
                if (key.hidden()) hidden[0]++;
                if (ttl > 0 || key.hidden()) {
                    record(out, key.key(), value, ttl, false);
                }
            });
        } catch (IOException e) {
            // a failed write says only "Input/output error": name the files
            throw new IOException("writing " + fixes + " from " + snapshot + ": " + e.getMessage(), e);
        }
        return new Summary(digest.count(), expired[0], leased[0], hidden[0], digest.value());
    }

    /**
     * Lease TTLs come in 2-second steps up to an hour (60-second steps beyond), rounded up: keys share a
     * bounded number of leases, and none lives shorter than its v2 TTL or more than a step longer.
     */
    static long leaseTtl(Duration remaining) {
        long seconds = (remaining.toMillis() + 999) / 1000;
        long step = seconds <= 3600 ? 2 : 60;
        return Math.max(step, (seconds + step - 1) / step * step);
    }

    private static void record(DataOutputStream out, String key, byte[] value, long ttl, boolean delete)
            throws IOException {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        out.writeBoolean(delete);
        out.writeLong(ttl);
        out.writeInt(k.length);
        out.write(k);
        out.writeInt(value.length);
        out.write(value);
    }

    /** Replays the fix-ups written by {@link #write}. */
    public static void read(Path fixes, FixConsumer consumer) throws IOException, InterruptedException {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(fixes), 1 << 16))) {
            while (true) {
                boolean delete;
                try {
                    delete = in.readBoolean();
                } catch (EOFException end) {
                    return;
                }
                long ttl = in.readLong();
                byte[] key = in.readNBytes(in.readInt());
                byte[] value = in.readNBytes(in.readInt());
                consumer.accept(new Fix(new String(key, StandardCharsets.UTF_8), value, ttl, delete));
            }
        }
    }
}
