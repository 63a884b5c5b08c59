package dev.etcdmigrate.cli;

import java.util.Collection;
import java.util.Optional;

/** The known word nearest a mistyped one ({@code --target-verison} -> {@code --target-version}), for usage errors. */
public final class Nearest {

    private Nearest() {}

    /**
     * The candidate closest to {@code typed} by edit distance (a swap of two neighbours counts as one edit), if it is
     * close enough to be a typo: at most 1 edit for short words, up to a third of the word's length for long ones.
     */
    public static Optional<String> to(String typed, Collection<String> candidates) {
        String best = null;
        int bestDistance = Integer.MAX_VALUE;
        for (String c : candidates) {
            int d = distance(typed, c);
            if (d < bestDistance) {
                best = c;
                bestDistance = d;
            }
        }
        int allowed = Math.max(1, Math.min(3, typed.length() / 3));
        // a prefix of a flag (--target) is a typo of it too
        if (best != null && bestDistance > allowed) {
            for (String c : candidates) {
                if (typed.length() >= 3 && c.startsWith(typed)) return Optional.of(c);
            }
        }
        return best != null && bestDistance <= allowed ? Optional.of(best) : Optional.empty();
    }

    /** Optimal string alignment distance: insertions, deletions, substitutions and swaps of neighbours. */
    static int distance(String a, String b) {
        int[][] d = new int[a.length() + 1][b.length() + 1];
        for (int i = 0; i <= a.length(); i++) d[i][0] = i;
        for (int j = 0; j <= b.length(); j++) d[0][j] = j;
        for (int i = 1; i <= a.length(); i++) {
            for (int j = 1; j <= b.length(); j++) {
                int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                d[i][j] = Math.min(Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1), d[i - 1][j - 1] + cost);
                if (i > 1 && j > 1 && a.charAt(i - 1) == b.charAt(j - 2) && a.charAt(i - 2) == b.charAt(j - 1)) {
                    d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
                }
            }
        }
        return d[a.length()][b.length()];
    }
}
