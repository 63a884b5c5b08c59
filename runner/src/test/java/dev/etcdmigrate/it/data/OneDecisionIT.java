package dev.etcdmigrate.it.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.WrittenDirs;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * One decision behind inspect and migrate: over every data dir of DataDetectionIT (each
 * bundled release, each storage it writes, with snapshots and an external WAL), {@code inspect -o json}
 * given migrate's flags shows for a target exactly the steps {@code migrate --no-exec} then runs (its
 * step-started events), or the refusal migrate then ends with. Targets: the next bundled release (one
 * step, or a restart for the newest) as a lone member, and the release two above as a member of a
 * three-member --initial-cluster (refused before any etcd runs). Each dir with a db again with its root page
 * damaged: inspect and migrate both refuse it (exit 3) before any etcd runs.
 */
class OneDecisionIT {

    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    static Path dir;

    @TestFactory
    Stream<DynamicTest> inspectShowsThePlanMigrateRuns() {
        List<Release> releases = EtcdFixture.CATALOG.releases();
        return releases.stream().flatMap(release -> {
            int at = releases.indexOf(release);
            Path base = dir.resolve(release.version());
            return DataDetectionIT.variants(release, base.resolve("wal-elsewhere"))
                    .map(variant -> DynamicTest.dynamicTest(release.version() + " " + variant.label(), () -> {
                        Path data = base.resolve(variant.api() + (variant.snapshots() ? "-snap" : ""));
                        try (WrittenDirs dirs = new WrittenDirs()) {
                            dirs.write(release, data, variant, variant.snapshots() ? 40 : 3);
                        }
                        // the same dir with its db's root page damaged, before any run changed
                        // it: no version.txt, so a start reads every page, as for a plan with steps
                        Path damaged = base.resolve(data.getFileName() + "-damaged");
                        boolean hasDb = Files.isRegularFile(data.resolve("member/snap/db"));
                        if (hasDb) {
                            copy(data, damaged);
                            damageRootPages(damaged.resolve("member/snap/db"));
                        }
                        List<String> wal = variant.walDir()
                                .map(w -> List.of("--", "--wal-dir", w.toString()))
                                .orElse(List.of());
                        if (at + 2 < releases.size()) {
                            agree(data, releases.get(at + 2), cluster(), false);
                        }
                        agree(data, releases.get(Math.min(at + 1, releases.size() - 1)), wal, true);
                        if (hasDb) {
                            // inspect and migrate both refuse it (exit 3), before any etcd runs
                            JsonNode shown =
                                    agree(damaged, releases.get(Math.min(at + 1, releases.size() - 1)), wal, true);
                            assertTrue(
                                    shown.path("refused")
                                            .asText()
                                            .startsWith("the data is damaged: member/snap/db (page "),
                                    "refused as damaged: " + shown);
                        }
                    }));
        });
    }

    /** --initial-cluster of three members, this one ("it") on a free loopback port. */
    private static List<String> cluster() {
        String peer = "http://127.0.0.1:" + FreePorts.pick().peer();
        return List.of(
                "--initial-cluster",
                "it=" + peer + ",b=http://127.0.0.1:1,c=http://127.0.0.1:2",
                "--listen-peer-urls",
                peer);
    }

