package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.InProcess;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.it.support.WrittenDirs;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged data (docs/damage.md): data dirs every bundled line wrote (db, WAL, snapshot with the v2 store), each
 * file mutated (bit flips anywhere, flips inside one page, a zeroed page, a page of random bytes, a
 * truncation), with and without version.txt. Properties: {@code inspect} (text and JSON) and {@code plan}
 * always answer in their own words, and inspect's damage section names only the file that was damaged;
 * {@code migrate} exits 0-3 in its own words within its deadline, and a run that did not succeed leaves
 * version.txt as it was and member/ either byte for byte as it was or, where a step's etcd ran on it in place,
 * held as it was by the backup the runner took first.
 *
 * <p>Seeded and replayable: the seed is printed ({@code -Dfuzz.seed=N} replays it; the default is fixed so
 * the default build is deterministic). Sizes: {@code -Dfuzz.mutants} per line and file (default 3),
 * {@code -Dfuzz.migrates} migrate runs in all (default 2); {@code -Pfuzz-long} runs many more. The figures
 * (mutants per line and file, outcomes) go to target/damage-fuzz.txt.
 */
class DamageFuzzIT {

    private static final long SEED = Long.getLong("fuzz.seed", 20261126L);
    private static final int MUTANTS = Integer.getInteger("fuzz.mutants", 3);
    private static final int MIGRATES = Integer.getInteger("fuzz.migrates", 2);
    private static final int PAGE = 4096;
    private static final ObjectMapper JSON = new ObjectMapper();
    /** A Java exception's own text: a class name, a bounds message, a stack frame. */
    private static final Pattern EXCEPTION_TEXT = Pattern.compile(
            "\\b(java|javax|jdk|sun|com\\.fasterxml)\\.[\\w.$]+(Exception|Error)\\b|out of bounds for length"
                    + "|\\n\\s+at [\\w.$]+\\(|NullPointerException|ClassCastException|ArithmeticException");

    @TempDir
    static Path dir;

    enum Mutation {
        BIT_FLIPS,
        PAGE_FLIPS,
        ZERO_PAGE,
        RANDOM_PAGE,
        TRUNCATE
    }

    /** One damaged copy: which seed, file and mutation, where, and with or without version.txt. */
    record Mutant(Release release, StorageApi api, String file, Mutation mutation, String detail, boolean labelled) {
        String describe() {
            return release.version() + " " + file + " " + mutation + " " + detail
                    + (labelled ? " (version.txt)" : " (no version.txt)");
        }
    }

    private final List<String> violations = new ArrayList<>();
    private final Map<String, Map<String, Integer>> figures = new TreeMap<>();

    @Test
    void damagedDataIsAlwaysAnsweredInOwnWordsAndNeverMadeWorse() throws Exception {
        System.out.println("DamageFuzzIT seed " + SEED + " (replay: -Dfuzz.seed=" + SEED + " -Dfuzz.mutants=" + MUTANTS
                + " -Dfuzz.migrates=" + MIGRATES + ")");
        Random random = new Random(SEED);
        long start = System.nanoTime();
        List<Path> seeds = new ArrayList<>();
        for (Release release : EtcdFixture.CATALOG.releases()) {
            StorageApi api = release.line().v3Api() ? StorageApi.ETCD3 : StorageApi.ETCD2;
            Path seed = dir.resolve("seed-" + release.version());
            try (WrittenDirs dirs = new WrittenDirs()) {
                dirs.write(release, seed, new WrittenDirs.Variant(api, true, Optional.empty()), 40);
            }
            seeds.add(seed);
            for (String file : files(seed)) {
                long used = used(seed.resolve(file));
                for (int i = 0; i < MUTANTS; i++) {
                    Mutation mutation = Mutation.values()[random.nextInt(Mutation.values().length)];
                    boolean labelled = random.nextBoolean();
                    Path data = dir.resolve("mutant");
                    linkCopy(seed, data, file);
                    String detail = mutate(data.resolve(file), mutation, used, random);
                    Mutant m = new Mutant(release, api, file, mutation, detail, labelled);
                    if (labelled) label(data, m);
                    readOnlyCommands(data, m);
                    deleteTree(data);
                }
            }
        }
        long readSeconds = (System.nanoTime() - start) / 1_000_000_000;
        // migrate: a few mutants of etcd3 seeds, each a full copy, to the next line (a step that runs etcd)
        List<Release> v3 = EtcdFixture.CATALOG.releases().stream()
                .filter(r -> r.line().v3Api())
                .toList();
        for (int i = 0; i < MIGRATES; i++) {
            Release release = v3.get(random.nextInt(v3.size() - 1));
            Release next = v3.get(v3.indexOf(release) + 1);
            Path seed = dir.resolve("seed-" + release.version());
            List<String> files = files(seed);
            String file = files.get(random.nextInt(files.size()));
            Mutation mutation = Mutation.values()[random.nextInt(Mutation.values().length)];
            Path data = dir.resolve("migrate-" + i);
            linkCopy(seed, data, null);
            String detail = mutate(data.resolve(file), mutation, used(seed.resolve(file)), random);
            Mutant m = new Mutant(release, StorageApi.ETCD3, file, mutation, detail, random.nextBoolean());
            if (m.labelled()) label(data, m);
            migrate(data, m, next);
            deleteTree(data);
        }
        String table = table(readSeconds, (System.nanoTime() - start) / 1_000_000_000);
        System.out.print(table);
        Files.writeString(Path.of("target", "damage-fuzz.txt"), table);
        assertTrue(
                violations.isEmpty(),
                violations.size() + " violation(s), seed " + SEED + ":\n" + String.join("\n", violations));
    }

