package dev.etcdmigrate.status;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What {@code etcd-migrate status} found: one reading of a cluster mid-rollout or at rest. A value only; {@link
 * StatusReader} builds it, {@link StatusText} and {@link StatusJson} render it and read nothing themselves.
 */
public record StatusReport(
        State state,
        String summary,
        List<String> endpoints,
        Optional<String> target,
        Optional<String> clusterVersion,
        Optional<String> downgradeJob,
        List<MemberRow> members,
        Optional<RecordRow> record,
        Optional<RestoreRow> restore,
        List<Answer> answers) {

    public StatusReport {
        members = List.copyOf(members);
        answers = List.copyOf(answers);
    }

    /** A report before (or without) every client URL's own answer ({@link #withAnswers}). */
    public StatusReport(
            State state,
            String summary,
            List<String> endpoints,
            Optional<String> target,
            Optional<String> clusterVersion,
            Optional<String> downgradeJob,
            List<MemberRow> members,
            Optional<RecordRow> record,
            Optional<RestoreRow> restore) {
        this(state, summary, endpoints, target, clusterVersion, downgradeJob, members, record, restore, List.of());
    }

    /**
     * A client URL that answered, asked on its own: the cluster ID and member ID in its answer's header (hex) and the
     * name its cluster's member list gives that member (empty when no list named it).
     */
    public record Answer(String url, String name, String clusterId, String memberId) {}

    /** The exit status {@code status} ends with; the codes are {@code error.ExitStatus}'s. */
    public enum State {
        DONE,
        ROLLING,
        STUCK
    }

    /**
     * A member as the cluster lists it and as its own client URL answered; {@code waitsFor} is what the rollout's
     * own rules say it waits for before its next restart (empty when it is at the target or no target is known).
     */
    public record MemberRow(
            String name,
            boolean answers,
            String problem,
            Optional<String> etcdVersion,
            Optional<String> line,
            Optional<String> storageVersion,
            boolean leader,
            long raftIndex,
            long raftLag,
            Optional<String> nextLeg,
            Optional<String> waitsFor) {}

    /**
     * The restart record: who holds it, for which restart, since when; {@code stale} says why no runner will release
     * it (empty when a runner still may), and {@code removeCommand} is the exact command that removes it then;
     * {@code serves} the holder's client URLs the record names (where the take-over reads it; empty in a record of
     * the release before).
     */
    public record RecordRow(
            String holder,
            String from,
            String to,
            String since,
            Duration age,
            long modRevision,
            java.util.List<String> serves,
            Optional<String> stale,
            Optional<String> removeCommand) {}

    /** No member answered for the cluster ({@code why}): nothing to say of it but that, rolling at best. */
    public static StatusReport unanswered(List<String> endpoints, Optional<String> target, String why) {
        return new StatusReport(
                State.ROLLING,
                "rolling: no member answers for the cluster (" + why + ")",
                endpoints,
                target,
                Optional.empty(),
                Optional.empty(),
                List.of(),
                Optional.empty(),
                Optional.empty());
    }

    /**
     * This report with what a restore from one snapshot shows ({@link RestoreStatus}): while a member does not serve
     * the restored cluster the cluster is not done, whatever its members on the restored cluster say.
     */
    public StatusReport withRestore(RestoreRow row) {
        State newState = state;
        String newSummary = summary;
        if (row.restored() < row.members().size() && state != State.STUCK) {
            newState = State.ROLLING;
            newSummary = row.summary();
        }
        return with(newState, newSummary, Optional.of(row), answers);
    }

    /**
     * This report with what every client URL answered on its own ({@link ClusterAnswers}). Members of more than one
     * cluster answering is never done: the cluster view above is one of them only. It is the state of a restore
     * from a snapshot on some members only (the others still on their old data, or restored from another snapshot),
     * or of endpoints that name members of two clusters; either way an operator must look, so it stays rolling
     * (stuck stays stuck) and the verdict names each cluster with its members.
     */
    public StatusReport withAnswers(List<Answer> answered) {
        Map<String, List<String>> clusters = new LinkedHashMap<>();
        for (Answer a : answered) {
            clusters.computeIfAbsent(a.clusterId(), c -> new ArrayList<>())
                    .add((a.name().isEmpty() ? "member " + a.memberId() : a.name()) + " on " + a.url());
        }
        State newState = state;
        String newSummary = summary;
        if (clusters.size() > 1) {
            List<String> each = new ArrayList<>();
            clusters.forEach((id, who) -> each.add("cluster " + id + ": " + String.join(", ", who)));
            String two = "members of " + clusters.size() + " clusters answer (" + String.join("; ", each) + "): a"
                    + " restore from a snapshot not on every member yet, or endpoints of two clusters; `status"
                    + " --restore-sha256 <the snapshot's hash>` tells which members serve the restore";
            if (state != State.STUCK) newState = State.ROLLING;
            // a restore's own verdict already says who is not restored yet
            if (restore.isEmpty()
                    || restore.get().restored() == restore.get().members().size())
                newSummary = (state == State.STUCK ? summary + "; " : "rolling: ") + two;
        }
        return with(newState, newSummary, restore, answered);
    }

    /** This report with another verdict and what a restore and the client URLs showed; the cluster view kept. */
    private StatusReport with(
            State newState, String newSummary, Optional<RestoreRow> newRestore, List<Answer> newAnswers) {
        return new StatusReport(
                newState,
                newSummary,
                endpoints,
                target,
                clusterVersion,
                downgradeJob,
                members,
                record,
                newRestore,
                newAnswers);
    }

    /** The IDs of the clusters the client URLs answered for, in the order first seen. */
    public List<String> clusterIds() {
        return answers.stream().map(Answer::clusterId).distinct().toList();
    }

    /**
     * Which members serve the cluster restored from the snapshot {@code sha256} (the cluster etcd derives from the
     * restore's {@code token} and the members' peer URLs, {@code clusterId} in hex) and which do not yet;
     * {@code others} the client URLs asked that answer for no member of it, or not at all.
     */
    public record RestoreRow(
            String sha256,
            String token,
            String clusterId,
            int restored,
            List<RestoreMember> members,
            List<String> others) {

        /** The verdict's words when a member is not restored yet: who, and the per-member rows say why. */
        public String summary() {
            List<String> not = members.stream()
                    .filter(m -> m.state() != RestoreState.RESTORED)
                    .map(m -> m.name() + " ("
                            + (m.state() == RestoreState.NOT_RESTORED ? "not restored" : "does not answer") + ")")
                    .toList();
            return "restoring: " + restored + " of " + members.size() + " members serve the restore of snapshot "
                    + sha256.substring(0, 12) + " (cluster " + clusterId + "); not yet: " + String.join(", ", not);
        }
    }

    /**
     * {@code RESTORED}: it answers as the member the restore made of it, in the restored cluster; {@code NOT_RESTORED}:
     * it answers for another cluster (its data from before the restore, or another snapshot's restore), or the
     * restored cluster has never heard from it; {@code NOT_ANSWERING}: nothing answers for it, so no one can tell
     * (a member waits for a quorum before it answers at all).
     */
    public enum RestoreState {
        RESTORED,
        NOT_RESTORED,
        NOT_ANSWERING
    }

    /**
     * A member of the restored cluster: {@code memberId} the ID the restore gives it; {@code answeredCluster} and
     * {@code answeredMember} what its client URL {@code url} answered (hex; empty when nothing did, and then
     * {@code url} is where nothing answered, if any URL of it is known).
     */
    public record RestoreMember(
            String name,
            RestoreState state,
            String memberId,
            Optional<String> url,
            Optional<String> answeredCluster,
            Optional<String> answeredMember,
            String detail) {}
}
