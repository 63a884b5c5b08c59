package dev.etcdmigrate;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
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

    /** The steps talk to etcd only through their port; the planner's choice reaches them as values. */
    @Test
    void stepsKnowNeitherEtcdNorThePlannerNorTheRun() {
        noClasses()
                .that()
                .resideInAPackage("..etcdmigrate.step..")
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(
                        "..etcdmigrate.etcd..", "..etcdmigrate.plan..", "..etcdmigrate.run..", "..etcdmigrate.cli..")
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
                        "..etcdmigrate.run..")
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
                        "..etcdmigrate.run..")
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
                        "..etcdmigrate.run..")
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
