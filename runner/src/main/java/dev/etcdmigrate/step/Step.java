package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.version.DataVersion;
import java.io.IOException;
import java.util.List;

/**
 * One migration step: a value that says what it will do and what version the data is at once it
 * is done. The runner executes steps in order and records {@link #result()} in version.txt after
 * each, so a crash resumes at the first step not yet recorded.
 */
public sealed interface Step
        permits PatchFloor, MinorUpgrade, OnlineDowngrade, SnapshotDowngrade, ConvertToV3, RollbackToV2 {

    /** One line for the plan and the log, with versions. */
    String describe();

    /** What the step is apart from its script: its result, programs, disk peak and what it keeps. */
    StepFacts facts();

    /** What version.txt says once this step has completed. */
    default DataVersion result() {
        return facts().result();
    }

    /** The bundled programs it runs, checked before anything is touched. */
    default List<Binary> binaries() {
        return facts().binaries();
    }

    void run(StepContext context) throws IOException, InterruptedException, MigrateException;

    /** Whether it builds a new member dir and swaps it in (rather than letting etcd work on the data in place). */
    default boolean replacesMemberDir() {
        return facts().replacesMemberDir();
    }

    /**
     * The step's type in events and `plan -o json`, part of the operator contract: spelled out per kind,
     * so renaming a record changes nothing (pinned by events.golden, EventContractTest).
     */
    default String kind() {
        return switch (this) {
            case PatchFloor s -> "patch-floor";
            case MinorUpgrade s -> "minor-upgrade";
            case OnlineDowngrade s -> "online-downgrade";
            case SnapshotDowngrade s -> "snapshot-downgrade";
            case ConvertToV3 s -> "convert-to-v3";
            case RollbackToV2 s -> "rollback-to-v2";
        };
    }

    /**
     * About how much disk the step needs beyond the data dir as it is, for a member dir of
     * {@code memberBytes}: its copies, snapshots and staged member dirs at their peak (a clone costs less).
     */
    default long extraDisk(long memberBytes) {
        return facts().extraDisk(memberBytes);
    }

    /** What the step keeps afterwards besides the migrated data (e.g. the old member dir as a backup). */
    default String keeps() {
        return facts().keeps();
    }

    /** A bundled program, e.g. etcdctl 3.6.16 (file etcdctl-3.6.16 in the bin dir). */
    record Binary(String tool, Release release) {
        public static Binary etcd(Release release) {
            return new Binary("etcd", release);
        }

        // A catalog has one release per version: the version stands for the release. The record's own equality
        // would hash every fact of the release through bootstrapped method handles, several ms of a first start.
        @Override
        public boolean equals(Object o) {
            return o instanceof Binary b
                    && tool.equals(b.tool)
                    && release.version().equals(b.release.version());
        }

        @Override
        public int hashCode() {
            return 31 * tool.hashCode() + release.version().hashCode();
        }
    }
}
