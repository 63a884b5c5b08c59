package dev.etcdmigrate.decide;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.CatalogSource;
import dev.etcdmigrate.cluster.RolloutCoordinator;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.datadir.DataDir;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.RefusedException;
import dev.etcdmigrate.event.DecisionEvent;
import dev.etcdmigrate.ondisk.Damage;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.ondisk.OwnMember;
import dev.etcdmigrate.plan.Plan;
import dev.etcdmigrate.plan.Planner;
import dev.etcdmigrate.plan.RefusedTransitionException;
import dev.etcdmigrate.plan.RollingUpgradePolicy;
import dev.etcdmigrate.plan.RolloutChain;
import dev.etcdmigrate.step.Step;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The one decision behind {@code migrate}, {@code plan} and {@code inspect}: from what was read of the data
 * dir, its labels, the options, the catalog and what is installed, the version a start plans from and the
 * plan it runs. Pure: it reads no file and emits no event (callers read, the bin dir included, and report what
 * it decided), so inspect shows per target exactly the plan a migrate with the same flags runs.
 */
public final class StartDecision {

    private StartDecision() {}

    /** A start refuses steps on data whose db records etcd's auth as enabled; also inspect's reason per target. */
    public static final String AUTH_REFUSAL = "this data records etcd's auth as enabled (member/snap/db, bucket"
            + " auth): each step's etcd must write a probe key and read keys through etcd's API, for which the runner"
            + " has no credentials. Disable auth for the migration (etcdctl auth disable, on any member of a cluster;"
            + " enable it again once the target runs) (nothing was changed)";

    /**
     * The options a decision reads; {@code v2DeprecationGiven}: the operator set etcd's --v2-deprecation;
     * {@code name}: the member name etcd will run with, checked against the data's (empty: not checked, inspect
     * without a --name of its own).
     */
    public record Flags(
            DataVersion target,
            Optional<EtcdVersion> initialVersion,
            Topology topology,
            boolean v2DeprecationGiven,
            Path dataDir,
            Optional<Path> walDir,
            Optional<String> name) {

        public static Flags of(RunConfig options) {
            return new Flags(
                    options.target(),
                    options.initialVersion(),
                    options.topology(),
                    options.creds().flag("v2-deprecation").isPresent(),
                    options.dataDir(),
                    options.walDir(),
                    Optional.of(options.name()));
        }

        public Flags withTarget(DataVersion other) {
            return new Flags(other, initialVersion, topology, v2DeprecationGiven, dataDir, walDir, name);
        }

        public Flags withoutName() {
            return new Flags(target, initialVersion, topology, v2DeprecationGiven, dataDir, walDir, Optional.empty());
        }
    }

    /**
     * Where a start begins: {@code current} empty for a dir without etcd data; {@code source} what named it
     * ("version.txt", "--initial-version", "data"); {@code verdict} how --initial-version stood against the
     * data (the caller reports an interrupted step).
     */
    public record Start(Optional<DataVersion> current, String source, LabelJudgement.Verdict verdict) {}

    /**
     * What a start decides for one target from one read of the data dir: where it starts, the plan it runs, a
     * cluster member's legs (one restart per minor, as {@code plan} shows them) and the refusals. {@code refused}:
     * the first a start meets, in its order (damage, another member's data, a label the data contradicts, the
     * plan's own); {@code start} is there unless the start itself was refused, {@code plan} unless anything was.
     * {@code auth}: {@link #AUTH_REFUSAL} for a plan with steps on data whose db records auth as enabled, which a
     * start meets among its checks (Preflight's order), after the others.
     */
    public record Decision(
            Optional<Start> start,
            Optional<Plan> plan,
            List<DecisionEvent.PlannedLeg> legs,
            Optional<MigrateException> refused,
            Optional<RefusedException> auth) {

        /** Where the start begins, or its refusal. */
        public Start startOrThrow() throws MigrateException {
            if (start.isEmpty()) throw refused.orElseThrow();
            return start.get();
        }

        /** The plan, or the refusal met before it. */
        public Plan planOrThrow() throws MigrateException {
            if (plan.isEmpty()) throw refused.orElseThrow();
            return plan.get();
        }

        /** Refused (exit 3) if the plan has steps and the db records auth as enabled. */
        public void refuseAuth() throws RefusedException {
            if (auth.isPresent()) throw auth.get();
        }

        /** The reason a start with these flags is refused, the auth refusal included; empty if none. */
        public Optional<String> refusal() {
            return refused.map(Throwable::getMessage).or(() -> auth.map(Throwable::getMessage));
        }
    }

