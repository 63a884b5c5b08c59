package dev.etcdmigrate.event;

import java.util.List;

/**
 * A cluster member's rollout across several minors (docs/ha.md): its chain of legs, what it waits for while it
 * serves between them, the cluster's restart record it takes, releases or deletes for a finished holder.
 */
public sealed interface RolloutEvent extends Event {

    /** A cluster member's plan crosses several minors: it walks them one restart (leg) at a time, serving between. */
    record RolloutChainPlanned(String member, String chain, int legs) implements RolloutEvent {
        public String message() {
            return "member " + member + " walks " + chain + " in " + legs
                    + " restarts, serving as the real member between them until the cluster allows the next";
        }
    }

    /** The member serves and waits: the cluster does not allow its next restart yet ({@code members}: who it waits for). */
    record RolloutWaiting(String member, String leg, String why, List<String> members) implements RolloutEvent {
        public String message() {
            return "member " + member + " waits before its restart " + leg + ": " + why;
        }
    }

    /** This runner holds the cluster's restart record: it may stop its member now (every other member serves). */
    record RestartRecordTaken(String holder, String from, String to, long revision) implements RolloutEvent {
        public String message() {
            return "member " + holder + " holds the restart record (revision " + revision + ") and every other member"
                    + " serves: restarting it " + from + " -> " + to;
        }
    }

    /** The holder's member runs the new line and took a quorum write: the next member may restart. */
    record RestartRecordReleased(String holder, String to, long revision, boolean deleted) implements RolloutEvent {
        public String message() {
            return deleted
                    ? "member " + holder + " runs " + to + " and released the restart record (revision " + revision
                            + ")"
                    : "member " + holder + " runs " + to + "; its restart record (revision " + revision
                            + ") was already released by another member's runner";
        }
    }

    /** Another runner's record whose member already answers at the line it names (its runner exec'd or crashed): deleted. */
    record RestartRecordTakenOver(String holder, String to, long revision) implements RolloutEvent {
        public String message() {
            return "member " + holder + " answers at " + to + ", so its restart is over: its record (revision "
                    + revision + ") was deleted for it";
        }
    }

    /** Between two restarts the runner runs etcd as the real member (its arguments, URLs, environment), supervised. */
    record MemberServing(String version, long pid, String nextLeg) implements RolloutEvent {
        public String message() {
            return "etcd " + version + " (pid " + pid + ") serves as the real member until the cluster allows "
                    + nextLeg;
        }
    }

    /**
     * A member added to its cluster with an empty data dir ({@code --initial-cluster-state=existing}) whose target's
     * line is not the cluster's ({@code why}: the cluster version, or the downgrade job's target): etcd refuses a
     * member whose version the cluster does not take, after it already received the leader's snapshot. It joins at
     * the cluster's line with that line's etcd ({@code version}) first, then walks to {@code target} from its data.
     */
    record JoiningAtClusterLine(String member, String line, String why, String version, String target)
            implements RolloutEvent {
        public String message() {
            return "member " + member + " joins its cluster with an empty data dir and the cluster runs " + line + " ("
                    + why + "), which a member at " + target + " cannot join: joining at the cluster's line " + line
                    + " first (etcd " + version + "), then walking to " + target + " from the data it receives";
        }
    }

    /**
     * The member that joined at the cluster's line caught up ({@code proof}: a linearizable read served through its
     * own client URL, or a learner's applied index at the leader's commit index).
     */
    record JoinedAtClusterLine(String member, String version, long millis, String proof) implements RolloutEvent {
        public String message() {
            return "member " + member + " joined at etcd " + version + " and caught up with its cluster in " + millis
                    + " ms (" + proof + "); stopping it to walk its legs";
        }
    }
}
