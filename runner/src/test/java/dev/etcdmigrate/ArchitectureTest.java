package dev.etcdmigrate;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import dev.etcdmigrate.config.EtcdCommandLine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** docs/architecture.md's dependency rules, checked on the compiled main classes. */
class ArchitectureTest {

    private static JavaClasses classes;

    @BeforeAll
    static void importMainClasses() {
        classes = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_JARS)
                .importPackages("dev.etcdmigrate");
    }

    /** Every package, sub-packages apart (etcd.server is not etcd): no two of them need each other. */
    @Test
    void noPackageCycles() {
        slices().matching("dev.etcdmigrate.(**)").should().beFreeOfCycles().check(classes);
    }

    /**
     * The same, also through compile-time constants: javac copies a {@code static final} String or number
     * into the class that uses it, so the class files (and {@link #noPackageCycles}) never show that use.
     * The sources do: an imported class's constant ({@code PrivateEtcd.PROBE_KEY}) is a dependency too.
     */
    @Test
    void noPackageCyclesThroughConstants() throws IOException {
        Map<String, Set<String>> uses = new TreeMap<>();
        for (JavaClass c : classes) {
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                edge(uses, c.getPackageName(), d.getTargetClass().getPackageName());
            }
        }
        Pattern imported =
                Pattern.compile("^import (dev\\.etcdmigrate(?:\\.[a-z0-9]+)*)\\.([A-Z]\\w*);", Pattern.MULTILINE);
        List<String> constants = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                String text = Files.readString(file);
                Matcher pkg = Pattern.compile("^package ([\\w.]+);", Pattern.MULTILINE)
                        .matcher(text);
                if (!pkg.find()) continue;
                Matcher m = imported.matcher(text);
                while (m.find()) {
                    if (Pattern.compile("\\b" + m.group(2) + "\\.[A-Z][A-Z0-9_]+\\b")
                            .matcher(text)
                            .find()) {
                        edge(uses, pkg.group(1), m.group(1));
                        constants.add(file.getFileName() + " -> " + m.group(1) + "." + m.group(2));
                    }
                }
            }
        }
        assertTrue(!constants.isEmpty(), "the source scan found constant uses at all (it reads src/main/java)");
        List<String> cycles = new ArrayList<>();
        for (String from : uses.keySet()) {
            for (String to : uses.get(from)) {
                if (from.compareTo(to) < 0 && reaches(uses, to, from, new TreeSet<>())) cycles.add(from + " <-> " + to);
            }
        }
        assertEquals(List.of(), cycles, "package cycles, constants included");
    }

    private static void edge(Map<String, Set<String>> uses, String from, String to) {
        if (!from.equals(to) && from.startsWith("dev.etcdmigrate") && to.startsWith("dev.etcdmigrate")) {
            uses.computeIfAbsent(from, k -> new TreeSet<>()).add(to);
        }
    }

    private static boolean reaches(Map<String, Set<String>> uses, String from, String to, Set<String> seen) {
        if (from.equals(to)) return true;
        if (!seen.add(from)) return false;
        for (String next : uses.getOrDefault(from, Set.of())) {
            if (reaches(uses, next, to, seen)) return true;
        }
        return false;
    }

    /**
     * etcd's command line is read in cli (ETCD_CREDS once, in MigrateFlags), by its own reader in config and, for a
     * private etcd's whole command line, in the etcd rooms that build it; the run and the planner use what cli read.
     */
    @Test
    void etcdsFlagsAreReadOnlyWhereTheyAreGiven() {
        noClasses()
                .that()
                .resideOutsideOfPackages("..etcdmigrate.cli..", "..etcdmigrate.config..", "..etcdmigrate.etcd..")
                .should()
                .callMethod(EtcdCommandLine.class, "read", List.class, Map.class)
                .check(classes);
    }

    /**
     * The command line is read once, in cli, into config's values (RunConfig, Topology, StatusConfig): only the
     * entry point (Main and its commands) and the tools beside the runner, which bring their own flags, know cli;
     * the run, etcd and status take the config.
     */
    @Test
    void onlyTheEntryPointKnowsTheCommandLine() {
        noClasses()
                .that()
                .resideOutsideOfPackages(
                        "dev.etcdmigrate", "..etcdmigrate.cli..", "..etcdmigrate.demo..", "..etcdmigrate.provision..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("..etcdmigrate.cli..")
                .check(classes);
    }

    /** The config is values: it knows etcd's command line, errors and versions, nothing that runs. */
    @Test
    void theConfigIsValues() {
        noClasses()
                .that()
                .resideInAPackage("..etcdmigrate.config..")
                .should()
                .dependOnClassesThat(DescribedPredicate.describe(
                        "are of the project outside config, error and version",
                        (JavaClass c) -> c.getPackageName().startsWith("dev.etcdmigrate")
                                && !c.getPackageName().equals("dev.etcdmigrate.config")
                                && !c.getPackageName().equals("dev.etcdmigrate.error")
                                && !c.getPackageName().equals("dev.etcdmigrate.version")))
                .check(classes);
    }

    /** The steps talk to etcd only through their port; the planner's choice reaches them as values. */
    @Test
    void stepsKnowNeitherEtcdNorThePlannerNorTheRun() {
        noClasses()
                .that()
                .resideInAPackage("..etcdmigrate.step..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "..etcdmigrate.etcd..",
                        "..etcdmigrate.plan..",
                        "..etcdmigrate.run..",
                        "..etcdmigrate.decide..",
                        "..etcdmigrate.inspect..",
                        "..etcdmigrate.cli..")
                .check(classes);
    }

    /** The planner is pure: no processes, no files, no etcd. */
    @Test
    void thePlannerRunsNothing() {
        noClasses()
                .that()
                .resideInAPackage("..etcdmigrate.plan..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "..etcdmigrate.etcd..",
                        "..etcdmigrate.process..",
                        "..etcdmigrate.exec..",
                        "..etcdmigrate.datadir..",
                        "..etcdmigrate.ondisk..",
                        "..etcdmigrate.run..",
                        "..etcdmigrate.decide..",
                        "..etcdmigrate.inspect..")
                .check(classes);
    }

    /** Values at the bottom of the picture depend on nothing of the project. */
    @Test
    void eventsErrorsAndVersionsDependOnNothingOfTheProject() {
        for (String bottom : new String[] {"event", "error", "version"}) {
            ArchRule rule = noClasses()
                    .that()
                    .resideInAPackage("dev.etcdmigrate." + bottom)
                    .should()
                    .dependOnClassesThat(DescribedPredicate.describe(
                            "are of the project outside " + bottom,
                            (JavaClass c) -> c.getPackageName().startsWith("dev.etcdmigrate")
                                    && !c.getPackageName().equals("dev.etcdmigrate." + bottom)));
            rule.check(classes);
        }
    }

    /** Only the entry point starts a run; only the run (and the entry point) wires etcd objects. */
    @Test
    void onlyTheEntryPointUsesTheRun() {
        noClasses()
                .that()
                .resideOutsideOfPackages("dev.etcdmigrate", "..etcdmigrate.run..", "..etcdmigrate.demo..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("..etcdmigrate.run..")
                .check(classes);
    }

    /**
     * The decision and inspect's report sit below the run, so that both share one decision: {@code decide} reads the
     * data dir and decides, {@code inspect} renders that decision; neither knows the run's orchestration, and the
     * decision knows nothing of the report that shows it.
     */
    @Test
    void theDecisionAndInspectDoNotKnowTheRun() {
        noClasses()
                .that()
                .resideInAnyPackage("..etcdmigrate.decide..", "..etcdmigrate.inspect..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("..etcdmigrate.run..")
                .check(classes);
        noClasses()
                .that()
                .resideInAPackage("..etcdmigrate.decide..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("..etcdmigrate.inspect..")
                .check(classes);
    }

    /**
     * The decision is pure, as its documentation promises: it reads no file (the bin dir included: the caller
     * passes what is installed), starts nothing and reports nothing itself.
     */
    @Test
    void theStartDecisionReadsNothing() {
        noClasses()
                .that()
                .haveNameMatching("dev\\.etcdmigrate\\.decide\\.StartDecision(\\$.*)?")
                .should()
                .dependOnClassesThat()
                .haveFullyQualifiedName("java.nio.file.Files")
                .orShould()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "..etcdmigrate.etcd..",
                        "..etcdmigrate.process..",
                        "..etcdmigrate.exec..",
                        "..etcdmigrate.log..")
                .check(classes);
    }

    /** The offline readers read files: they start no etcd and talk to none. */
    @Test
    void offlineReadersStartNothing() {
        noClasses()
                .that()
                .resideInAPackage("..etcdmigrate.ondisk..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "..etcdmigrate.etcd..",
                        "..etcdmigrate.process..",
                        "..etcdmigrate.step..",
                        "..etcdmigrate.run..",
                        "..etcdmigrate.decide..",
                        "..etcdmigrate.inspect..")
                .check(classes);
    }

    /** etcdctl and etcdutl flags live in the adapter: the lower etcd rooms do not call back up into it. */
    @Test
    void theEtcdRoomsDoNotDependOnTheAdapter() {
        noClasses()
                .that()
                .resideInAnyPackage(
                        "..etcdmigrate.etcd.server..",
                        "..etcdmigrate.etcd.client..",
                        "..etcdmigrate.etcd.binary..",
                        "..etcdmigrate.etcd.backend..")
                .should()
                .dependOnClassesThat()
                .resideInAPackage("dev.etcdmigrate.etcd")
                .check(classes);
    }

    /**
     * The cluster rollout's rules decide from what the cluster answers through their port: they start no etcd,
     * run no step and read no file, so each rule is tested over a scripted cluster.
     */
    @Test
    void theRolloutRulesTalkToTheClusterOnlyThroughTheirPort() {
        noClasses()
                .that()
                .resideInAPackage("..etcdmigrate.cluster..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "..etcdmigrate.etcd..",
                        "..etcdmigrate.process..",
                        "..etcdmigrate.exec..",
                        "..etcdmigrate.step..",
                        "..etcdmigrate.datadir..",
                        "..etcdmigrate.ondisk..",
                        "..etcdmigrate.run..",
                        "..etcdmigrate.decide..",
                        "..etcdmigrate.inspect..")
                .check(classes);
    }

    /** The image's jar leaves the tools out (runner/src/tools): nothing it runs may need them. */
    @Test
    void theRunnerDoesNotNeedTheTools() {
        noClasses()
                .that()
                .resideOutsideOfPackages("..etcdmigrate.demo..", "..etcdmigrate.provision..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage("..etcdmigrate.demo..", "..etcdmigrate.provision..")
                .check(classes);
    }
}
