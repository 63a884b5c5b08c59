package dev.etcdmigrate.event;

import java.util.List;

/**
 * The bundled etcd releases put in the bin dir: from where, and checked against which pins.
 */
public sealed interface ProvisionEvent extends Event {

    /**
     * A release's inputs and binaries matched their pins ({@code hashes} compared), or, with {@code recorded},
     * were written as the new pins of {@code platform}.
     */
    record ProvisionPins(String version, String platform, int hashes, boolean recorded) implements ProvisionEvent {
        public String message() {
            return recorded
                    ? "etcd " + version + " (" + platform + "): recorded " + hashes + " pins"
                    : "etcd " + version + " (" + platform + "): " + hashes + " hashes matched their pins";
        }
    }

    /** A source was asked for a release: {@code outcome} "trying" or "skipped" (with the reason). */
    record ProvisionSource(String version, String from, String outcome, String reason) implements ProvisionEvent {
        public String message() {
            return "etcd " + version + ": "
                    + (outcome.equals("trying") ? "trying " + from : from + " skipped: " + reason);
        }
    }

    /** A release's binaries in the bin dir: {@code how} "installed" from {@code from}, or "already" there. */
    record Provisioned(String version, String binDir, List<String> binaries, String how, String from)
            implements ProvisionEvent {
        public Provisioned {
            binaries = List.copyOf(binaries);
        }

        public String message() {
            return how.equals("already")
                    ? "etcd " + version + ": already provisioned in " + binDir + " (" + from + ")"
                    : "etcd " + version + ": installed " + String.join(", ", binaries) + " from " + from;
        }
    }
}
