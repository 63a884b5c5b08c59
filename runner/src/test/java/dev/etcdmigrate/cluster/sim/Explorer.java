package dev.etcdmigrate.cluster.sim;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Drives {@link Sim}s: seeded random schedules, an exhaustive search with state hashing, replay of a recorded
 * schedule, and the shrinking of a failing one. A schedule is the list of actions taken; replayed, an action that is
 * not enabled at its turn is skipped, and after the list a fair completion (each runner, edit and restart in turn, no
 * fault) runs, so a shrunk schedule keeps only the choices that matter.
 */
final class Explorer {

    /** Steps after the edits are made and the faults spent within which every run must converge (liveness). */
    static final int CONVERGE_WITHIN = 3000;

    record Outcome(String violation, List<String> schedule, int steps) {
        boolean failed() {
            return violation != null;
        }
    }

    private Explorer() {}

    /** One seeded random schedule: runners' calls chosen uniformly, each fault with a small chance per step. */
    static Outcome random(Sim.Config config, long seed) {
        return random(config, seed, 40);
    }

    /**
     * Runs {@code work} on a virtual thread, as the runners' threads are: the baton passes between them as between
     * coroutines on one carrier, where a platform thread handing it to a virtual one and back paid two thread switches
     * of the OS per step (3.6 -> 3.5 all at once exhaustively: 42.7 s against 79.4 s, same load).
     */
    static <T> T onVirtual(java.util.function.Supplier<T> work) {
        if (Thread.currentThread().isVirtual()) return work.get();
        java.util.concurrent.atomic.AtomicReference<T> result = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<Throwable> thrown =
                new java.util.concurrent.atomic.AtomicReference<>();
        Thread t = Thread.ofVirtual().start(() -> {
            try {
                result.set(work.get());
            } catch (Throwable e) {
                thrown.set(e);
            }
        });
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        if (thrown.get() instanceof RuntimeException e) throw e;
        if (thrown.get() instanceof Error e) throw e;
        if (thrown.get() != null) throw new IllegalStateException(thrown.get());
        return result.get();
    }

    /** {@link #random(Sim.Config, long)} with a fault's chance per step of one in {@code faultOneIn}. */
    static Outcome random(Sim.Config config, long seed, int faultOneIn) {
        return onVirtual(() -> randomHere(config, seed, faultOneIn));
    }

    private static Outcome randomHere(Sim.Config config, long seed, int faultOneIn) {
        Random random = new Random(seed);
        Sim sim = new Sim(config);
        try {
            while (true) {
                String violation = liveness(sim);
                if (violation != null) return new Outcome(violation, sim.trace, sim.steps);
                if (sim.converged()) return new Outcome(null, sim.trace, sim.steps);
                List<String> actions = sim.enabled();
                List<String> moves = actions.stream().filter(Explorer::move).toList();
                List<String> faults = actions.stream().filter(a -> !move(a)).toList();
                String action;
                if (!faults.isEmpty() && (moves.isEmpty() || random.nextInt(faultOneIn) == 0)) {
                    action = faults.get(random.nextInt(faults.size()));
                } else {
                    action = moves.get(random.nextInt(moves.size()));
                }
                sim.step(action);
            }
        } catch (Sim.Violation v) {
            return new Outcome(v.getMessage(), sim.trace, sim.steps);
        } finally {
            sim.close();
        }
    }

    /**
     * A runner's call, an edit, a restart, or a replaced node's way back (added, joined, promoted): what the world does
     * on its own, as opposed to a fault (a node's removal is one).
     */
    static boolean move(String action) {
        return action.startsWith("run ")
                || action.startsWith("edit ")
                || action.startsWith("restart ")
                || action.startsWith("add ")
                || action.startsWith("join ")
                || action.startsWith("promote ")
                || action.equals("end-job");
    }

    private static String liveness(Sim sim) {
        if (sim.quiet()) {
            if (sim.quietSince < 0) sim.quietSince = sim.steps;
            if (sim.steps - sim.quietSince > CONVERGE_WITHIN) {
                return "liveness: not converged " + CONVERGE_WITHIN + " steps after the edits and faults ended"
                        + " (record "
                        + (sim.recordValue == null
                                ? "none"
                                : sim.recordValue.holder() + " " + sim.recordValue.from() + " -> "
                                        + sim.recordValue.to())
                        + "; members "
                        + sim.members.stream()
                                .map(m -> m.name + "@" + m.data + "/" + m.run + " "
                                        + (m.runner == null ? "" : m.runner.pending))
                                .toList()
                        + ")";
            }
        }
        if (sim.steps > sim.config.maxSteps())
            return "liveness: not converged within " + sim.config.maxSteps() + " steps";
        if (sim.enabled().isEmpty() && !sim.converged()) {
            return "liveness: nothing can happen and the runs did not converge: " + sim.summary();
        }
        return null;
    }

