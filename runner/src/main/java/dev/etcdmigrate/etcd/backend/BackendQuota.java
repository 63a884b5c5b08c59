package dev.etcdmigrate.etcd.backend;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.config.EtcdCommandLine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The backend quota of a private etcd. Below the data's db size every write, the probe included,
 * raises a NOSPACE alarm that is persisted in the data (a later start with a larger quota still refuses
 * writes until it is disarmed). So a private etcd runs with the quota the operator's etcd would run with
 * ({@code --quota-backend-bytes} after {@code --}, in ETCD_CREDS, or ETCD_QUOTA_BACKEND_BYTES; else
 * etcd's default), raised to the db size plus headroom for what a step writes (probes, a conversion's
 * re-put keys, a restore).
 */
public final class BackendQuota {

    static final String NAME = "quota-backend-bytes";
    public static final String FLAG = "--" + NAME;
    /** etcd's default when the flag is absent or 0. */
    static final long ETCD_DEFAULT = 2L << 30;

    static final long MIN_HEADROOM = 512L << 20;

    private BackendQuota() {}

    /**
     * The quota the operator's etcd runs with: its {@code --quota-backend-bytes} (the last one), else
     * ETCD_QUOTA_BACKEND_BYTES; empty for etcd's default.
     */
    public static OptionalLong requested(EtcdCommandLine etcd) {
        return etcd.get(NAME)
                .map(v -> OptionalLong.of(parse(v.trim(), etcd.source(NAME))))
                .orElse(OptionalLong.empty());
    }

    /**
     * The private etcd's extra flags with the operator's quota at the end, where it overrides one in
     * ETCD_CREDS only if the flags after {@code --} or the environment name one (they are what etcd runs
     * with after the migration).
     */
    public static List<String> withRequested(List<String> serverExtraArgs, EtcdCommandLine etcd) {
        OptionalLong requested = requested(etcd);
        if (requested.isEmpty()) return serverExtraArgs;
        List<String> args = new ArrayList<>(serverExtraArgs);
        args.add(FLAG + "=" + requested.getAsLong());
        return List.copyOf(args);
    }

    /**
     * The quota flag for a private etcd of {@code release} on {@code dataDir}, whose command line so far is
     * {@code args} (without the program): the last quota there (or etcd's default), at least the db size plus headroom. Empty
     * for lines without a v3 backend (2.x), which have no quota and reject the flag.
     */
    public static List<String> flags(Release release, Path dataDir, List<String> args) throws IOException {
        if (!release.line().v3Api()) return List.of();
        return List.of(FLAG + "=" + quota(dataDir, args));
    }

    /** The quota a private etcd on {@code dataDir} runs with, given the flags it gets (its environment is scrubbed). */
    public static long quota(Path dataDir, List<String> args) throws IOException {
        long requested = requested(EtcdCommandLine.read(args, Map.of())).orElse(0);
        return effective(requested, dbSize(dataDir));
    }

    /** max(requested, or etcd's default for 0), db + max(512 MiB, db / 4)). */
    static long effective(long requested, long dbBytes) {
        long base = requested > 0 ? requested : ETCD_DEFAULT;
        return Math.max(base, needed(dbBytes));
    }

    /** The least quota under which a db of this size takes a step's writes. */
    public static long needed(long dbBytes) {
        return dbBytes + Math.max(MIN_HEADROOM, dbBytes / 4);
    }

    public static long dbSize(Path dataDir) throws IOException {
        Path db = dataDir.resolve("member").resolve("snap").resolve("db");
        return Files.isRegularFile(db) ? Files.size(db) : 0;
    }

    private static long parse(String value, String what) {
        try {
            long bytes = Long.parseLong(value);
            if (bytes < 0) throw new NumberFormatException();
            return bytes;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(what + " must be a number of bytes, not '" + value + "'");
        }
    }
}