    /** inspect -o json, inspect, plan -o json on a mutant, in this JVM. */
    private void readOnlyCommands(Path data, Mutant m) {
        String rel = m.file();
        InProcess.Result json = InProcess.run(
                List.of(
                        "inspect",
                        "--data-dir",
                        data.toString(),
                        "--bin-dir",
                        EtcdFixture.binDir().toString(),
                        "-o",
                        "json"),
                Map.of());
        String outcome;
        if (json.exit() != 0) {
            violation(m, "inspect -o json exited " + json.exit() + ": " + json.err());
            outcome = "inspect failed";
        } else {
            ownWords(m, "inspect -o json", json.out() + json.err());
            Optional<String> report =
                    json.out().lines().filter(l -> l.startsWith("{\"schema\"")).findFirst();
            if (report.isEmpty()) {
                violation(m, "inspect -o json printed no report: " + json.out());
                outcome = "inspect failed";
            } else {
                JsonNode damage = parse(report.get()).path("damage");
                if (damage.isNull() || damage.isMissingNode()) {
                    outcome = "inspect: no damage seen";
                } else {
                    outcome = "inspect: damage named";
                    for (JsonNode f : damage.path("files")) {
                        if (!f.asText().startsWith(rel + " ")) violation(m, "damage names another file: " + f.asText());
                    }
                    if (damage.path("wayBack").asText().isEmpty()) violation(m, "damage without a way back");
                }
            }
        }
        count(m, outcome);
        InProcess.Result text = InProcess.run(
                List.of(
                        "inspect",
                        "--data-dir",
                        data.toString(),
                        "--bin-dir",
                        EtcdFixture.binDir().toString()),
                Map.of());
        if (text.exit() != 0 || !text.out().contains("data dir ")) violation(m, "inspect exited " + text.exit());
        ownWords(m, "inspect", text.out() + text.err());
        if (outcome.equals("inspect: damage named") && !text.out().contains("  damage (")) {
            violation(m, "inspect's text lacks the damage the JSON has");
        }
        List<String> plan = new ArrayList<>(RunnerArgs.common(
                "plan", data, EtcdFixture.CATALOG.releases().getLast().version()));
        plan.addAll(List.of("-o", "json"));
        InProcess.Result planned = InProcess.run(plan, Map.of());
        if (planned.exit() < 0 || planned.exit() > 3) violation(m, "plan exited " + planned.exit());
        ownWords(m, "plan", planned.out() + planned.err());
        count(m, "plan exit " + planned.exit());
    }

    private void migrate(Path data, Mutant m, Release target) throws Exception {
        Path versionFile = data.resolve("version.txt");
        byte[] versionBefore = Files.exists(versionFile) ? Files.readAllBytes(versionFile) : null;
        Map<String, String> memberBefore = TreeDigest.of(data.resolve("member"));
        try (RunnerProcess runner =
                RunnerProcess.start(RunnerArgs.migrate(data, target.version(), "--start-timeout", "40s"), Map.of())) {
            // an etcd that neither serves nor exits is the runner's to stop (40 s a start): past 3 min the run hangs
            int exit = runner.awaitExit(Duration.ofMinutes(3)); // fails the test as a hang past it
            String output = String.join("\n", runner.lines());
            count(m, "migrate exit " + exit);
            if (exit < 0 || exit > 3) violation(m, "migrate exited " + exit + ":\n" + output);
            ownWords(m, "migrate", output);
            if (exit != 0) {
                byte[] after = Files.exists(versionFile) ? Files.readAllBytes(versionFile) : null;
                if (!Arrays.equals(versionBefore, after)) violation(m, "migrate exit " + exit + " changed version.txt");
                // a step's etcd that ran on member/ itself may have changed it: then the runner's backup taken
                // before it must hold member/ as it was
                if (!memberBefore.equals(TreeDigest.of(data.resolve("member"))) && !backedUp(data, memberBefore))
                    violation(m, "migrate exit " + exit + " changed member/ and no backup holds it as it was");
            }
            System.out.println("migrate " + m.describe() + " -> exit " + exit + ": "
                    + runner.lines().stream()
                            .filter(l -> l.contains("ERROR [etcd-migrate]") || l.contains("refused"))
                            .reduce((a, b) -> b)
                            .orElse("(no reason line)"));
        }
    }

