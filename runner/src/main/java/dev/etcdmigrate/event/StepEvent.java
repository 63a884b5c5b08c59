package dev.etcdmigrate.event;

import java.util.List;

/**
 * A step's progress and what it does to the data dir: version.txt, swaps, work copies, what a crashed
 * run left behind.
 */
public sealed interface StepEvent extends Event {

    /** What a step left unfinished could not be removed now; the next start discards it. */
    record CleanupDeferred(String step, String reason) implements StepEvent {
        public String message() {
            return "could not remove what " + step + " left unfinished (" + reason + "); the next start discards it";
        }

        public Level level() {
            return Level.WARN;
        }
    }

    /** A staged member dir replaced member/; version.txt says {@code version}. */
    record MemberSwapped(String dataDir, String version) implements StepEvent {
        public String message() {
            return "moved the " + version + " member dir into " + dataDir + "; version.txt says " + version;
        }
    }

    /** Long work's progress at a steady interval: done of total (0 = unknown) units, a rate, an estimate. */
    record Progress(String work, String unit, long done, long total, long perSecond, long etaSeconds)
            implements StepEvent {
        public String message() {
            return work + ": " + done + (total > 0 ? " of " + total : "") + " " + unit + ", " + perSecond + " " + unit
                    + "/s" + (etaSeconds >= 0 ? ", about " + etaSeconds + " s left" : "");
        }
    }

    /** What a start found a crashed run had left, and what it did about it ({@code action}: e.g. "discarded", "finished"). */
    record Recovered(String what, String path, String action, String sentence) implements StepEvent {
        public String message() {
            return sentence;
        }
    }

    /** The run's Failed (or Refused) event that follows says why in full. */
    record StepFailed(int index, int total, String kind, long tookMillis, String reason, String versionTxt)
            implements StepEvent {
        public Level level() {
            return Level.ERROR;
        }

        public String message() {
            return "step " + index + "/" + total + " did not complete after " + tookMillis
                    + " ms; version.txt still says " + versionTxt;
        }
    }

    record StepFinished(int index, int total, String kind, long tookMillis, String versionTxt) implements StepEvent {
        public String message() {
            return "step " + index + "/" + total + " done in " + tookMillis + " ms; version.txt = " + versionTxt;
        }
    }

    record StepStarted(int index, int total, String kind, String description) implements StepEvent {
        public String message() {
            return "step " + index + "/" + total + ": " + description;
        }
    }

    /** version.txt was rewritten (atomically). */
    record VersionRecorded(String version) implements StepEvent {
        public String message() {
            return "version.txt = " + version;
        }
    }

    /** member/ was copied into a work dir: a step that must leave the original alone until its swap works there. */
    record WorkCopied(String from, String to, long bytes) implements StepEvent {
        public String message() {
            return "copied " + from + " to " + to + "; the original stays untouched until the swap";
        }
    }

    /** A step that did not finish left half-made copies; they were removed (a complete staging stays). */
    record WorkDiscarded(int index, int total, String dataDir, List<String> removed) implements StepEvent {
        public WorkDiscarded {
            removed = List.copyOf(removed);
        }

        public String message() {
            return "step " + index + "/" + total + " did not finish: removed what it left in " + dataDir + ": "
                    + String.join(", ", removed);
        }
    }
}
