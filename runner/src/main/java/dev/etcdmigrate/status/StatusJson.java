package dev.etcdmigrate.status;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.etcdmigrate.status.StatusReport.MemberRow;
import java.util.Optional;

/** {@code status -o json}: the report as one JSON object (docs/ha.md, "Watching a rollout"). Renders only. */
public final class StatusJson {

    private static final ObjectMapper JSON = new ObjectMapper();

    private StatusJson() {}

    public static String render(StatusReport r) {
        ObjectNode root = JSON.createObjectNode();
        root.put("state", r.state().name().toLowerCase(java.util.Locale.ROOT));
        root.put("summary", r.summary());
        ArrayNode endpoints = root.putArray("endpoints");
        r.endpoints().forEach(endpoints::add);
        put(root, "target", r.target());
        put(root, "clusterVersion", r.clusterVersion());
        put(root, "downgradeJob", r.downgradeJob());
        ArrayNode members = root.putArray("members");
        for (MemberRow m : r.members()) {
            ObjectNode node = members.addObject();
            node.put("name", m.name());
            node.put("answers", m.answers());
            if (!m.answers()) node.put("problem", m.problem());
            put(node, "etcdVersion", m.etcdVersion());
            put(node, "line", m.line());
            put(node, "storageVersion", m.storageVersion());
            node.put("leader", m.leader());
            node.put("raftIndex", m.raftIndex());
            node.put("raftLag", m.raftLag());
            put(node, "nextLeg", m.nextLeg());
            put(node, "waitsFor", m.waitsFor());
        }
        r.record()
                .ifPresentOrElse(
                        rec -> {
                            ObjectNode node = root.putObject("record");
                            node.put("holder", rec.holder());
                            node.put("from", rec.from());
                            node.put("to", rec.to());
                            node.put("since", rec.since());
                            node.put("ageSeconds", rec.age().toSeconds());
                            node.put("modRevision", rec.modRevision());
                            if (!rec.serves().isEmpty()) {
                                var serves = node.putArray("serves");
                                rec.serves().forEach(serves::add);
                            }
                            put(node, "stale", rec.stale());
                            put(node, "removeCommand", rec.removeCommand());
                        },
                        () -> root.putNull("record"));
        // every client URL's own answer: which cluster each member answers for (two IDs: two clusters answer)
        ArrayNode answers = root.putArray("answers");
        for (StatusReport.Answer a : r.answers()) {
            ObjectNode node = answers.addObject();
            node.put("url", a.url());
            if (!a.name().isEmpty()) node.put("name", a.name());
            node.put("clusterId", a.clusterId());
            node.put("memberId", a.memberId());
        }
        r.restore().ifPresent(restore -> {
            ObjectNode node = root.putObject("restore");
            node.put("sha256", restore.sha256());
            node.put("token", restore.token());
            node.put("clusterId", restore.clusterId());
            node.put("restored", restore.restored());
            ArrayNode rows = node.putArray("members");
            for (StatusReport.RestoreMember m : restore.members()) {
                ObjectNode row = rows.addObject();
                row.put("name", m.name());
                row.put(
                        "state",
                        m.state().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
                row.put("memberId", m.memberId());
                put(row, "url", m.url());
                put(row, "answeredCluster", m.answeredCluster());
                put(row, "answeredMember", m.answeredMember());
                row.put("detail", m.detail());
            }
            ArrayNode others = node.putArray("others");
            restore.others().forEach(others::add);
        });
        return root.toString();
    }

    /** An absent value is left out, never written as null (the JSON logs' rule). */
    private static void put(ObjectNode node, String field, Optional<String> value) {
        value.ifPresent(v -> node.put(field, v));
    }
}