    private static boolean backedUp(Path data, Map<String, String> member) throws Exception {
        Path backups = data.resolve(".etcd-migrate/backups");
        if (!Files.isDirectory(backups)) return false;
        try (Stream<Path> list = Files.list(backups)) {
            for (Path b : list.toList()) {
                if (Files.isDirectory(b.resolve("member")) && member.equals(TreeDigest.of(b.resolve("member"))))
                    return true;
            }
        }
        return false;
    }

    private void ownWords(Mutant m, String command, String output) {
        var matcher = EXCEPTION_TEXT.matcher(output);
        if (matcher.find())
            violation(m, command + " printed an exception's text: '" + matcher.group() + "' in:\n" + output);
    }

    private void violation(Mutant m, String what) {
        violations.add(m.describe() + ": " + what);
    }

    private void count(Mutant m, String outcome) {
        String kind = m.file().startsWith("member/wal/") ? "WAL" : m.file().endsWith(".snap") ? "snap" : "db";
        figures.computeIfAbsent(m.release().version() + " " + kind, k -> new TreeMap<>())
                .merge(outcome, 1, Integer::sum);
    }

    private String table(long readSeconds, long totalSeconds) {
        StringBuilder b = new StringBuilder(
                "DamageFuzzIT seed " + SEED + ", " + MUTANTS + " mutant(s) per line and file, " + MIGRATES
                        + " migrate run(s); inspect/plan part " + readSeconds + " s, all " + totalSeconds + " s\n");
        figures.forEach((k, v) -> b.append(String.format("%-14s %s%n", k, v)));
        b.append(violations.size()).append(" violation(s)\n");
        return b.toString();
    }

    private static JsonNode parse(String line) {
        try {
            return JSON.readTree(line);
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + line, e);
        }
    }

    /** The files etcd wrote that are mutated: the db, the first WAL segment, the newest snapshot. */
    private static List<String> files(Path seed) throws IOException {
        List<String> out = new ArrayList<>();
        if (Files.isRegularFile(seed.resolve("member/snap/db"))) out.add("member/snap/db");
        try (Stream<Path> wal = Files.list(seed.resolve("member/wal"))) {
            wal.filter(p -> p.toString().endsWith(".wal"))
                    .sorted()
                    .findFirst()
                    .ifPresent(p -> out.add(seed.relativize(p).toString()));
        }
        try (Stream<Path> snap = Files.list(seed.resolve("member/snap"))) {
            snap.filter(p -> p.toString().endsWith(".snap"))
                    .sorted()
                    .reduce((a, b) -> b)
                    .ifPresent(p -> out.add(seed.relativize(p).toString()));
        }
        return out;
    }

    /** The bytes in use: up to the last non-zero byte (a WAL segment is preallocated with zeros). */
    private static long used(Path file) throws IOException {
        byte[] b = Files.readAllBytes(file);
        int last = b.length - 1;
        while (last >= 0 && b[last] == 0) last--;
        return Math.max(1, last + 1);
    }

    private static String mutate(Path file, Mutation mutation, long used, Random random) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            long pages = Math.max(1, (used + PAGE - 1) / PAGE);
            long page = random.nextLong(pages);
            switch (mutation) {
                case BIT_FLIPS, PAGE_FLIPS -> {
                    int n = 1 + random.nextInt(8);
                    List<Long> at = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        long offset = mutation == Mutation.BIT_FLIPS
                                ? random.nextLong(used)
                                : Math.min(used - 1, page * PAGE + random.nextInt(PAGE));
                        f.seek(offset);
                        int b = f.read();
                        f.seek(offset);
                        f.write(b ^ (1 << random.nextInt(8)));
                        at.add(offset);
                    }
                    return "at " + at;
                }
                case ZERO_PAGE, RANDOM_PAGE -> {
                    byte[] bytes = new byte[PAGE];
                    if (mutation == Mutation.RANDOM_PAGE) random.nextBytes(bytes);
                    f.seek(page * PAGE);
                    f.write(bytes, 0, (int) Math.min(PAGE, Math.max(1, f.length() - page * PAGE)));
                    return "page " + page;
                }
                case TRUNCATE -> {
                    long to = random.nextLong(used);
                    f.setLength(to);
                    return "to " + to + " bytes";
                }
            }
        }
        throw new IllegalStateException();
    }

    private static void label(Path data, Mutant m) throws IOException {
        Files.writeString(
                data.resolve("version.txt"), new DataVersion(m.release().etcdVersion(), m.api()).format());
    }

    /**
     * A copy of the seed: the file to be mutated copied, every other file a hard link (the read-only
     * commands change nothing; inspect's own test checks that), or everything copied when {@code mutated}
     * is null (migrate writes).
     */
    private static void linkCopy(Path seed, Path to, String mutated) throws IOException {
        try (Stream<Path> walk = Files.walk(seed)) {
            for (Path p : walk.toList()) {
                Path target = to.resolve(seed.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                    Files.setPosixFilePermissions(target, Files.getPosixFilePermissions(p));
                } else if (mutated == null || seed.relativize(p).toString().equals(mutated)) {
                    Files.copy(p, target, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
                } else {
                    Files.createLink(target, p);
                }
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }
}
