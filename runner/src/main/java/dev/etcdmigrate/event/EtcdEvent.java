package dev.etcdmigrate.event;

import java.util.List;

/**
 * The private etcds a step starts and the one-shot tools it runs (etcdctl, etcdutl), with what they print
 * and report.
 */
public sealed interface EtcdEvent extends Event {

    /** A NOSPACE alarm of this member, found on arrival, was disarmed (the private etcd's quota leaves the db room). */
    record AlarmDisarmed(String type, String memberId, long dbBytes, long quotaBytes, long neededQuotaBytes)
            implements EtcdEvent {
        public Level level() {
            return Level.WARN;
        }

        public String message() {
            return "the data carried a " + type
                    + " alarm of this member (raised before this run, when its db reached the quota it"
                    + " ran with): the db is " + Bytes.mib(dbBytes) + " and this migration's etcd runs with a quota of "
                    + Bytes.mib(quotaBytes)
                    + ", so it was disarmed. Give the target etcd --quota-backend-bytes of at least " + neededQuotaBytes
                    + " or it raises the alarm again";
        }
    }

    /** One line a child process printed; {@code source} is the program and version ("etcd-3.6.16"). */
    record ChildOutput(String source, String line, boolean important) implements EtcdEvent {
        public String message() {
            return line;
        }
    }

    record EtcdAcceptedWrite(String version, long afterMillis) implements EtcdEvent {
        public String message() {
            return "etcd-" + version + " accepted a write after " + afterMillis + " ms";
        }
    }

    /** A private etcd reported a cluster-wide state a step waits for ({@code what}: cluster-version, storage-version, downgrade). */
    record EtcdReported(String version, String what, String value) implements EtcdEvent {
        public String message() {
            return "etcd " + version + " reports " + what + " " + value;
        }
    }

    record EtcdStarted(String version, String dataDir, String clientUrl, String peerUrl, boolean rejoining, long pid)
            implements EtcdEvent {
        public String message() {
            return "starting etcd " + version + " on " + dataDir + " (client " + clientUrl + ", peer " + peerUrl
                    + (rejoining ? ", rejoining its cluster's peers" : "") + ")";
        }
    }

    record EtcdStopped(String version, boolean clean, long exitCode) implements EtcdEvent {
        public Level level() {
            return clean ? Level.INFO : Level.WARN;
        }

        public String message() {
            return "etcd-" + version + (clean ? " stopped cleanly" : " stopped with exit code " + exitCode);
        }
    }

    /**
     * A private etcd rejoining its cluster cannot get in: {@code kind} of what etcd logged (e.g. address-not-local,
     * tls-unknown-ca, peers-refuse), whether that alone decides, how long it had no leader, and etcd's line.
     */
    record RejoinFailed(String version, String kind, boolean definitive, long leaderlessSeconds, String etcdLine)
            implements EtcdEvent {
        public Level level() {
            return Level.ERROR;
        }

        public String message() {
            return "etcd " + version + " cannot rejoin its cluster (" + kind
                    + (definitive ? "" : ", no leader for " + leaderlessSeconds + " s") + "): " + etcdLine;
        }
    }

    /** A one-shot tool (etcdctl, etcdutl) ran; its arguments name no key value. */
    record ToolRan(String tool, List<String> args, int exitCode, long tookMillis) implements EtcdEvent {
        public ToolRan {
            args = List.copyOf(args);
        }

        public String message() {
            return tool + " " + String.join(" ", args) + ": exit " + exitCode + " after " + tookMillis + " ms";
        }
    }
}
