package dev.etcdmigrate.event;

import java.util.List;

/**
 * What the data dir holds, what the data itself says, and the plan made from it.
 */
public sealed interface DecisionEvent extends Event {

    /**
     * A flag after {@code --} in another line's spelling, given to etcd {@code version} in its own ({@code given} ->
     * {@code as}: the catalog's {@code line.flagReplacements}, same meaning, same value). {@code runs} says which
     * etcd: {@code "target"} (the exec at the end) or {@code "serving"} (the member between two legs of a rollout).
     */
    record FlagTranslated(String version, String runs, String given, String as) implements DecisionEvent {
        public String message() {
            return "etcd " + version + (runs.equals("serving") ? " (serving between minors)" : "") + " gets " + given
                    + " as " + as + ": its line's spelling of the same flag";
        }
    }

    /** The data dir is one member of a cluster: its private etcds rejoin the peers on the member's own peer URL. */
    record ClusterMember(int members, String initialCluster, String listenPeerUrls) implements DecisionEvent {
        public String message() {
            return "this data dir is one of " + members + " members (" + initialCluster
                    + "): the private etcd rejoins its peers on " + listenPeerUrls + " while it migrates";
        }
    }

    /**
     * --initial-cluster names only this member, but raft's own records in the data name {@code members} voters
     * (kubeadm init writes such a flag on the first control-plane node and never changes it as others join; etcd
     * ignores the flag once data exists): the runner takes the data's members, {@code initialCluster} as read.
     */
    record MembersFromData(int members, String initialCluster, String readFrom, long index) implements DecisionEvent {
        public String message() {
            return "--initial-cluster names only this member, but the data records " + members + " voting members at"
                    + " raft index " + index + " (" + readFrom + "): " + initialCluster
                    + "; the runner treats this data dir as one member of that cluster (etcd ignores the flag on existing data)";
        }
    }

    /**
     * What the data itself says wrote it (ondisk/DataDetection): the storage, the newest line that wrote
     * it, the oldest line that may run on it now (its cluster or storage version), and the evidence.
     * {@code use} says what the runner does with it (plans from it, checks a label against it).
     */
    record DataDetected(String dataDir, String storage, String line, String floor, List<String> evidence, String use)
            implements DecisionEvent {
        public String message() {
            return "data dir " + dataDir + ": the data says "
                    + (line.isEmpty()
                            ? "nothing about which etcd wrote it"
                            : "etcd " + line + " wrote it (" + storage
                                    + (floor.isEmpty() || floor.equals(line) ? "" : ", cluster at " + floor) + ")")
                    + "; " + use + "; evidence: " + String.join("; ", evidence);
        }
    }

    /** What the data dir holds, and how that was learnt (version.txt, or --initial-version plus inference). */
    record DataDirRead(String dataDir, String version, String how) implements DecisionEvent {
        public String message() {
            return "data dir " + dataDir + ": " + (version.isEmpty() ? "no etcd data" : version) + " (" + how + ")";
        }
    }

    /**
     * The one tolerated disagreement of a label with the data: the data one line ahead where this runner
     * ran steps before, i.e. an upgrade step interrupted after its etcd ran and before version.txt was
     * written. The plan resumes it.
     */
    record InterruptedStepFound(String dataDir, String label, String dataLine, List<String> evidence)
            implements DecisionEvent {
        public String message() {
            return "data dir " + dataDir + ": the data is at etcd " + dataLine + ", one line above " + label
                    + ": an interrupted step to "
                    + dataLine
                    + " had started etcd there before version.txt was written; the plan resumes it (evidence: "
                    + String.join("; ", evidence) + ")";
        }
    }

    /**
     * The data dir holds no etcd data ({@code exists}: an empty dir, or none at all): the target etcd will start a
     * new, empty cluster there, or, when etcd is told to join a running cluster ({@code joins}), a member that takes
     * its data from the cluster's leader. Legitimate on a cluster's first boot and for a member added or replaced; a
     * mistyped hostPath or a volume that did not mount looks exactly the same, and an empty cluster under a live API
     * server loses every object: a warning that names the path, on every start that finds it so.
     */
    record NewCluster(String dataDir, boolean exists, String target, boolean joins) implements DecisionEvent {
        public String message() {
            String where = "data dir " + dataDir + (exists ? " holds no etcd data" : " does not exist") + ": ";
            if (joins) {
                return where + "this member joins the running cluster (--initial-cluster-state=existing) at the"
                        + " cluster's line and takes its data from the leader. Right for a member added or replaced;"
                        + " if this member should have data, the data dir (hostPath, volume mount, --data-dir) is the"
                        + " wrong one: stop it now";
            }
            return where + "etcd " + target
                    + " will start a NEW, EMPTY cluster there. Right for a cluster's first boot; if this member should"
                    + " have data, the data dir (hostPath, volume mount, --data-dir) is the wrong one: stop it now";
        }

        public Level level() {
            return Level.WARN;
        }
    }

    /** One planned step; {@code replacesMemberDir} steps keep the old member dir as a backup. */
    record PlannedStep(int index, String kind, String description, String result, long diskBytes, String keeps) {}

