package dev.etcdmigrate.run;

import dev.etcdmigrate.datadir.Backups;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.datadir.MemberSwap;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.event.StepEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.plan.Plan;
import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.step.StepContext;
import dev.etcdmigrate.version.DataVersion;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs a plan's steps in order and records each one's result in version.txt once it completed, so a
 * crash resumes at the first step not recorded. A step that fails leaves version.txt at the last
 * completed step; its half-made copies are removed, and the failure names the step and what
 * version.txt says.
 */
final class StepRunner {

    private final DataDir dataDir;
    private final Backups backups;
    private final Log log;

    StepRunner(DataDir dataDir, Backups backups, Log log) {
        this.dataDir = dataDir;
        this.backups = backups;
        this.log = log;
    }

    /** A step failed: which one, why, and what version.txt still says; exit 1 unless the step refused (exit 3). */
    static final class StepFailure extends FailedException {
        StepFailure(int index, int total, String reason, String versionTxt, Throwable cause) {
            super(
                    "step " + index + "/" + total + " failed: " + reason + "; version.txt still says " + versionTxt,
                    cause);
        }
    }

    void run(Plan plan, StepContext context) throws IOException, MigrateException {
        List<Step> steps = plan.steps();
        for (int i = 0; i < steps.size(); i++) {
            Step step = steps.get(i);
            int index = i + 1;
            log.emit(new StepEvent.StepStarted(index, steps.size(), step.kind(), step.describe()));
            long start = System.nanoTime();
            try {
                step.run(context);
            } catch (Exception e) {
                discardUnfinishedWork(index, steps.size());
                String versionTxt =
                        dataDir.readVersion().map(DataVersion::toString).orElse("nothing");
                String reason = e.getMessage() == null ? e.toString() : e.getMessage();
                log.emit(new StepEvent.StepFailed(
                        index, steps.size(), step.kind(), (System.nanoTime() - start) / 1_000_000, reason, versionTxt));
                if (e instanceof InterruptedException) Thread.currentThread().interrupt();
                throw ending(e, index, steps.size(), reason, versionTxt);
            }
            // etcd syncs its WAL and db contents, not every directory entry: version.txt must not outlive them
            if (java.nio.file.Files.isDirectory(dataDir.member())) Trees.syncTree(dataDir.member());
            dataDir.writeVersion(step.result());
            log.emit(new StepEvent.StepFinished(
                    index,
                    steps.size(),
                    step.kind(),
                    (System.nanoTime() - start) / 1_000_000,
                    step.result().toString()));
        }
    }

    /**
     * What a step's exception ends the run with: a step's refusal stays a refusal (exit 3: it refuses before
     * it changes anything, the original untouched); anything else, a usage error included, is this step's
     * failure (exit 1): by then an earlier step, or this one, may have changed the data, and exit 2 says
     * "nothing touched".
     */
    static MigrateException ending(Exception e, int index, int total, String reason, String versionTxt) {
        if (e instanceof MigrateException m && m.status() == ExitStatus.REFUSED) return m;
        return new StepFailure(index, total, reason, versionTxt, e);
    }

    /**
     * A failed step's half-made copies (staging without its completion marker, work dirs) only fill the
     * disk: they go now. A complete staging stays for the next start to finish the swap.
     */
    private void discardUnfinishedWork(int index, int total) {
        String label = "step " + index + "/" + total;
        try {
            List<Path> removed = new ArrayList<>(dataDir.own().workDirs());
            for (Path work : removed) {
                Trees.deleteRecursively(work);
            }
            if (new MemberSwap(dataDir, backups, log).discardIncomplete()) {
                removed.add(dataDir.staging());
            }
            if (!removed.isEmpty()) {
                log.emit(new StepEvent.WorkDiscarded(
                        index,
                        total,
                        dataDir.path().toString(),
                        removed.stream()
                                .map(p -> dataDir.path().relativize(p).toString())
                                .toList()));
            }
        } catch (IOException e) {
            log.emit(new StepEvent.CleanupDeferred(label, String.valueOf(e.getMessage())));
        }
    }
}
