package dev.etcdmigrate.plan;

import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.version.DataVersion;
import java.util.ArrayList;
import java.util.List;

/** The ordered steps from the data's version to the target; empty when only version.txt changes. */
public record Plan(DataVersion current, DataVersion target, List<Step> steps) {

    public Plan {
        steps = List.copyOf(steps);
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
