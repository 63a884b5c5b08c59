package dev.etcdmigrate.inspect;

import dev.etcdmigrate.event.DecisionEvent;

/** {@code inspect}'s text: the report for a reader, one line per fact. Renders only: it reads nothing. */
public final class InspectText {

    private InspectText() {}

    public static String render(InspectReport r) {
        StringBuilder b = new StringBuilder();
        b.append("data dir ")
                .append(r.dataDir())
                .append(" (")
                .append(r.access())
                .append(")\n");
        if (!r.holdsEtcdData()) {
            b.append("  holds no etcd data\n");
        }
        b.append("  written by: ")
                .append(r.writtenBy() == null ? "unknown" : "etcd " + r.writtenBy())
                .append(" (")
                .append(r.storage() == null ? "no etcd storage" : r.storage())
                .append(")")
                .append(r.floor() != null && !r.floor().equals(r.writtenBy()) ? "; cluster at " + r.floor() : "")
                .append(r.pinned() ? "" : "; the data does not pin its line")
                .append('\n');
        b.append("  evidence:\n");
        for (InspectReport.EvidenceItem e : r.evidence()) {
            b.append("    - ")
                    .append(e.where())
                    .append(": ")
                    .append(e.found())
                    .append(e.line() == null ? "" : " (etcd " + e.line() + "+)")
                    .append('\n');
        }
        b.append("  label: ")
                .append(r.label().source())
                .append(r.label().value() == null ? "" : " " + r.label().value())
                .append(" -> ")
                .append(r.label().verdict())
                .append(": ")
                .append(r.label().reason())
                .append('\n');
        b.append("  cluster version: ")
                .append(
                        r.clusterVersion() == null
                                ? "not recorded"
                                : r.clusterVersion() + " (" + r.clusterVersionFrom() + ")")
                .append("; storage version: ")
                .append(r.storageVersion() == null ? "not recorded" : r.storageVersion())
                .append('\n');
        b.append("  cluster ID: ")
                .append(r.clusterId() == null ? "unknown" : r.clusterId())
                .append("; member ID: ")
                .append(r.memberId() == null ? "unknown" : r.memberId())
                .append('\n');
        b.append("  members (").append(r.members().size()).append("):\n");
        for (InspectReport.MemberItem m : r.members()) {
            b.append("    - ")
                    .append(m.id())
                    .append(' ')
                    .append(m.name().isEmpty() ? "(unnamed)" : m.name())
                    .append(' ')
                    .append(String.join(",", m.peerUrls()))
                    .append(m.learner() ? " (learner)" : "")
                    .append('\n');
        }
        if (r.db() != null) {
            b.append("  db: ")
                    .append(r.db().path())
                    .append(", ")
                    .append(r.db().bytes())
                    .append(" bytes")
                    .append(r.db().bytesInUse() == null ? "" : ", " + r.db().bytesInUse() + " in use")
                    .append('\n');
        }
        b.append("  alarms: ")
                .append(
                        r.alarms().isEmpty()
                                ? "none"
                                : String.join(
                                        ", ",
                                        r.alarms().stream()
                                                .map(a -> a.type() + " of member " + a.memberId())
                                                .toList()))
                .append('\n');
        b.append("  WAL: ")
                .append(
                        r.wal() == null
                                ? "none found"
                                : r.wal().dir() + ", " + r.wal().segments() + " segment(s)")
                .append('\n');
        b.append("  v2 store: ")
                .append(r.v2().keysOutsideMembership())
                .append(" key(s) outside membership in the snapshot, ")
                .append(r.v2().v2WritesInWal())
                .append(" v2 write(s) in the WAL")
                .append(
                        r.v2().linesRefusingIt().isEmpty()
                                ? ""
                                : " (etcd " + String.join(", ", r.v2().linesRefusingIt())
                                        + " refuses to start on such content)")
                .append('\n');
        if (r.downgradeTarget() != null)
            b.append("  downgrade in progress, target ")
                    .append(r.downgradeTarget())
                    .append('\n');
        b.append("  backups: ").append(r.backups().isEmpty() ? "none" : "").append('\n');
        for (InspectReport.Backup k : r.backups()) {
            b.append("    - ")
                    .append(k.path())
                    .append(k.version() == null ? "" : " (" + k.version() + ")")
                    .append('\n');
        }
        if (r.damage() == null) {
            b.append("  damage: none found\n");
        } else {
            b.append("  damage (").append(r.damage().changed()).append("):\n");
            for (String f : r.damage().files()) b.append("    - ").append(f).append('\n');
            b.append("    way back: ").append(r.damage().wayBack()).append('\n');
        }
        b.append("  targets:\n");
        for (InspectReport.Target t : r.targets()) {
            b.append("    - ")
                    .append(t.version())
                    .append('/')
                    .append(t.storage())
                    .append(": ");
            if (t.refused() != null) {
                b.append("refused: ").append(t.refused()).append('\n');
            } else if (t.steps().isEmpty()) {
                b.append(r.holdsEtcdData() ? "no step (a restart)\n" : "no step (a NEW, EMPTY cluster)\n");
            } else {
                b.append(t.steps().size())
                        .append(" step(s): ")
                        .append(String.join("; ", t.steps()))
                        .append('\n');
                if (!t.legs().isEmpty()) {
                    b.append("      a cluster member walks it in ")
                            .append(t.legs().size())
                            .append(" restarts:\n");
                    for (DecisionEvent.PlannedLeg leg : t.legs())
                        b.append("      ").append(leg.message()).append('\n');
                }
            }
        }
        return b.toString().stripTrailing();
    }
}
