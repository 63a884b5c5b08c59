package dev.etcdmigrate.plan;

import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.step.MinorUpgrade;
import dev.etcdmigrate.step.PatchFloor;
import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import java.util.ArrayList;
import java.util.List;

/**
 * The ordered steps from the data's version to the target. No steps: only version.txt may change (the
 * no-op, or a patch of the same line); {@code fresh}: the data dir holds no etcd data, so the target
 * etcd initializes it and version.txt records the target.
 */
public record Plan(DataVersion current, DataVersion target, List<Step> steps, boolean fresh) {

    public Plan {
        steps = List.copyOf(steps);
    }

    public Plan(DataVersion current, DataVersion target, List<Step> steps) {
        this(current, target, steps, false);
    }

    static Plan fresh(DataVersion target) {
        return new Plan(target, target, List.of(), true);
    }

    /**
     * The same plan, its last step's etcd leaving a snapshot ({@code --snapshot-count=1}) where that step
     * is an etcd3 minor upgrade. 3.4 and 3.5 keep a member list in the v2 store, which a restart without a
     * snapshot refills only by replaying the WAL: the target etcd then does not know it is alone, waits a
     * whole election timeout (1 s by default) before it serves, where it elects itself at once after a
     * snapshot (1.84-1.96 s against 0.34-0.75 s to the first write of an exec'd 3.5, docs/benchmarks.md).
     * For a lone member only: a cluster member waits for its peers anyway, and a rejoin that fails must
     * leave the files as they were (a restarted member applies its committed log, and a snapshot follows).
     */
    public Plan withSnapshotForTheTarget() {
        if (steps.isEmpty() || !(steps.getLast() instanceof MinorUpgrade last) || last.storage() != StorageApi.ETCD3) {
            return this;
        }
        List<Step> withSnapshot = new ArrayList<>(steps);
        withSnapshot.set(withSnapshot.size() - 1, last.withSnapshotForNext());
        return new Plan(current, target, withSnapshot, fresh);
    }

    /**
     * For a member of a cluster: a minor upgrade whose line needs the previous line's snapshot first (3.7) and that
     * follows another minor upgrade runs its own snapshotter instead of relying on that step's snapshot. Walking
     * several minors, the member serves as the real member between the two (ClusterRollout), and its WAL gains
     * entries after that snapshot, in the v2 request format while the cluster still ran 3.5: etcd 3.7.3 panicked
     * replaying them ("unmarshal should never fail", ThreeNodeCheck, 3.4 -> 3.7 with every manifest edited at once).
     */
    public Plan withSnapshotterAfterServing() {
        List<Step> out = new ArrayList<>(steps);
        for (int i = 1; i < out.size(); i++) {
            if (out.get(i) instanceof MinorUpgrade up
                    && up.storage() == StorageApi.ETCD3
                    && up.snapshotter().isEmpty()
                    && !up.v2JudgedAtStart()
                    && up.release().line().upgrade().previousSnapshotFirst()
                    && out.get(i - 1) instanceof MinorUpgrade prev
                    && prev.storage() == StorageApi.ETCD3) {
                out.set(i, up.withSnapshotter(prev.release()));
            }
        }
        return new Plan(current, target, out, fresh);
    }

    /**
     * The same plan where a step to 3.6 follows a step that ran 3.5 on the data: that step leaves a snapshot
     * after its last entries, and 3.6 starts first and judges the v2 content itself (see
     * {@code MinorUpgrade}); {@code etcdutl check v2store}, which reads every WAL segment (0.45-0.69 s at
     * 100 MiB-1 GiB), runs only after 3.6 refused; the data is still 3.5 data then (UpgradeIT). For a lone
     * member only, for the reason above, and only where the operator's flags leave etcd's v2 check alone
     * ({@code --v2-deprecation}).
     */
    public Plan withV2JudgedAtStart() {
        List<Step> judged = new ArrayList<>(steps);
        for (int i = 1; i < judged.size(); i++) {
            if (!(judged.get(i) instanceof MinorUpgrade up) || !up.canJudgeV2AtStart()) continue;
            var checkerLine = up.v2Checker().orElseThrow().minorLine();
            Step before = switch (judged.get(i - 1)) {
                case MinorUpgrade prev
                when prev.storage() == StorageApi.ETCD3
                        && prev.release().minorLine().equals(checkerLine) -> prev.withSnapshotForNext();
                case PatchFloor prev when prev.release().minorLine().equals(checkerLine) -> prev.withSnapshotForNext();
                default -> null;
            };
            if (before == null) continue;
            judged.set(i - 1, before);
            judged.set(i, up.withV2JudgedAtStart());
        }
        return new Plan(current, target, judged, fresh);
    }

    /**
     * The plan as data (`plan -o json`, the plan-made event); its {@code message()} is the one way a plan
     * is rendered for the operator. {@code memberBytes} sizes each step's disk need; {@code freshDir} says
     * what a fresh data dir is ("DIR does not exist"), used only when {@link #fresh}.
     */
    public DecisionEvent.PlanMade event(long memberBytes, String freshDir) {
        return event(memberBytes, freshDir, List.of());
    }

    /** The same, with the legs a cluster member walks the plan in ({@link RolloutChain#planned}). */
    public DecisionEvent.PlanMade event(long memberBytes, String freshDir, List<DecisionEvent.PlannedLeg> legs) {
        List<DecisionEvent.PlannedStep> planned = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            Step step = steps.get(i);
            planned.add(new DecisionEvent.PlannedStep(
                    i + 1,
                    step.kind(),
                    step.describe(),
                    step.result().toString(),
                    step.extraDisk(memberBytes),
                    step.keeps()));
        }
        return new DecisionEvent.PlanMade(
                fresh ? "" : current.toString(), target.toString(), planned, fresh ? freshDir : "", legs);
    }
}
