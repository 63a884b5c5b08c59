package dev.etcdmigrate.plan;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.step.MinorUpgrade;
import dev.etcdmigrate.step.OnlineDowngrade;
import dev.etcdmigrate.step.PatchFloor;
import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.version.MinorLine;
import java.util.ArrayList;
import java.util.List;

/**
 * A cluster member's plan cut into legs of one minor each: a leg is the steps up to and including one step
 * that changes the minor line (a patch floor rides with the minor it prepares). Between two legs the member
 * serves at the leg's line as the real member until the cluster allows the next restart ({@code cluster}).
 * A plan that crosses no minor (a patch, a restart) is one leg or none.
 */
public record RolloutChain(List<Leg> legs) {

    public RolloutChain {
        legs = List.copyOf(legs);
    }

    /** One restart of the member: its steps, the line it starts from and the line it ends at. */
    public record Leg(MinorLine from, MinorLine to, List<Step> steps) {
        public Leg {
            steps = List.copyOf(steps);
        }

        public boolean upgrade() {
            return from.isOlderThan(to);
        }

        /** The release the leg ends at: its member serves it after the leg (or execs it, the last leg). */
        public Release arrival() {
            return switch (steps.getLast()) {
                case MinorUpgrade up -> up.release();
                case OnlineDowngrade down -> down.older();
                case PatchFloor floor -> floor.release();
                default -> throw new IllegalStateException("a leg ends with the step that crosses its minor");
            };
        }

        @Override
        public String toString() {
            return from + " -> " + to;
        }
    }

    public static RolloutChain of(Plan plan) {
        List<Leg> legs = new ArrayList<>();
        List<Step> pending = new ArrayList<>();
        MinorLine at = plan.current().version().line();
        for (Step step : plan.steps()) {
            pending.add(step);
            if (crossesAMinor(step)) {
                MinorLine to = step.result().version().line();
                legs.add(new Leg(at, to, pending));
                pending = new ArrayList<>();
                at = to;
            }
        }
        if (!pending.isEmpty()) {
            legs.add(new Leg(at, at, pending)); // a patch floor alone: the target is on the same line
        }
        return new RolloutChain(legs);
    }

    static boolean crossesAMinor(Step step) {
        return step instanceof MinorUpgrade || step instanceof OnlineDowngrade;
    }

    /**
     * The chain as the plan shows it (`plan`, `inspect`'s targets): per leg the plan's steps (1-based), its patch
     * floors, the etcd it reaches, who decides its restart (leg 1 at once; the others under the cluster's restart
     * record {@code recordKey}) and what follows it. Empty unless the member restarts more than once.
     */
    public List<DecisionEvent.PlannedLeg> planned(String recordKey) {
        List<DecisionEvent.PlannedLeg> planned = new ArrayList<>();
        if (!multiLeg()) return planned;
        int step = 1;
        for (int i = 0; i < legs.size(); i++) {
            Leg leg = legs.get(i);
            int first = step;
            List<String> floors = new ArrayList<>();
            for (Step s : leg.steps()) {
                step++;
                if (s instanceof PatchFloor floor) floors.add(floor.release().version());
            }
            boolean last = i == legs.size() - 1;
            planned.add(new DecisionEvent.PlannedLeg(
                    i + 1,
                    leg.from().toString(),
                    leg.to().toString(),
                    leg.upgrade() ? "upgrade" : "downgrade",
                    first,
                    step - 1,
                    floors,
                    leg.arrival().version(),
                    i == 0 ? "at-once" : "restart-record",
                    recordKey,
                    leg.steps().getLast() instanceof OnlineDowngrade ? leg.to().toString() : "",
                    last ? "exec" : "serve",
                    last ? "" : leg.to().toString()));
        }
        return planned;
    }

    /** More than one restart: the member serves between legs. */
    public boolean multiLeg() {
        return legs.size() > 1;
    }

    /** The lines the member serves on the way, target included, e.g. [3.5, 3.6, 3.7]. */
    public List<MinorLine> lines() {
        return legs.stream().map(Leg::to).toList();
    }

    /** "3.4 -> 3.5 -> 3.6 -> 3.7" for the plan's output; empty when there is no leg. */
    public String describe() {
        if (legs.isEmpty()) return "";
        StringBuilder text = new StringBuilder(legs.getFirst().from().toString());
        for (Leg leg : legs) {
            if (!leg.to().equals(leg.from())) text.append(" -> ").append(leg.to());
        }
        return text.toString();
    }
}