    /** inspect's target against what migrate --no-exec does with the same flags; {@code run}: migrate may run steps. */
    private static JsonNode agree(Path data, Release target, List<String> extra, boolean run) throws Exception {
        String storage = target.line().v3Api() ? "etcd3" : "etcd2";
        List<String> inspect = new ArrayList<>(flags("inspect", data, target, storage));
        inspect.addAll(List.of("-o", "json"));
        inspect.addAll(extra);
        JsonNode shown = null;
        try (RunnerProcess runner = RunnerProcess.run(inspect)) {
            assertEquals(0, runner.exitCode(), runner.output());
            JsonNode report = JSON.readTree(runner.output()
                    .lines()
                    .filter(l -> l.startsWith("{\"schema\""))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no report: " + runner.output())));
            for (JsonNode t : report.path("targets")) {
                if (t.path("version").asText().equals(target.version())
                        && t.path("storage").asText().equals(storage)) shown = t;
            }
        }
        assertTrue(shown != null, "inspect shows target " + target.version());
        List<String> migrate = new ArrayList<>(flags("migrate", data, target, storage));
        migrate.add("--no-exec");
        migrate.addAll(extra);
        if (!run && !shown.path("refused").isTextual()) {
            // a member of three walks two minors one leg at a time: migrate would start the rollout and
            // wait for its peers, so here inspect must agree with the read-only `plan`, the same decision
            List<String> plan = new ArrayList<>(flags("plan", data, target, storage));
            plan.addAll(List.of("-o", "json"));
            plan.addAll(extra);
            try (RunnerProcess runner = RunnerProcess.run(plan)) {
                assertEquals(0, runner.exitCode(), runner.output());
                JsonNode made = JSON.readTree(runner.output()
                        .lines()
                        .filter(l -> l.startsWith("{\"current\""))
                        .findFirst()
                        .orElseThrow(() -> new AssertionError("no plan: " + runner.output())));
                List<String> planned = new ArrayList<>();
                made.path("steps")
                        .forEach(s -> planned.add(s.path("description").asText()));
                List<String> listed = new ArrayList<>();
                shown.path("steps").forEach(s -> listed.add(s.asText()));
                assertEquals(planned, listed, "inspect's plan is plan's for a member of three");
                assertTrue(listed.size() >= 2, "two minors are two steps or more: " + shown);
            }
            return shown;
        }
        try (RunnerProcess runner = RunnerProcess.run(migrate)) {
            if (shown.path("refused").isTextual()) {
                assertEquals(3, runner.exitCode(), shown + "\n" + runner.output());
                // the same refusal; its list of evidence may be longer in inspect's, which reads every file
                // in full (a start stops reading where the db or a snapshot answers)
                String reason = shown.path("refused").asText().split(" \\(found: ", 2)[0];
                assertTrue(
                        runner.ending().path("reason").asText().startsWith("refused: " + reason),
                        "migrate refused as inspect said: " + shown + "\n" + runner.ending());
                assertEquals(0, runner.count("etcd-started"), "refused before any etcd ran: " + runner.output());
                return shown;
            }
            assertEquals(0, runner.exitCode(), shown + "\n" + runner.output());
            List<String> ran = runner.events("step-started").stream()
                    .map(e -> e.path("description").asText())
                    .toList();
            List<String> planned = new ArrayList<>();
            shown.path("steps").forEach(s -> planned.add(s.asText()));
            assertEquals(planned, ran, "inspect's plan is the steps migrate ran");
            assertEquals(1, runner.events("plan-made").size());
        }
        return shown;
    }

    /** A copy of the data dir (not its external WAL: a refusal reads it and changes nothing). */
    private static void copy(Path from, Path to) throws Exception {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path p : files.toList()) {
                Path dest = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) Files.createDirectories(dest);
                else Files.copy(p, dest);
            }
        }
        Files.setPosixFilePermissions(to, java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    }

    /** Both meta pages' root page made to identify as page 0 (bbolt's "Page expected to be" assertion). */
    private static void damageRootPages(Path db) throws Exception {
        try (FileChannel f = FileChannel.open(db, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer meta = ByteBuffer.allocate(80).order(ByteOrder.LITTLE_ENDIAN);
            f.read(meta, 0);
            int pageSize = meta.getInt(24);
            ByteBuffer meta1 = ByteBuffer.allocate(80).order(ByteOrder.LITTLE_ENDIAN);
            f.read(meta1, pageSize);
            for (long root : new long[] {meta.getLong(32), meta1.getLong(32)}) {
                f.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 0), root * pageSize);
            }
        }
    }

    private static List<String> flags(String command, Path data, Release target, String storage) {
        List<String> args = new ArrayList<>(RunnerArgs.common(command, data, target.version()));
        args.set(args.indexOf("--target-storage") + 1, storage);
        args.addAll(List.of("--log-format", "json"));
        return args;
    }
}