    /** Replays {@code schedule}, then completes it fairly; the outcome of the whole. */
    static Outcome replay(Sim.Config config, List<String> schedule) {
        return onVirtual(() -> replayHere(config, schedule));
    }

    private static Outcome replayHere(Sim.Config config, List<String> schedule) {
        // a schedule of the exhaustive search may pass a deadline ("timeout mX")
        Sim sim = new Sim(config, false, schedule.stream().anyMatch(a -> a.startsWith("timeout ")));
        try {
            for (String action : schedule) {
                if (sim.converged()) break;
                if (sim.enabled().contains(action)) sim.step(action);
            }
            String violation = complete(sim);
            return new Outcome(violation, sim.trace, sim.steps);
        } catch (Sim.Violation v) {
            return new Outcome(v.getMessage(), sim.trace, sim.steps);
        } finally {
            sim.close();
        }
    }

    /** Fair round-robin moves, no fault, until converged or the liveness bound. */
    private static String complete(Sim sim) {
        int turn = 0;
        // the faults not taken are given up: the world is quiet from here
        sim.crashesLeft = 0;
        sim.leaderChangesLeft = 0;
        sim.lostAnswersLeft = 0;
        sim.partitionsLeft = 0;
        sim.replacementsLeft = 0;
        sim.heal();
        while (true) {
            if (sim.converged()) return null;
            String violation = liveness(sim);
            if (violation != null) return violation;
            List<String> moves = sim.enabled().stream().filter(Explorer::move).toList();
            if (moves.isEmpty()) return "liveness: nothing can happen and the runs did not converge: " + sim.summary();
            sim.step(moves.get(turn++ % moves.size()));
        }
    }

    /** The kind of a violation, kept while shrinking (the same invariant must still break). */
    static String kind(String violation) {
        if (violation == null) return "";
        int colon = violation.indexOf(':');
        return colon < 0 ? violation : violation.substring(0, colon);
    }

    /** Delta debugging over the schedule: drops chunks, then single actions, while the same invariant still breaks. */
    static List<String> shrink(Sim.Config config, List<String> schedule, String violation) {
        String kind = kind(violation);
        List<String> current = new ArrayList<>(schedule);
        int chunk = Math.max(1, current.size() / 2);
        while (chunk >= 1) {
            boolean progress = false;
            for (int start = 0; start < current.size(); ) {
                List<String> candidate = new ArrayList<>(current.subList(0, start));
                candidate.addAll(current.subList(Math.min(current.size(), start + chunk), current.size()));
                Outcome o = replay(config, candidate);
                if (o.failed() && kind(o.violation()).equals(kind)) {
                    current = candidate;
                    progress = true;
                } else {
                    start += chunk;
                }
            }
            if (!progress) chunk /= 2;
        }
        return current;
    }

    /** What the exhaustive search covered. */
    record Coverage(
            long states,
            long schedules,
            long steps,
            boolean complete,
            Outcome failure,
            java.util.Map<String, Integer> deadlines) {}

    /**
     * Every interleaving of the runners' calls and every placement of the config's faults (crashes), depth-first,
     * pruning states seen before (hashed: {@link Sim#state()}) and reducing by {@link Sim#reduced()}; a path ends
     * when its runs converged or at {@code depth} actions, where the fair completion must converge (liveness); once the
     * search completed, no fair cycle may remain in the graph it explored ({@link Search#fairCycle}). No
     * state budget: it completes or fails. A path is replayed from the start only for a state's second and later
     * choices; its first choice goes on in the same simulation.
     */
    static Coverage exhaustive(Sim.Config config, int depth) {
        return onVirtual(() -> {
            Search search = new Search(config, depth);
            search.dfs(new Sim(config, true), new ArrayList<>(), -1, null);
            if (search.failure == null) search.failure = search.fairCycle();
            return new Coverage(
                    search.seen.size(),
                    search.schedules,
                    search.steps,
                    search.failure == null,
                    search.failure,
                    search.deadlines);
        });
    }

