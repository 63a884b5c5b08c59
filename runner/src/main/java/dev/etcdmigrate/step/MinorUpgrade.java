package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.event.KeysEvent;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.step.EtcdOperations.Tuning;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Opens the data with the next minor line's etcd: start it privately, wait for a write, stop it.
 *
 * <p>Before that, where the catalog asks, the previous line prepares the data:
 * <ul>
 *   <li>{@code v2Checker}: the next line refuses v2 content (3.6+), so the previous line's
 *       {@code etcdutl check v2store} vets the data. Data that passed through etcd 2.x or 3.0 (or held
 *       v2 TTL keys) keeps old v2 WAL entries; one start of the previous line with
 *       {@code --snapshot-count=1} puts a fresh snapshot after them, and the check runs again. Real v2
 *       keys still fail it: the step refuses, with the data left at the previous line.
 *   <li>{@code snapshotter}: the next line replays no WAL entry in the v2 request format (3.7), so the
 *       previous line runs once with {@code --snapshot-count=1} to leave them behind a snapshot.
 *   <li>{@code v2JudgedAtStart}: the step before this one ran the checker's line and left a snapshot after
 *       its last entries ({@code Plan.withV2JudgedAtStart}). The next line's etcd then meets any v2 content
 *       in that snapshot's v2 store, which 3.6 checks at bootstrap, before it opens the WAL for writing and
 *       long before it could record a 3.6 cluster or storage version; at most the one or two entries that
 *       etcd applied after its snapshot are replayed, and 3.6 would panic on a v2 one before its first
 *       cluster version update. It refuses either with a line the catalog knows ({@code line.v2Refusals}).
 *       So it starts first, and the check runs only after such a refusal, as above.
 * </ul>
 */
