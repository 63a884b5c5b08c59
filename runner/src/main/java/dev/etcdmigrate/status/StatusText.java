package dev.etcdmigrate.status;

import dev.etcdmigrate.status.StatusReport.MemberRow;
import java.util.ArrayList;
import java.util.List;

/** {@code status}'s text: the verdict first, then one line per member, the cluster, the record. Renders only. */
public final class StatusText {

    private StatusText() {}

    public static String render(StatusReport r) {
        List<String> lines = new ArrayList<>();
        lines.add(r.summary());
        lines.add("target " + r.target().orElse("(not given: --target-version or TARGET_VERSION)")
                + ", cluster version " + r.clusterVersion().orElse("unknown")
                + ", downgrade job " + r.downgradeJob().map(j -> "to " + j).orElse("none")
                + " (asked " + String.join(", ", r.endpoints()) + ")");
        for (MemberRow m : r.members()) {
            if (!m.answers()) {
                lines.add("  " + m.name() + ": does not answer (" + m.problem() + ")");
                continue;
            }
            lines.add("  " + m.name() + ": etcd " + m.etcdVersion().orElse("?")
                    + ", line " + m.line().orElse("?")
                    + ", storage version " + m.storageVersion().orElse("(not reported)")
                    + (m.leader() ? ", leader" : "")
                    + ", raft index " + m.raftIndex() + " (lag " + m.raftLag() + ")"
                    + m.nextLeg().map(l -> "; next " + l).orElse("")
                    + m.waitsFor().map(w -> "; waits for: " + w).orElse(""));
        }
        r.record()
                .ifPresentOrElse(
                        rec -> {
                            lines.add("restart record: held by " + rec.holder() + " for " + rec.from() + " -> "
                                    + rec.to()
                                    + (rec.serves().isEmpty()
                                            ? ""
                                            : " (it serves on " + String.join(", ", rec.serves()) + ")")
                                    + " since " + rec.since() + " (" + rec.age().toSeconds() + " s), revision "
                                    + rec.modRevision());
                            rec.stale().ifPresent(s -> lines.add("  stale: " + s));
                            rec.removeCommand()
                                    .ifPresent(c -> lines.add("  remove it (only if it compares equal):\n    " + c));
                        },
                        () -> lines.add("restart record: none"));
        if (r.clusterIds().size() > 1) {
            lines.add("clusters answering: " + String.join(", ", r.clusterIds()));
            r.answers()
                    .forEach(a -> lines.add("  " + (a.name().isEmpty() ? "(unnamed)" : a.name()) + " on " + a.url()
                            + ": cluster " + a.clusterId() + ", member " + a.memberId()));
        }
        r.restore().ifPresent(restore -> {
            lines.add("restore of snapshot " + restore.sha256() + " (token " + restore.token() + ", cluster "
                    + restore.clusterId() + "): " + restore.restored() + " of "
                    + restore.members().size()
                    + " members restored");
            for (StatusReport.RestoreMember m : restore.members()) {
                String state = switch (m.state()) {
                    case RESTORED -> "restored";
                    case NOT_RESTORED -> "not restored";
                    case NOT_ANSWERING -> "not known to be restored";
                };
                lines.add(
                        "  " + m.name() + " (member " + m.memberId() + " once restored): " + state + ", " + m.detail());
            }
            restore.others().forEach(o -> lines.add("  asked too: " + o));
        });
        return String.join("\n", lines);
    }
}