    /** A state's key, digested: 16 bytes instead of a string of a few kilobytes per state. */
    record Key(long hi, long lo) {
        static Key of(String state) {
            try {
                byte[] d = java.security.MessageDigest.getInstance("MD5")
                        .digest(state.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(d);
                return new Key(b.getLong(), b.getLong());
            } catch (java.security.NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static final class Search {
        final Sim.Config config;
        final int depth;
        /** The keys seen, as 128-bit digests (two runs of one config see the same keys: counts are reproducible). */
        final Set<Key> seen = new HashSet<>();

        /** The explored graph, for the fair cycles: each state's number, its fair moves enabled, its faults spent. */
        final java.util.Map<Key, Integer> ids = new java.util.HashMap<>();

        final List<Long> enabledFair = new ArrayList<>();
        final List<Boolean> faultless = new ArrayList<>();
        /** The state and action it was first reached by (-1: the start), to print the path to a cycle. */
        final List<Integer> parent = new ArrayList<>();

        final List<String> reachedBy = new ArrayList<>();
        /** Edges: from, to, and the fair move's bit (-1: a fault). */
        final List<int[]> edges = new ArrayList<>();
        /** The fair moves (a runner's call, an edit, a restart, the world's moves, a deadline passing), numbered. */
        final java.util.Map<String, Integer> fairBits = new java.util.HashMap<>();

        int add(Key key, Sim sim, int from, String by) {
            int id = ids.size();
            ids.put(key, id);
            seen.add(key);
            long mask = 0;
            for (String a : sim.enabled()) {
                int bit = bit(a);
                if (bit >= 0) mask |= 1L << bit;
            }
            enabledFair.add(mask);
            faultless.add(sim.crashesLeft == 0
                    && sim.leaderChangesLeft == 0
                    && sim.lostAnswersLeft == 0
                    && sim.partitionsLeft == 0
                    && sim.replacementsLeft == 0
                    && !sim.faulted()
                    && sim.runners.stream().anyMatch(r -> !r.finished));
            parent.add(from);
            reachedBy.add(by);
            return id;
        }

        int bit(String action) {
            if (!(move(action) || action.startsWith("timeout "))) return -1;
            Integer b = fairBits.get(action);
            if (b == null) {
                b = fairBits.size();
                if (b >= 64) throw new IllegalStateException("more than 64 fair moves");
                fairBits.put(action, b);
            }
            return b;
        }

        void edge(int from, String by, int to) {
            edges.add(new int[] {from, to, bit(by)});
        }

        /**
         * Liveness by fair cycles: once no fault is left, a strongly connected set of explored states, joined by fair
         * moves only, in which some runner is not finished and every fair move enabled in all its states is taken
         * within it (weak fairness: a runner, an edit, a restart or a deadline that stays possible happens), holds a
         * cycle the runs may follow for ever without converging. Its schedule: the path to it, then its moves.
         */
        Outcome fairCycle() {
            int n = ids.size();
            List<List<int[]>> out = new ArrayList<>();
            for (int i = 0; i < n; i++) out.add(new ArrayList<>());
            for (int[] e : edges) {
                if (e[2] >= 0 && faultless.get(e[0]) && faultless.get(e[1]))
                    out.get(e[0]).add(e);
            }
            int[] comp = scc(n, out);
            java.util.Map<Integer, List<Integer>> members = new java.util.HashMap<>();
            for (int i = 0; i < n; i++)
                members.computeIfAbsent(comp[i], c -> new ArrayList<>()).add(i);
            for (List<Integer> states : members.values()) {
                long taken = 0;
                boolean cycle = false;
                for (int s : states) {
                    for (int[] e : out.get(s)) {
                        if (comp[e[1]] == comp[s]) {
                            taken |= 1L << e[2];
                            cycle = true;
                        }
                    }
                }
                if (!cycle) continue;
                long always = -1L;
                for (int s : states) always &= enabledFair.get(s);
                if ((always & ~taken) != 0) continue; // a move possible throughout is never taken: not fair
                int entry = states.getFirst();
                List<String> path = new ArrayList<>();
                for (int s = entry; parent.get(s) >= 0; s = parent.get(s)) path.addFirst(reachedBy.get(s));
                List<String> moves = new ArrayList<>();
                for (java.util.Map.Entry<String, Integer> f : fairBits.entrySet()) {
                    if ((taken & (1L << f.getValue())) != 0) moves.add(f.getKey());
                }
                java.util.Collections.sort(moves);
                return new Outcome(
                        "liveness: a fair cycle of " + states.size() + " states never converges (its moves " + moves
                                + ", each taken in it, every one possible throughout taken)",
                        path,
                        path.size());
            }
            return null;
        }

        /** Tarjan's strongly connected components, without recursion: each state's component number. */
        static int[] scc(int n, List<List<int[]>> out) {
            int[] index = new int[n];
            int[] low = new int[n];
            int[] comp = new int[n];
            boolean[] on = new boolean[n];
            java.util.Arrays.fill(index, -1);
            int[] stack = new int[n];
            int sp = 0;
            int next = 0;
            int comps = 0;
            int[] callState = new int[n];
            int[] callEdge = new int[n];
            for (int root = 0; root < n; root++) {
                if (index[root] >= 0) continue;
                int depth = 0;
                callState[0] = root;
                callEdge[0] = 0;
                index[root] = low[root] = next++;
                stack[sp++] = root;
                on[root] = true;
                while (depth >= 0) {
                    int v = callState[depth];
                    List<int[]> es = out.get(v);
                    if (callEdge[depth] < es.size()) {
                        int w = es.get(callEdge[depth]++)[1];
                        if (index[w] < 0) {
                            index[w] = low[w] = next++;
                            stack[sp++] = w;
                            on[w] = true;
                            depth++;
                            callState[depth] = w;
                            callEdge[depth] = 0;
                        } else if (on[w]) {
                            low[v] = Math.min(low[v], index[w]);
                        }
                    } else {
                        if (low[v] == index[v]) {
                            int w;
                            do {
                                w = stack[--sp];
                                on[w] = false;
                                comp[w] = comps;
                            } while (w != v);
                            comps++;
                        }
                        depth--;
                        if (depth >= 0) {
                            int u = callState[depth];
                            low[u] = Math.min(low[u], low[v]);
                        }
                    }
                }
            }
            return comp;
        }

        long schedules;
        long steps;
        Outcome failure;
        /**
         * The give-up branches reached ({@link Sim#marks}): the deadline branches taken ("timeout mX", by how the loop
         * ended) and the one tries that reached no member, each counted once, on the step that first explored it.
         */
        final java.util.Map<String, Integer> deadlines = new java.util.TreeMap<>();

        /** Steps {@code sim} by {@code action}, counting a deadline branch's end. */
        void step(Sim sim, String action, boolean last) {
            steps++;
            sim.marks.clear();
            sim.step(action);
            if (last) for (String mark : sim.marks) deadlines.merge(mark, 1, Integer::sum);
        }

        Search(Sim.Config config, int depth) {
            this.config = config;
            this.depth = depth;
        }

        /** Explores from {@code sim}, which stands after {@code prefix}; closes it. */
        void dfs(Sim sim, List<String> prefix, int from, String by) {
            try {
                while (failure == null) {
                    Key key = Key.of(sim.state());
                    Integer known = ids.get(key);
                    int id = known == null ? add(key, sim, from, by) : known;
                    if (from >= 0) edge(from, by, id);
                    if (known != null) return;
                    if (sim.converged() || prefix.size() >= depth) {
                        schedules++;
                        String violation = complete(sim);
                        if (violation != null) failure = new Outcome(violation, sim.trace, sim.steps);
                        return;
                    }
                    List<String> actions = sim.reduced();
                    for (int i = actions.size() - 1; i >= 1 && failure == null; i--) {
                        List<String> other = new ArrayList<>(prefix);
                        other.add(actions.get(i));
                        Sim replayed = new Sim(config, true);
                        try {
                            for (int k = 0; k < other.size(); k++) {
                                step(replayed, other.get(k), k == other.size() - 1);
                            }
                        } catch (Sim.Violation v) {
                            failure = new Outcome(v.getMessage(), replayed.trace, replayed.steps);
                            replayed.close();
                            return;
                        }
                        dfs(replayed, other, id, actions.get(i));
                    }
                    if (failure != null) return;
                    prefix = new ArrayList<>(prefix);
                    prefix.add(actions.getFirst());
                    from = id;
                    by = actions.getFirst();
                    step(sim, actions.getFirst(), true);
                }
            } catch (Sim.Violation v) {
                failure = new Outcome(v.getMessage(), sim.trace, sim.steps);
            } finally {
                sim.close();
            }
        }
    }
}