public record MinorUpgrade(
        StorageApi storage,
        EtcdVersion from,
        Release release,
        Optional<Release> v2Checker,
        Optional<Release> snapshotter,
        boolean snapshotForNext,
        boolean v2JudgedAtStart)
        implements Step {

    public MinorUpgrade {
        if (v2JudgedAtStart && !judgeable(storage, v2Checker, snapshotter, release)) {
            throw new IllegalArgumentException(
                    "only an etcd3 step with a v2 checker, no snapshotter and a line that names its v2"
                            + " refusals lets the etcd judge its v2 content");
        }
    }

    /** What {@link #canJudgeV2AtStart} asks, on the components (the compact constructor has no fields yet). */
    private static boolean judgeable(
            StorageApi storage, Optional<Release> v2Checker, Optional<Release> snapshotter, Release release) {
        return storage == StorageApi.ETCD3
                && v2Checker.isPresent()
                && snapshotter.isEmpty()
                && !release.line().v2Refusals().isEmpty();
    }

    public MinorUpgrade(EtcdVersion from, Release release, Optional<Release> v2Checker, Optional<Release> snapshotter) {
        this(StorageApi.ETCD3, from, release, v2Checker, snapshotter, false, false);
    }

    /** etcd2 data: the line's v2 switch on, probed with v2 writes; nothing else applies below 3.6. */
    public static MinorUpgrade ofEtcd2(EtcdVersion from, Release release) {
        return new MinorUpgrade(StorageApi.ETCD2, from, release, Optional.empty(), Optional.empty(), false, false);
    }

    /** Whether the step before may leave a snapshot so that this step's etcd judges the v2 content itself. */
    public boolean canJudgeV2AtStart() {
        return judgeable(storage, v2Checker, snapshotter, release);
    }

    /** The same step, its etcd starting first and the check running only after it refused v2 content (see above). */
    /** The same step with the previous line's etcd taking a snapshot first (see {@code Plan.withSnapshotterAfterServing}). */
    public MinorUpgrade withSnapshotter(Release previous) {
        return new MinorUpgrade(storage, from, release, v2Checker, Optional.of(previous), snapshotForNext, false);
    }

    public MinorUpgrade withV2JudgedAtStart() {
        return new MinorUpgrade(storage, from, release, v2Checker, snapshotter, snapshotForNext, true);
    }

    /**
     * The same step, its etcd also leaving a snapshot for the etcd that starts next: the next line's when
     * that line needs one (instead of a second start there), or the target's ({@code Plan.withSnapshotForTheTarget}).
     */
    public MinorUpgrade withSnapshotForNext() {
        return new MinorUpgrade(storage, from, release, v2Checker, snapshotter, true, v2JudgedAtStart);
    }

    @Override
    public String describe() {
        return "upgrade " + from + " -> " + release.version() + (storage == StorageApi.ETCD2 ? " (etcd2 data)" : "")
                + ": start etcd " + release.version() + " on the data until a "
                + (storage == StorageApi.ETCD2 ? "v2" : "v3")
                + " write succeeds"
                + v2Checker
                        .map(c -> v2JudgedAtStart
                                ? "; it refuses v2 content itself at start, and only then does etcdutl " + c.version()
                                        + " check v2store run"
                                : ", after etcdutl " + c.version() + " confirms no v2 content")
                        .orElse("")
                + snapshotter
                        .map(s -> ", after etcd " + s.version() + " takes a snapshot")
                        .orElse("")
                + (snapshotForNext
                        ? " (with --snapshot-count=1: it leaves a snapshot for the etcd that starts next)"
                        : "");
    }

    @Override
    public StepFacts facts() {
        List<Binary> binaries = new ArrayList<>();
        v2Checker.ifPresent(c -> binaries.addAll(List.of(new Binary("etcdutl", c), Binary.etcd(c))));
        snapshotter.ifPresent(s -> binaries.add(Binary.etcd(s)));
        binaries.add(Binary.etcd(release));
        List<Binary> distinct = binaries.stream().distinct().toList();
        int etcdStarts =
                (int) distinct.stream().filter(b -> b.tool().equals("etcd")).count();
        return StepFacts.inPlace(new DataVersion(release.etcdVersion(), storage), distinct, etcdStarts);
    }

    @Override
    public void run(StepContext context) throws IOException, InterruptedException, MigrateException {
        EtcdOperations etcd = context.etcd();
        Path data = context.dataDir().path();
        Tuning tuning = snapshotForNext ? Tuning.snapshotAtOnce() : Tuning.NONE;
        if ((v2Checker.isPresent() || snapshotter.isPresent())
                && DataDetection.recordsLine(data, context.walDir(), release.minorLine())) {
            // a run of this step was stopped after its etcd recorded its line in the db or logged it in the WAL
            // (version.txt not yet written; the plan resumes it): the preparation ran before that etcd, and the
            // previous line's etcd can no longer open the data (3.6 refuses a 3.7 storage version, and replaying
            // a newer cluster version it panics)
            context.log()
                    .info("the data already records etcd " + release.minorLine() + ": an interrupted run of this"
                            + " step prepared it; etcd " + release.version() + " starts on it directly");
            etcd.runUntilWrite(release, data, tuning, storage);
            return;
        }
        if (v2JudgedAtStart) {
            Optional<String> refusal = etcd.runUntilWriteUnlessV2Refused(release, data, tuning);
            if (refusal.isEmpty()) {
                return;
            }
            context.log()
                    .emit(new KeysEvent.V2ContentRefused(
                            release.version(), refusal.get(), v2Checker.get().version()));
        }
        if (v2Checker.isPresent()) {
            confirmNoV2Content(context, v2Checker.get());
        }
        if (snapshotter.isPresent()) {
            context.log()
                    .info("etcd " + release.version() + " replays no v2-format WAL entries: etcd "
                            + snapshotter.get().version()
                            + " runs once with --snapshot-count=1 to leave them behind a snapshot");
            etcd.runUntilWrite(snapshotter.get(), data, Tuning.snapshotAtOnce());
        }
        etcd.runUntilWrite(release, data, tuning, storage);
    }

    private void confirmNoV2Content(StepContext context, Release checker)
            throws IOException, InterruptedException, MigrateException {
        Path data = context.dataDir().path();
        Optional<String> finding = context.etcd().v2ContentIn(checker, data);
        if (finding.isEmpty()) {
            return;
        }
        context.log().emit(new KeysEvent.V2ContentFound(checker.version(), finding.get(), false));
        context.etcd().runUntilWrite(checker, data, Tuning.snapshotAtOnce());
        Optional<String> still = context.etcd().v2ContentIn(checker, data);
        if (still.isPresent()) {
            context.log().emit(new KeysEvent.V2ContentFound(checker.version(), still.get(), true));
            throw new StepFailedException(
                    "etcd " + release.version() + " refuses data with v2 content, and the data holds v2 keys"
                            + " (not only old WAL entries: " + still.get()
                            + "); they need the etcd2 conversion. The data is still valid "
                            + checker.minorLine() + " data");
        }
    }
}
