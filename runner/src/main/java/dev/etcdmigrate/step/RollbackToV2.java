package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.MemberSwap;
import dev.etcdmigrate.datadir.NamedFileOutput;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.event.KeysEvent;
import dev.etcdmigrate.log.ProgressMeter;
import dev.etcdmigrate.ondisk.V2Key;
import dev.etcdmigrate.step.EtcdOperations.Tuning;
import dev.etcdmigrate.v2.KeySetDigest;
import dev.etcdmigrate.v2.V2KeyRules;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * etcd3 -> etcd2 (no upstream tool): the data's own line dumps every v3 key with its lease's remaining
 * TTL (from a copy of member/, so a refusal leaves the data dir as it was), checking that each can
 * live in v2; the target release creates a fresh data dir and the keys are loaded through /v2/keys
 * (TTL = remaining lease TTL); the new v2 store, read back through the v2 API, must match the dump;
 * then it replaces member/, kept as a backup. Revisions are not kept: v2 assigns new indexes.
 */
public record RollbackToV2(EtcdVersion from, Release dumper, Release target) implements Step {

    private static final int SHOWN_OFFENDERS = 5;
    /** v2 writes in flight: the server batches concurrent proposals, which sets the reload rate. */
    private static final int IN_FLIGHT = 256;
    /** A snapshot count no load reaches: etcd takes no snapshot while the keys go in. */
    private static final long NO_SNAPSHOT_DURING_LOAD = 100_000_000;

    @Override
    public String describe() {
        return "roll etcd3 data back to etcd2: etcd " + dumper.version() + " dumps every key with its lease TTL, etcd "
                + target.version() + " loads them through /v2/keys into a fresh data dir (revisions are not kept)";
    }

    @Override
    public StepFacts facts() {
        return new StepFacts(
                new DataVersion(target.etcdVersion(), StorageApi.ETCD2),
                List.of(Binary.etcd(dumper), Binary.etcd(target)),
                true,
                3,
                2,
                "the etcd3 member dir as a backup");
    }

    @Override
    public void run(StepContext context) throws IOException, InterruptedException, MigrateException {
        EtcdOperations etcd = context.etcd();
        MemberSwap swap = context.memberSwap();
        Path staged = swap.prepare();
        Path staging = staged.getParent();
        Path work = swap.copyMemberToWork();
        Path dump = staging.resolve("dump.bin");
        Dumped dumped;
        try (EtcdOperations.Running running = etcd.start(dumper, work)) {
            dumped = dump(etcd, running, dump);
            running.stop();
        }
        Trees.deleteRecursively(work);
        if (!dumped.offenders().isEmpty()) {
            Trees.deleteRecursively(context.dataDir().staging());
            throw new StepRefusedException(
                    dumped.offenderCount() + " key(s) cannot be carried into etcd2, e.g. "
                            + String.join("; ", dumped.offenders())
                            + ". Keys that are also directories of other keys must be renamed;"
                            + " binary values come from objects stored as protobuf: set STORAGE_MEDIA_TYPE=application/json on the"
                            + " API server and rewrite the objects (e.g. kubectl get ... -o json | kubectl replace -f -), then retry");
        }
        context.log().emit(new KeysEvent.KeysDumped(dumped.digest().count(), dumped.leased(), dumped.expired()));

        // no v2 store snapshot (a JSON copy of the whole store) in the middle of the load; one is forced after it
        KeySetDigest loaded = new KeySetDigest();
        try (EtcdOperations.Running running =
                etcd.startNewMember(target, staged, Tuning.snapshotAfter(NO_SNAPSHOT_DURING_LOAD), StorageApi.ETCD2)) {
            long start = System.nanoTime();
            try (EtcdOperations.V2Loader loader = etcd.loadV2(running, IN_FLIGHT);
                    ProgressMeter progress = ProgressMeter.counting(
                            context.log(),
                            "loading keys through /v2/keys",
                            "keys",
                            dumped.digest().count())) {
                readDump(dump, (key, value, ttl) -> {
                    loader.put(key, value, ttl);
                    progress.advance(1);
                });
            }
            long millis = Math.max(1, (System.nanoTime() - start) / 1_000_000);
            context.log()
                    .emit(new KeysEvent.KeysLoaded(
                            "through /v2/keys of etcd " + target.version(),
                            dumped.digest().count(),
                            millis));
            readBack(etcd, running, dump, loaded);
            running.stop();
        }
        if (!loaded.value().equals(dumped.digest().value())) {
            throw new StepFailedException("the v2 store differs from the v3 dump: dump digest "
                    + dumped.digest().value() + ", v2 digest " + loaded.value() + "; the data dir is unchanged");
        }
        context.log()
                .emit(new KeysEvent.KeyspaceMatched(
                        loaded.value(), dumped.digest().count(), "in the v2 store, read back against the dump"));
        swap.markComplete(result());
        swap.swap(new DataVersion(from, StorageApi.ETCD3), result());
    }

