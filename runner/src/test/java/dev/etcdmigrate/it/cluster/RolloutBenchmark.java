package dev.etcdmigrate.it.cluster;

import dev.etcdmigrate.datadir.Trees;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The rollout figures of docs/benchmarks.md ("A cluster rollout across several minors"), side by side in one run:
 * 3.4 -> 3.7 on three members on separate hosts (network namespaces, root), as one chained rollout of three edits
 * and as nine one-minor rollouts, alternating, {@code runs} times each (argument 1, default 1). Each rollout has every
 * check of HaRolloutIT's. Prints one line per rollout and the medians. Run by scripts/bench-rollout.sh.
 */
public final class RolloutBenchmark {

    private RolloutBenchmark() {}

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 1;
        List<HaRolloutIT.Edits> kinds = List.of(HaRolloutIT.Edits.ONE_AT_A_TIME, HaRolloutIT.Edits.ONE_MINOR_ROLLOUTS);
        List<List<HaRolloutIT.Figures>> figures = new ArrayList<>();
        kinds.forEach(k -> figures.add(new ArrayList<>()));
        for (int run = 0; run < runs; run++) {
            for (int k = 0; k < kinds.size(); k++) {
                Path dir = Files.createTempDirectory("rollout-bench");
                try {
                    HaRolloutIT.Figures f = new HaRolloutIT().benchmark(dir, kinds.get(k));
                    figures.get(k).add(f);
                    System.out.printf(
                            "rollout-bench run %d %s: total %.1f s, out of service %s s%n",
                            run + 1, label(kinds.get(k)), f.totalMillis() / 1000.0, seconds(f.outMillis()));
                } finally {
                    Trees.deleteRecursively(dir);
                }
            }
        }
        System.out.println(
                "| 3.4.23 -> 3.7.3, edits one member at a time after it serves | total | m0 out | m1 out | m2 out |");
        System.out.println("|---|---|---|---|---|");
        for (int k = 0; k < kinds.size(); k++) {
            List<HaRolloutIT.Figures> of = figures.get(k);
            StringBuilder row = new StringBuilder("| " + label(kinds.get(k)) + " (median of " + of.size() + ") | ");
            row.append(String.format(
                    "%.1f s |",
                    median(of.stream()
                                    .mapToLong(HaRolloutIT.Figures::totalMillis)
                                    .toArray())
                            / 1000.0));
            for (int m = 0; m < 3; m++) {
                int member = m;
                row.append(String.format(
                        " %.1f s |",
                        median(of.stream().mapToLong(f -> f.outMillis()[member]).toArray()) / 1000.0));
            }
            System.out.println(row);
        }
    }

    private static String label(HaRolloutIT.Edits edits) {
        return edits == HaRolloutIT.Edits.ONE_MINOR_ROLLOUTS
                ? "nine one-minor rollouts"
                : "one rollout of three edits (each runner walks 3.4 -> 3.5 -> 3.6 -> 3.7)";
    }

    private static String seconds(long[] millis) {
        return Arrays.stream(millis)
                .mapToObj(m -> String.format("%.1f", m / 1000.0))
                .toList()
                .toString();
    }

    private static double median(long[] values) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    }
}
