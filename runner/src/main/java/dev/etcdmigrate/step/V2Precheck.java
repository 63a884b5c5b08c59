package dev.etcdmigrate.step;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.version.StorageApi;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * {@code etcdutl check v2store} started with step 1 for a later step that needs it (into 3.6), so that its
 * read of every WAL segment (about 0.5 s a GiB) overlaps the etcds of the steps before. Sound because those
 * steps only start a private etcd on the data in place (etcd3 minor upgrades and patch floors): it serves no
 * v2 writes, and what it appends to the WAL is v3 requests and member attributes, which the check allows; so
 * the data as it was holds v2 content exactly when the data the later step sees does. Read beside a running
 * etcd, the WAL may end in a torn record or lose a purged segment: only a clean answer is used, and any other
 * (content found, the tool failed) leaves the step to check for itself as it always did.
 */
public final class V2Precheck {

    private static final V2Precheck NONE = new V2Precheck(null, CompletableFuture.completedFuture(false));

    private final Release checker;
    private final CompletableFuture<Boolean> clean;

    private V2Precheck(Release checker, CompletableFuture<Boolean> clean) {
        this.checker = checker;
        this.clean = clean;
    }

    public static V2Precheck none() {
        return NONE;
    }

    /** Starts the check of the first step that has one, when it is not step 1 and only in-place etcd3 steps come before it. */
    public static V2Precheck startFor(List<Step> steps, StepContext context) {
        for (int i = 0; i < steps.size(); i++) {
            Step step = steps.get(i);
            if (step instanceof MinorUpgrade up && up.storage() == StorageApi.ETCD3 && up.v2Checker().isPresent()) {
                return i == 0 ? NONE : start(context.etcd(), up.v2Checker().get(), context.dataDir().path(), context.log());
            }
            boolean inPlace = step instanceof PatchFloor
                    || step instanceof MinorUpgrade up && up.storage() == StorageApi.ETCD3 && up.snapshotter().isEmpty();
            if (!inPlace) {
                return NONE;
            }
        }
        return NONE;
    }

    static V2Precheck start(EtcdOperations etcd, Release checker, Path data, Log log) {
        CompletableFuture<Boolean> clean = new CompletableFuture<>();
        Thread.ofVirtual().name("v2-precheck").start(() -> {
            try {
                Optional<String> finding = etcd.v2ContentIn(checker, data);
                finding.ifPresent(f -> log.info("etcdutl " + checker.version() + " check v2store, run alongside the steps before"
                        + " the one into the next line, found v2 content; that step looks again itself"));
                clean.complete(finding.isEmpty());
            } catch (Exception e) {
                log.info("etcdutl " + checker.version() + " check v2store, run alongside the steps before the one that needs it,"
                        + " gave no answer (" + e.getMessage() + "); that step checks itself");
                clean.complete(false);
            }
        });
        return new V2Precheck(checker, clean);
    }

    /** Whether {@code checker} already found nothing in the data; waits for it. False when it did not run, failed or found content. */
    public boolean foundNothing(Release checker) throws InterruptedException {
        if (!checker.equals(this.checker)) {
            return false;
        }
        boolean found = clean.join();
        if (Thread.interrupted()) throw new InterruptedException();
        return found;
    }

    /** Waits for the check, so its process has ended before the run goes on or ends (a step before it failed). */
    public void await() {
        clean.join();
    }
}