    /**
     * The decision for {@code flags.target()}: {@link #start}, version.txt judged against the data where the
     * data was read beside it (inspect reads it always; a start judges version.txt with its own cheaper read,
     * {@code DataDirState.checkLabelAgainstData}), {@link #plan}, the legs and the auth refusal. Pure.
     * {@code installed}: which etcds the caller found here to run ({@link DataDirState#installed}).
     */
    public static Decision decide(DataRead read, Flags flags, CatalogSource catalog, Predicate<EtcdVersion> installed) {
        Optional<Start> start = Optional.empty();
        try {
            start = Optional.of(start(read, flags, catalog));
            if (read.versionTxt().isPresent() && read.detection().isPresent()) {
                judge(
                        read.versionTxt().get(),
                        "version.txt",
                        read.dataDir(),
                        read.stepsRanHere(),
                        read.detection().get(),
                        catalog);
            }
            Plan plan = plan(start.get().current(), flags, catalog, installed);
            refuseAboveAnUnendedDowngrade(read, flags, plan);
            List<DecisionEvent.PlannedLeg> legs = switch (flags.topology()) {
                case Topology.Member cluster -> RolloutChain.of(plan).planned(RolloutCoordinator.RECORD_KEY);
                case Topology.Single single -> List.of();
            };
            Optional<RefusedException> auth =
                    read.authEnabled() && !plan.steps().isEmpty()
                            ? Optional.of(new RefusedException(AUTH_REFUSAL))
                            : Optional.empty();
            return new Decision(start, Optional.of(plan), legs, Optional.empty(), auth);
        } catch (MigrateException refused) {
            return new Decision(start, Optional.empty(), List.of(), Optional.of(refused), Optional.empty());
        }
    }

    /**
     * A single member's data that records a downgrade job in progress, planned with steps to a line above the job's
     * target: every etcd above that line would run held at the job's target cluster version, and the job would never
     * end (it ends once every member runs the target's line), so the steps would leave the data at a cluster version
     * below the line that wrote it last. Refused (exit 3) before anything changes, with both ways on. A cluster
     * member is not refused here: the cluster's leader may have ended the job after this member stopped, and the
     * rollout's gate asks the cluster itself.
     */
    static void refuseAboveAnUnendedDowngrade(DataRead read, Flags flags, Plan plan) throws RefusedTransitionException {
        if (read.downgradeJob().isEmpty() || plan.steps().isEmpty()) return;
        if (!(flags.topology() instanceof Topology.Single)) return;
        MinorLine job = read.downgradeJob().get();
        if (!job.isOlderThan(flags.target().version().line())) return;
        throw new RefusedTransitionException("this data records a downgrade job to etcd " + job
                + " that has not ended (member/snap/db, bucket cluster, key downgrade), and the target "
                + flags.target().version() + " is above it: its etcd would stay at cluster version " + job
                + ", and the job would never end. Finish the downgrade first (target a " + job + " release: its"
                + " etcd ends the job), or cancel it (`etcdctl downgrade cancel` against the etcd running this data), then"
                + " ask for " + flags.target().version() + " again (nothing was changed)");
    }