    /**
     * The plan: no steps means only version.txt may change (the no-op). A data dir without etcd data has
     * no current version; {@code fresh} then says what the dir is ("does not exist", "holds no etcd data"), and
     * {@code joins} whether etcd is told to join a running cluster there rather than start a new one.
     */
    record PlanMade(
            String current,
            String target,
            List<PlannedStep> steps,
            String fresh,
            List<PlannedLeg> legs,
            List<FlagTranslated> flags,
            boolean joins)
            implements DecisionEvent {
        public PlanMade {
            steps = List.copyOf(steps);
            legs = List.copyOf(legs);
            flags = List.copyOf(flags);
        }

        public PlanMade(String current, String target, List<PlannedStep> steps, String fresh, List<PlannedLeg> legs) {
            this(current, target, steps, fresh, legs, List.of(), false);
        }

        public PlanMade(String current, String target, List<PlannedStep> steps, String fresh) {
            this(current, target, steps, fresh, List.of());
        }

        /** The same plan with the flags its etcds get in their own line's spelling. */
        public PlanMade withFlags(List<FlagTranslated> translated) {
            return new PlanMade(current, target, steps, fresh, legs, translated, joins);
        }

        /** The same plan for a data dir where etcd joins a running cluster ({@code joins}) or not. */
        public PlanMade joining(boolean joining) {
            return new PlanMade(current, target, steps, fresh, legs, flags, joining);
        }

        public String message() {
            if (current.isEmpty() && joins) {
                return "data dir " + fresh + ": it will be created with mode 0700 if missing; this member joins the"
                        + " running cluster at the cluster's line (asked of the other members when it starts; with"
                        + " none answering, etcd " + target.split("/", 2)[0] + " joins as it is), version.txt records"
                        + " the line it joined at, and the legs from there to " + target + " follow";
            }
            if (current.isEmpty()) {
                return "data dir " + fresh + ": it will be created with mode 0700 if missing and record " + target
                        + "; etcd " + target.split("/", 2)[0] + " initializes it";
            }
            StringBuilder b = new StringBuilder("plan " + current + " -> " + target + ": "
                    + (steps.isEmpty() ? "no etcd needs to run" : steps.size() + " step(s)"));
            for (PlannedStep s : steps) {
                b.append("\n  ")
                        .append(s.index())
                        .append(". ")
                        .append(s.description())
                        .append(" [then version.txt = ")
                        .append(s.result())
                        .append(s.diskBytes() > 0 ? "; needs about " + Bytes.mib(s.diskBytes()) + " free" : "")
                        .append(s.keeps().equals("nothing") ? "" : "; keeps " + s.keeps())
                        .append(']');
            }
            if (steps.isEmpty() && !current.equals(target)) {
                b.append("\n  same minor line and storage: record ")
                        .append(target)
                        .append(" in version.txt");
            }
            for (FlagTranslated f : flags) b.append("\n  ").append(f.message());
            if (!legs.isEmpty()) {
                b.append("\n  a cluster member walks it in ")
                        .append(legs.size())
                        .append(" restarts:");
                for (PlannedLeg leg : legs) b.append("\n  ").append(leg.message());
            }
            return b.toString();
        }
    }

    /**
     * One restart of a cluster member walking several minors (plan.RolloutChain): the plan's steps it runs
     * ({@code firstStep} to {@code lastStep}, 1-based), the patch floors among them, the etcd it serves afterwards ({@code serves}), who
     * decides the restart ({@code restart}: {@code "at-once"}, the member is down already, or
     * {@code "restart-record"}, the cluster's record {@code recordKey} taken with every other member serving),
     * the downgrade job its step joins (the line, or "" for an upgrade), and what follows: {@code "serve"} as the
     * real member until the cluster version is {@code waitsForClusterVersion} (every member runs it; for a
     * downgrade also the leader ended the job), or {@code "exec"} at the target.
     */
    record PlannedLeg(
            int index,
            String from,
            String to,
            String direction,
            int firstStep,
            int lastStep,
            List<String> patchFloors,
            String serves,
            String restart,
            String recordKey,
            String downgradeJob,
            String then,
            String waitsForClusterVersion) {
        public PlannedLeg {
            patchFloors = List.copyOf(patchFloors);
        }

        public String message() {
            StringBuilder b = new StringBuilder("leg ")
                    .append(index)
                    .append(": ")
                    .append(from)
                    .append(" -> ")
                    .append(to)
                    .append(" (step")
                    .append(firstStep == lastStep ? " " + firstStep : "s " + firstStep + "-" + lastStep)
                    .append(patchFloors.isEmpty() ? "" : "; patch floor " + String.join(", ", patchFloors))
                    .append(downgradeJob.isEmpty() ? "" : "; downgrade job to " + downgradeJob)
                    .append("), ")
                    .append(
                            restart.equals("at-once")
                                    ? "at once (the member is down for its new target)"
                                    : "under the cluster's restart record " + recordKey
                                            + ", while every other member serves");
            if (then.equals("serve")) {
                b.append("; then etcd ")
                        .append(serves)
                        .append(" serves as the real member until every member runs ")
                        .append(waitsForClusterVersion)
                        .append(" and the cluster version is ")
                        .append(waitsForClusterVersion)
                        .append(
                                downgradeJob.isEmpty()
                                        ? ""
                                        : ", and the leader ended the downgrade job to " + downgradeJob);
            } else {
                b.append("; then etcd ").append(serves).append(" is exec'd");
            }
            return b.toString();
        }
    }

    /** Under the lock the data dir was found elsewhere than planned (another runner, or a finished recovery). */
    record Replanned(String planned, String now) implements DecisionEvent {
        public String message() {
            return "the data dir is at " + now + " now, not " + planned + " as planned: planning again";
        }
    }

    /** The db's recorded storage version could not be read offline: the step's etcd judges the db. */
    record StorageVersionUnread(String db, String reason) implements DecisionEvent {
        public String message() {
            return "could not read the storage version recorded in " + db + " (" + reason
                    + "): the step's etcd will judge the db";
        }

        public Level level() {
            return Level.WARN;
        }
    }

    /** etcd's --wal-dir: every private etcd on the data dir gets the same external WAL. */
    record WalDirElsewhere(String walDir) implements DecisionEvent {
        public String message() {
            return "the WAL lives in " + walDir + " (etcd's --wal-dir): every private etcd on the data dir gets it";
        }
    }
}
