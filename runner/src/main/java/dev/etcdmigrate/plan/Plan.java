package dev.etcdmigrate.plan;

import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.version.DataVersion;
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

    /** The plan as the operator reads it, one line per step. */
    public List<String> describe() {
        List<String> lines = new ArrayList<>();
        lines.add("plan " + current + " -> " + target + ": " + (steps.isEmpty() ? "no etcd needs to run" : steps.size() + " step(s)"));
        for (int i = 0; i < steps.size(); i++) {
            lines.add("  " + (i + 1) + ". " + steps.get(i).describe() + " [then version.txt = " + steps.get(i).result() + "]");
        }
        if (steps.isEmpty() && !current.equals(target)) {
            lines.add("  same minor line and storage: record " + target + " in version.txt");
        }
        return lines;
    }
}