    /**
     * The version a start plans from: version.txt when there is one; else --initial-version, a claim judged
     * against the data here; else what the data says, at the lowest patch of its line so that patch floors
     * apply. Refused where a claim contradicts the data, or where neither a label nor the data answers.
     */
    public static Start start(DataRead read, Flags flags, CatalogSource catalog) throws MigrateException {
        if (!read.holdsData()) return new Start(Optional.empty(), "none", LabelJudgement.Verdict.AGREES);
        List<Damage> damage = read.damageFor(flags.target());
        if (!damage.isEmpty()) throw new DamagedDataException(damage);
        refuseAnotherMembersData(read, flags);
        Label label = label(read, flags);
        if (label.source().equals("version.txt")) {
            return new Start(label.claimed(), "version.txt", LabelJudgement.Verdict.AGREES);
        }
        DataDetection.Detection detected = read.detection()
                .orElseThrow(() -> new IllegalStateException("no version.txt: the data must have been read"));
        if (label.claimed().isPresent()) {
            DataVersion claimed = label.claimed().get();
            EtcdVersion initial = claimed.version();
            if (read.inferredStorage() == StorageApi.ETCD3
                    && !catalog.get()
                            .line(initial.line())
                            .map(r -> r.line().v3Api())
                            .orElse(true)) {
                throw new RefusedTransitionException("--initial-version " + initial
                        + " cannot have written etcd3 data, but " + read.dataDir() + " has member/snap/db");
            }
            LabelJudgement.Verdict verdict = judge(
                    claimed,
                    "--initial-version/INITIAL_VERSION",
                    read.dataDir(),
                    read.stepsRanHere(),
                    detected,
                    catalog);
            return new Start(Optional.of(claimed), "--initial-version", verdict);
        }
        if (!detected.pinned() || detected.line().isEmpty()) {
            throw new RefusedTransitionException("data dir " + read.dataDir()
                    + " holds data (" + read.content() + ") but no version.txt,"
                    + " and the data does not say which etcd wrote it (found: "
                    + (detected.evidence().isEmpty() ? "nothing etcd writes" : detected.evidenceText())
                    + "). Set --initial-version / INITIAL_VERSION to the etcd version that last ran on it"
                    + " (its storage is inferred: member/snap/db means etcd3); `etcd-migrate inspect --data-dir "
                    + read.dataDir()
                    + "` shows what the data holds. The Kubernetes etcd image assumed 2.2.1/etcd2 for such dirs; pass"
                    + " --initial-version=2.2.1 only if that is what wrote it");
        }
        MinorLine line = detected.line().get();
        DataVersion taken = new DataVersion(
                new EtcdVersion(line.major(), line.minor(), 0),
                detected.storage().get());
        return new Start(Optional.of(taken), "data", LabelJudgement.Verdict.AGREES);
    }

    /**
     * The label a start plans from, in a start's order: {@code source} "version.txt" when there is one, else
     * "--initial-version" (the claim at the data's storage, else the storage inferred from the dir), else "none"
     * with nothing {@code claimed}, where a start plans from the data.
     */
    public record Label(String source, Optional<DataVersion> claimed) {}

    /** Which label a start on data that holds etcd data plans from ({@link Label}). */
    public static Label label(DataRead read, Flags flags) {
        if (read.versionTxt().isPresent()) return new Label("version.txt", read.versionTxt());
        if (flags.initialVersion().isPresent()) {
            StorageApi storage =
                    read.detection().flatMap(DataDetection.Detection::storage).orElse(read.inferredStorage());
            return new Label(
                    "--initial-version",
                    Optional.of(new DataVersion(flags.initialVersion().get(), storage)));
        }
        return new Label("none", Optional.empty());
    }

    /**
     * The data records this member's name (its WAL's member id, that id's entry in the membership: {@link
     * OwnMember}) and etcd would run with another --name: most likely another member's data dir (a hostPath or
     * volume of another node), which etcd would take over under the new name, two members with one id. Refused
     * (exit 3) naming both, before anything changes.
     */
    public static void refuseAnotherMembersData(DataRead read, Flags flags) throws MigrateException {
        if (read.member().isEmpty() || flags.name().isEmpty()) return;
        OwnMember recorded = read.member().get();
        if (recorded.name().equals(flags.name().get())) return;
        throw new DataDir.ContradictionException("--name is '" + flags.name().get() + "' but " + read.dataDir()
                + " holds the data of member '" + recorded.name() + "' (member id " + recorded.id() + ", from its WAL;"
                + " the name from " + recorded.where() + "): etcd would run another member's data under this name."
                + " Check that --data-dir (the hostPath or volume) is this member's; if it is and the member was"
                + " renamed, start it with --name=" + recorded.name() + " (nothing was changed)");
    }