    private record Dumped(KeySetDigest digest, long leased, long expired, long offenderCount, List<String> offenders) {}

    private static Dumped dump(EtcdOperations etcd, EtcdOperations.Running running, Path file)
            throws IOException, InterruptedException, MigrateException {
        V2KeyRules rules = new V2KeyRules();
        KeySetDigest digest = new KeySetDigest();
        long[] counts = new long[3]; // leased, expired, offenders
        List<String> offenders = new ArrayList<>();
        try (DataOutputStream out =
                new DataOutputStream(new BufferedOutputStream(NamedFileOutput.create(file), 1 << 16))) {
            etcd.dumpV3(running, entry -> {
                var problem = rules.check(entry.key(), entry.value());
                if (problem.isPresent()) {
                    counts[2]++;
                    if (offenders.size() < SHOWN_OFFENDERS) {
                        offenders.add(printable(entry.key()) + ": " + problem.get());
                    }
                    return;
                }
                if (entry.leaseTtl() < 0) { // its lease ran out: etcd is deleting it, v2 would not have it
                    counts[1]++;
                    return;
                }
                String key = new String(entry.key(), StandardCharsets.UTF_8);
                digest.add(key, entry.value());
                if (entry.leaseTtl() > 0) counts[0]++;
                out.writeLong(entry.leaseTtl());
                out.writeInt(entry.key().length);
                out.write(entry.key());
                out.writeInt(entry.value().length);
                out.write(entry.value());
            });
        }
        return new Dumped(digest, counts[0], counts[1], counts[2], offenders);
    }

    /**
     * What the loaded store serves, through the v2 API: every listed key, and the hidden ones (never
     * listed) by name from the dump. (Not from a forced snapshot: etcd 2.2 dies when SIGTERM meets a
     * snapshot in progress.)
     */
    private static void readBack(EtcdOperations etcd, EtcdOperations.Running running, Path dump, KeySetDigest loaded)
            throws IOException, InterruptedException, MigrateException {
        etcd.listV2(running, (key, value) -> loaded.add(key, value.getBytes(StandardCharsets.UTF_8)));
        readDump(dump, (key, ignoredValue, ignoredTtl) -> {
            if (V2Key.isHidden(key)) {
                String value = etcd.getV2(running, key);
                if (value != null) loaded.add(key, value.getBytes(StandardCharsets.UTF_8));
            }
        });
    }

    private interface DumpedKey {
        void accept(String key, String value, long ttl) throws IOException, InterruptedException, MigrateException;
    }

    /** Replays the records {@link #dump} wrote: ttl, key length, key, value length, value. */
    private static void readDump(Path dump, DumpedKey consumer)
            throws IOException, InterruptedException, MigrateException {
        try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(dump), 1 << 16))) {
            while (true) {
                long ttl;
                try {
                    ttl = in.readLong();
                } catch (EOFException end) {
                    return;
                }
                String key = new String(in.readNBytes(in.readInt()), StandardCharsets.UTF_8);
                String value = new String(in.readNBytes(in.readInt()), StandardCharsets.UTF_8);
                consumer.accept(key, value, ttl);
            }
        }
    }

    /** A key for a message: printable characters kept, others escaped, long keys cut. */
    private static String printable(byte[] key) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < Math.min(key.length, 80); i++) {
            int c = key[i] & 0xff;
            if (c >= 0x20 && c < 0x7f) b.append((char) c);
            else b.append(String.format("\\x%02x", c));
        }
        return key.length > 80 ? b + "..." : b.toString();
    }
}