    /**
     * A label against the data: agrees, or the one tolerated interrupted step; a contradiction (a label older
     * than the data's floor, or one whose line cannot have opened data no etcd of its upgrade.from line wrote)
     * is refused (exit 3) with what the data says and what to do. {@code stepsRanHere}: as {@link
     * DataRead#stepsRanHere}.
     */
    public static LabelJudgement.Verdict judge(
            DataVersion label,
            String source,
            Path dataDir,
            boolean stepsRanHere,
            DataDetection.Detection detected,
            CatalogSource catalog)
            throws MigrateException {
        if (agreesWithoutCatalog(label, detected)) return LabelJudgement.Verdict.AGREES;
        LabelJudgement.Verdict verdict = verdict(label, stepsRanHere, detected, catalog.get());
        if (verdict == LabelJudgement.Verdict.CONTRADICTED) {
            throw new DataDir.ContradictionException(source + " says " + label + " but the data says etcd "
                    + detected.floor().orElseThrow() + " or newer ran on it (" + detected.evidenceText()
                    + "): etcd "
                    + label.version().line() + " cannot run on it. `etcd-migrate inspect --data-dir "
                    + dataDir
                    + "` shows the data's evidence. Write the version that really ran last into version.txt"
                    + " (or INITIAL_VERSION)");
        }
        if (verdict == LabelJudgement.Verdict.AHEAD_OF_DATA) {
            MinorLine from = LabelJudgement.opensDataFrom(label.version().line(), catalog.get())
                    .orElseThrow();
            throw new DataDir.ContradictionException(source + " says " + label + " but the data records its"
                    + " cluster at etcd " + detected.floor().orElseThrow() + " (" + detected.evidenceText()
                    + "): etcd " + label.version().line() + " runs only on data of a cluster at " + from
                    + " or newer, so it never ran on this data and cannot open it. `etcd-migrate inspect --data-dir "
                    + dataDir + "` shows the data's evidence. Write the version that really ran last into"
                    + " version.txt (or INITIAL_VERSION), or remove version.txt to plan from what the data says");
        }
        return verdict;
    }

    /**
     * How a label stands against the data ({@link LabelJudgement#judge}), the verdict {@link #judge} refuses or
     * accepts: inspect reports it as it is.
     */
    public static LabelJudgement.Verdict verdict(
            DataVersion label, boolean stepsRanHere, DataDetection.Detection detected, Catalog catalog) {
        if (agreesWithoutCatalog(label, detected)) return LabelJudgement.Verdict.AGREES;
        return LabelJudgement.judge(
                label.version().line(),
                detected.floor(),
                LabelJudgement.recordedFloor(detected),
                stepsRanHere,
                catalog);
    }

    /** A label the data's floor alone finds agreeing: a start that meets it loads no catalog. */
    private static boolean agreesWithoutCatalog(DataVersion label, DataDetection.Detection detected) {
        return detected.floor().isEmpty()
                || (!detected.pinned()
                        && !label.version().line().isOlderThan(detected.floor().get()))
                || label.version().line().equals(detected.floor().get());
    }

    /**
     * The plan a start runs from {@code current}: the Planner's, shaped as a one-member migration is (a
     * snapshot for the target; v2 content judged by the next line's etcd at start unless the operator set
     * --v2-deprecation, which changes what 3.6 refuses), then held to what a member of a cluster of
     * {@code flags.topology()} may do alone, and to etcd's --wal-dir: a step that swaps in a new member dir
     * cannot replace a WAL kept outside it.
     */
    public static Plan plan(
            Optional<DataVersion> current, Flags flags, CatalogSource catalog, Predicate<EtcdVersion> installed)
            throws MigrateException {
        Plan plan = new Planner(catalog, installed).plan(current, flags.target());
        plan = switch (flags.topology()) {
            case Topology.Single single -> {
                Plan alone = plan.withSnapshotForTheTarget();
                if (!flags.v2DeprecationGiven()) alone = alone.withV2JudgedAtStart();
                yield RollingUpgradePolicy.check(alone, 1);
            }
            case Topology.Member member ->
                RollingUpgradePolicy.check(plan.withSnapshotterAfterServing(), member.size());
        };
        if (flags.walDir().isPresent()) {
            Path wal = flags.walDir().get();
            for (Step step : plan.steps()) {
                if (step.replacesMemberDir()) {
                    throw new RefusedTransitionException("'" + step.describe() + "' builds a new member dir and swaps"
                            + " it in, but etcd's --wal-dir " + wal + " keeps the WAL outside it, where the swap"
                            + " cannot replace it with the one the new member dir needs. With etcd stopped, move the"
                            + " WAL into the data dir (mv " + wal + "/* "
                            + flags.dataDir().resolve("member/wal")
                            + "/) and drop --wal-dir for the migration");
                }
            }
        }
        return plan;
    }

    /** The catalog as a source that is read once. */
    public static CatalogSource once(Catalog catalog) {
        return () -> catalog;
    }
}
