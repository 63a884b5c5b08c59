package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.SampleData;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.TreeDigest;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.ondisk.Damage;
import dev.etcdmigrate.ondisk.DataRecords;
import dev.etcdmigrate.process.Children;
import io.etcd.jetcd.ByteSequence;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runner's db check against the field's own tools as oracles (docs/damage.md, "The differential"): dbs written
 * by every bundled etcd3 line at several sizes, damaged (bits flipped in one page, pages swapped or zeroed, the file
 * truncated, a stale or torn meta page), judged by
 *
 * <ul>
 *   <li>the runner: the check a start makes before any etcd runs when version.txt does not name its target
 *       ({@link DataRecords#damageFound} reading every db page);
 *   <li>{@code bbolt check} of the bbolt version the target etcd pins (read from the binary's module list, or
 *       from the release's go.mod where the binary carries none), built from the Go module proxy and cached
 *       ({@code scripts/build-bbolt.sh});
 *   <li>the target etcd started on a copy (it serves a write, or it exits or fails to serve before the deadline),
 *       where the runner and bbolt's check both pass (a runner refusal cannot be a miss).
 * </ul>
 *
 * A disagreement is a case the runner passes that an oracle rejects. Healthy dbs (every seed, and snapshots taken
 * while keys are written) must pass all three. Seeded: {@code -Ddiff.seed=N} replays a run, {@code -Ddiff.only=I}
 * one case of it; {@code -Ddiff.cases}, {@code -Ddiff.healthy} (per line), {@code -Ddiff.etcd} (at most so many etcd
 * oracle runs, on the first cases the runner and bbolt pass; -1: on every one, and on every seed), {@code
 * -Ddiff.sizes} (keys per seed) size it. The summary goes to stdout and
 * {@code target/db-differential.txt}.
 *
 * <p>A seed's data dirs are etcd's own writes, and no two are the same bytes: etcd commits its batches on a timer,
 * the sample keys are written several at a time, and the member's URLs carry ports picked at run time. So the data
 * dirs of a seed are written once and kept ({@code -Ddiff.seeds=DIR}, by default under {@code
 * ~/.cache/etcd-migrate/db-differential}, one dir per seed, sizes, snapshot count and line): a replay damages the
 * same bytes. The summary prints their digest (a run with the same seed and digest has the same counts);
 * {@code -Ddiff.fresh=true} writes them again.
 */
class DbDifferentialIT {

    private static final long SEED = Long.getLong("diff.seed", 20261128L);
    private static final int CASES = Integer.getInteger("diff.cases", 500);
    private static final int HEALTHY = Integer.getInteger("diff.healthy", 15);
    private static final int ETCD_RUNS = Integer.getInteger("diff.etcd", 100);
    private static final int ONLY = Integer.getInteger("diff.only", -1);
    private static final List<Integer> SIZES = Arrays.stream(
                    System.getProperty("diff.sizes", "40,1200").split(","))
            .map(String::strip)
            .map(Integer::parseInt)
            .toList();
    private static final Duration ETCD_DEADLINE = Duration.ofSeconds(30);
    private static final Path SEED_CACHE = Path.of(System.getProperty(
            "diff.seeds",
            Path.of(System.getProperty("user.home"), ".cache", "etcd-migrate", "db-differential")
                    .toString()));
    private static final boolean FRESH = Boolean.getBoolean("diff.fresh");
    /** Part of the kept seeds' name: another way of writing them is another name, never an old dir taken as new. */
    private static final String SEEDING = "v1";
    /**
     * Where a release's binary carries no module list (built from a vendor tree): the bbolt its go.mod requires.
     * etcd v3.4.23's go.mod: go.etcd.io/bbolt v1.3.6.
     */
    private static final Map<String, String> BBOLT_FROM_GO_MOD = Map.of("3.4.23", "go.etcd.io/bbolt@v1.3.6");

    enum Mutation {
        FLIPS_IN_PAGE,
        FLIPS_IN_ELEMENTS,
        SWAP_PAGES,
        SWAP_PAGE_BODIES,
        ZERO_PAGE,
        TRUNCATE,
        STALE_META,
        TORN_META
    }

    /** A seed data dir: the line that wrote it, its size, the target whose etcd and bbolt judge its damage. */
    record Seed(Release line, int keys, Path dir, Release target) {
        String name() {
            return line.version() + "/" + keys + " keys";
        }
    }

    private final Log quiet = Log.text(new PrintStream(OutputStream.nullOutputStream()));
    private final Map<String, Path> bbolts = new TreeMap<>();
    private final Map<String, int[]> counts = new LinkedHashMap<>();
    private final List<String> disagreements = new ArrayList<>();
    private String seedDigest = "";

    @TempDir
    Path dir;

    @Test
    void theRunnerRefusesWhatBboltsCheckOrTheTargetEtcdRejectsAndPassesHealthyDbs() throws Exception {
        System.out.println("DbDifferentialIT seed " + SEED + " (replay: -Ddiff.seed=" + SEED + " -Ddiff.cases=" + CASES
                + " -Ddiff.sizes="
                + String.join(",", SIZES.stream().map(String::valueOf).toList())
                + "; one case: -Ddiff.only=I)");
        long start = System.nanoTime();
        List<Release> lines = EtcdFixture.V3_RELEASES;
        Path kept = keptSeeds(lines, start);
        List<Seed> seeds = new ArrayList<>();
        List<Healthy> healthy = new ArrayList<>();
        for (Release line : lines) {
            Release target = lines.get(Math.min(lines.indexOf(line) + 1, lines.size() - 1));
            for (int s = 0; s < SIZES.size(); s++) {
                Seed seed = new Seed(line, SIZES.get(s), seedDir(kept, line, SIZES.get(s)), target);
                seeds.add(seed);
                // the first size also yields the healthy snapshots, taken while more keys were written
                if (s == 0) {
                    for (int n = 0; n < HEALTHY; n++) healthy.add(new Healthy(seed, snapshot(kept, line, n)));
                }
                healthy.add(new Healthy(seed, seed.dir().resolve("member/snap/db")));
            }
        }
        seedDigest = HexFormat.of()
                .formatHex(MessageDigest.getInstance("SHA-256")
                        .digest(TreeDigest.of(kept).toString().getBytes(StandardCharsets.UTF_8)))
                .substring(0, 16);
        System.out.println("  seeds " + kept + ", sha256 " + seedDigest);
        long seeded = System.nanoTime();
        for (Seed seed : seeds) bbolt(seed.target());
        long built = System.nanoTime();

        healthyDbs(seeds, healthy);
        long healthyDone = System.nanoTime();

        int etcdRuns = 0;
        for (int i = 0; i < CASES; i++) {
            if (ONLY >= 0 && i != ONLY) continue;
            Random random = new Random(SEED * 1_000_003L + i);
            Seed seed = seeds.get(random.nextInt(seeds.size()));
            Mutation mutation = Mutation.values()[random.nextInt(Mutation.values().length)];
            Path data = dir.resolve("case");
            String detail = damagedCopy(seed, data, mutation, random);
            String what = "case " + i + ": " + seed.name() + " " + mutation + " " + detail;
            count("cases", 0);
            List<Damage> found = DataRecords.damageFound(data, Optional.empty(), true);
            boolean runnerPasses = found.isEmpty();
            count("runner", runnerPasses ? 1 : 0);
            Verdict bbolt = bboltCheck(bbolt(seed.target()), data.resolve("member/snap/db"));
            count("bbolt", bbolt.passes() ? 1 : 0);
            count("mutation " + mutation, bbolt.passes() ? 1 : 0);
            if (runnerPasses && !bbolt.passes()) {
                disagreements.add(what + ": the runner passes it, bbolt check rejects it:\n  " + bbolt.output());
            } else if (runnerPasses && (ETCD_RUNS < 0 || etcdRuns < ETCD_RUNS)) {
                etcdRuns++;
                Verdict served = etcdStarts(seed.target(), data);
                count("etcd", served.passes() ? 1 : 0);
                if (!served.passes())
                    disagreements.add(what + ": the runner passes it, etcd "
                            + seed.target().version() + " does not serve on it:\n  " + served.output());
            } else if (!runnerPasses && bbolt.passes()) {
                count("runner only", 0); // stricter than bbolt's check: etcd's reads or the layout it writes
            }
            deleteTree(data);
            if ((i + 1) % 500 == 0)
                System.out.printf(
                        "  %d cases, %d disagreements, %.0f s%n",
                        i + 1, disagreements.size(), (System.nanoTime() - start) / 1e9);
        }
        long end = System.nanoTime();
        String summary = summary(
                seeds,
                healthy.size(),
                seeded - start,
                built - seeded,
                healthyDone - built,
                end - healthyDone,
                end - start);
        System.out.print(summary);
        Files.writeString(Path.of("target", "db-differential.txt"), summary);
        assertTrue(
                disagreements.isEmpty(),
                disagreements.size() + " disagreement(s), seed " + SEED + ":\n" + String.join("\n", disagreements));
    }

    /** A healthy db: a seed's own, or a snapshot taken while its line wrote (checked in a copy of the seed). */
    record Healthy(Seed seed, Path db) {}

    /** Every healthy db passes the runner and bbolt; each seed also serves at its target when every run is asked. */
    private void healthyDbs(List<Seed> seeds, List<Healthy> healthy) throws Exception {
        for (Healthy h : healthy) {
            Seed seed = h.seed();
            Path db = h.db();
            Path data = dir.resolve("healthy");
            linkCopy(seed.dir(), data, "member/snap/db");
            Files.copy(db, data.resolve("member/snap/db"));
            List<Damage> found = DataRecords.damageFound(data, Optional.empty(), true);
            count("healthy", found.isEmpty() ? 1 : 0);
            if (!found.isEmpty()) disagreements.add("healthy " + db + ": the runner refuses it: " + found);
            // on the copy: bbolt's check opens the file for writing, and its bbolt commits a freelist into a db whose
            // etcd kept none (3.4+), which would change the kept seed under every later case
            Verdict bbolt = bboltCheck(bbolt(seed.target()), data.resolve("member/snap/db"));
            count("healthy bbolt", bbolt.passes() ? 1 : 0);
            if (!bbolt.passes()) disagreements.add("healthy " + db + ": bbolt check rejects it: " + bbolt.output());
            deleteTree(data);
        }
        if (ETCD_RUNS < 0) {
            for (Seed seed : seeds) {
                Verdict served = etcdStarts(seed.target(), seed.dir());
                count("healthy etcd", served.passes() ? 1 : 0);
                if (!served.passes())
                    disagreements.add("healthy " + seed.name() + ": etcd "
                            + seed.target().version() + " does not serve on it: " + served.output());
            }
        }
    }

    /**
     * The seeds' data dirs and snapshots of this seed, sizes, snapshot count and line: the kept ones, or written
     * now and kept (beside, then renamed into place, so an interrupted run leaves no half a set under the name).
     */
    private Path keptSeeds(List<Release> lines, long start) throws Exception {
        String name = String.join(
                "-",
                SEEDING,
                String.valueOf(SEED),
                String.join("_", SIZES.stream().map(String::valueOf).toList()),
                "h" + HEALTHY,
                String.join("_", lines.stream().map(Release::version).toList()));
        Path kept = SEED_CACHE.resolve(name);
        if (Files.isDirectory(kept) && !FRESH) return kept;
        Files.createDirectories(SEED_CACHE);
        Path partial = Files.createTempDirectory(SEED_CACHE, name + ".partial-");
        try {
            try (EtcdFixture etcd = new EtcdFixture()) {
                for (Release line : lines) {
                    for (int s = 0; s < SIZES.size(); s++) {
                        writeSeed(etcd, line, SIZES.get(s), partial, s == 0 ? HEALTHY : 0);
                        System.out.printf(
                                "  seeded %s/%d keys, %.0f s%n",
                                line.version(), SIZES.get(s), (System.nanoTime() - start) / 1e9);
                    }
                }
            }
            try (Stream<Path> files = Files.walk(partial)) {
                for (Path file : files.filter(Files::isRegularFile).toList()) sparse(file);
            }
            if (Files.isDirectory(kept)) deleteTree(kept); // written afresh (-Ddiff.fresh=true)
            try {
                Files.move(partial, kept, StandardCopyOption.ATOMIC_MOVE);
            } catch (java.nio.file.FileAlreadyExistsException | java.nio.file.DirectoryNotEmptyException other) {
                // a run beside this one kept its seeds first: theirs are used, so both runs judge the same bytes
            }
            return kept;
        } finally {
            deleteTree(partial);
        }
    }

    /**
     * The same bytes without the blocks of zeros on disk: each WAL segment etcd preallocates is 64 MiB of mostly zeros,
     * a gigabyte over the seeds, which would otherwise stay in the cache.
     */
    private static void sparse(Path file) throws IOException {
        long size = Files.size(file);
        if (size < (1 << 20)) return;
        Path holes = file.resolveSibling(file.getFileName() + ".sparse");
        byte[] block = new byte[4096];
        try (java.nio.channels.FileChannel in = java.nio.channels.FileChannel.open(file);
                java.nio.channels.FileChannel out = java.nio.channels.FileChannel.open(
                        holes, java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE)) {
            for (long at = 0; at < size; at += block.length) {
                ByteBuffer b = ByteBuffer.wrap(block, 0, (int) Math.min(block.length, size - at));
                while (b.hasRemaining() && in.read(b, at + b.position()) >= 0) {}
                b.flip();
                boolean zeros = true;
                for (int i = 0; i < b.limit() && zeros; i++) zeros = block[i] == 0;
                if (!zeros) {
                    while (b.hasRemaining()) out.write(b, at + b.position());
                }
            }
            if (out.size() < size) out.write(ByteBuffer.allocate(1), size - 1); // the last byte is a zero, as read
        }
        Files.setPosixFilePermissions(holes, Files.getPosixFilePermissions(file));
        Files.move(holes, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private static Path seedDir(Path kept, Release line, int keys) {
        return kept.resolve("seed-" + line.version() + "-" + keys);
    }

    private static Path snapshot(Path kept, Release line, int n) {
        return kept.resolve("snapshots-" + line.version()).resolve("db-" + n);
    }

    /**
     * A data dir of {@code keys} sample keys written by {@code line}; then {@code snapshots} rounds of a few more
     * keys (some deleted), each followed by a snapshot of the db.
     */
    private static void writeSeed(EtcdFixture etcd, Release line, int keys, Path kept, int snapshots) throws Exception {
        Path seedDir = seedDir(kept, line, keys);
        etcd.seed(line, seedDir, keys);
        if (snapshots == 0) return;
        Path shots = snapshot(kept, line, 0).getParent();
        Files.createDirectories(shots);
        Random random = new Random(SEED ^ line.version().hashCode());
        etcd.withClient(line, seedDir, client -> {
            for (int n = 0; n < snapshots; n++) {
                int more = 1 + random.nextInt(60);
                for (int k = 0; k < more; k++) {
                    String key = "/registry/more/" + n + "/" + k;
                    byte[] value = new byte[random.nextInt(2048)];
                    random.nextBytes(value);
                    client.getKVClient()
                            .put(SampleData.bytes(key), ByteSequence.from(value))
                            .get(30, TimeUnit.SECONDS);
                }
                if (n % 3 == 2)
                    client.getKVClient()
                            .delete(SampleData.bytes("/registry/more/" + (n - 1) + "/0"))
                            .get(30, TimeUnit.SECONDS);
                Path shot = snapshot(kept, line, n);
                try (OutputStream out = Files.newOutputStream(shot)) {
                    client.getMaintenanceClient().snapshot(out).get(60, TimeUnit.SECONDS);
                }
            }
        });
    }

    /** A copy of the seed (hard links but for the db) with its db damaged; returns where. */
    private String damagedCopy(Seed seed, Path data, Mutation mutation, Random random) throws IOException {
        linkCopy(seed.dir(), data, "member/snap/db");
        Path db = data.resolve("member/snap/db");
        byte[] bytes;
        long fileSize;
        int pageSize;
        long pages;
        try (RandomAccessFile f =
                new RandomAccessFile(seed.dir().resolve("member/snap/db").toFile(), "r")) {
            fileSize = f.length();
            ByteBuffer meta = read(f, 0, 80);
            pageSize = meta.getInt(24);
            ByteBuffer meta1 = read(f, pageSize, 80);
            long highWater = Math.max(meta.getLong(56), meta1.getLong(56));
            pages = Math.min(highWater, fileSize / pageSize);
            bytes = new byte[(int) (pages * pageSize)];
            f.seek(0);
            f.readFully(bytes);
        }
        ByteBuffer b = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
        int current = b.getLong(64) >= b.getLong(pageSize + 64) ? 0 : 1;
        long page = 2 + random.nextLong(Math.max(1, pages - 2));
        int at = (int) (page * pageSize);
        long newSize = fileSize;
        String detail;
        switch (mutation) {
            case FLIPS_IN_PAGE, FLIPS_IN_ELEMENTS -> {
                int count = Short.toUnsignedInt(b.getShort(at + 10));
                int span = mutation == Mutation.FLIPS_IN_PAGE
                        ? pageSize
                        : Math.min(pageSize, 16 + 16 * Math.max(1, count));
                int flips = 1 + random.nextInt(8);
                List<Integer> where = new ArrayList<>();
                for (int k = 0; k < flips; k++) {
                    int o = random.nextInt(span);
                    bytes[at + o] ^= (byte) (1 << random.nextInt(8));
                    where.add(o);
                }
                detail = "page " + page + " at " + where;
            }
            case SWAP_PAGES, SWAP_PAGE_BODIES -> {
                long other = 2 + random.nextLong(Math.max(1, pages - 2));
                int from = mutation == Mutation.SWAP_PAGES ? 0 : 16;
                byte[] tmp = Arrays.copyOfRange(bytes, at + from, at + pageSize);
                System.arraycopy(bytes, (int) (other * pageSize) + from, bytes, at + from, pageSize - from);
                System.arraycopy(tmp, 0, bytes, (int) (other * pageSize) + from, pageSize - from);
                detail = "pages " + page + " and " + other;
            }
            case ZERO_PAGE -> {
                Arrays.fill(bytes, at, at + pageSize, (byte) 0);
                detail = "page " + page;
            }
            case TRUNCATE -> {
                newSize = random.nextBoolean()
                        ? (2 + random.nextLong(Math.max(1, pages - 1))) * pageSize
                        : 2L * pageSize + random.nextLong(Math.max(1, pages * pageSize - 2L * pageSize));
                detail = "to " + newSize + " of " + fileSize + " bytes";
            }
            case STALE_META -> {
                // the current meta page's body replaced by the other's: the db as of the transaction before
                int to = current * pageSize;
                int from = (1 - current) * pageSize;
                System.arraycopy(bytes, from + 16, bytes, to + 16, 64);
                detail = "meta " + current + " as meta " + (1 - current);
            }
            case TORN_META -> {
                int o = current * pageSize + 16 + random.nextInt(64);
                bytes[o] ^= (byte) (1 << random.nextInt(8));
                detail = "meta " + current + " byte " + (o - current * pageSize);
            }
            default -> throw new AssertionError(mutation);
        }
        try (RandomAccessFile f = new RandomAccessFile(db.toFile(), "rw")) {
            f.write(bytes, 0, (int) Math.min(bytes.length, newSize));
            f.setLength(newSize);
        }
        return detail;
    }

    record Verdict(boolean passes, String output) {}

    /**
     * bbolt check: passes when it exits 0 saying OK (a panic, a fault or a finding is a rejection). It may write
     * to {@code db} (it opens it for writing): only ever given a copy.
     */
    private static Verdict bboltCheck(Path bbolt, Path db) throws Exception {
        Process p = new ProcessBuilder(bbolt.toString(), "check", db.toString())
                .redirectErrorStream(true)
                .start();
        try {
            p.getOutputStream().close();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(120, TimeUnit.SECONDS)) return new Verdict(false, "bbolt check did not end in 120 s");
            boolean ok =
                    p.exitValue() == 0 && output.lines().anyMatch(l -> l.strip().equals("OK"));
            return new Verdict(ok, firstLines(output));
        } finally {
            p.destroyForcibly();
            p.waitFor();
        }
    }

    /**
     * The target etcd on a full copy of the data dir: serves a write within the deadline, or not. An etcd that is
     * still running at the deadline without serving gets a second start with three times the deadline: on a loaded
     * machine a slow start is not a refusal.
     */
    /**
     * etcd's verdict as the runner meets it: an etcd that died in its own start race (catalog: line.startRaces, which
     * a healthy start meets too, docs/etcd-start-panic.md) is started again on a fresh copy, up to twice, as the
     * runner's own start does; one that did not serve in time gets a longer deadline once.
     */
    private Verdict etcdStarts(Release target, Path data) throws Exception {
        Verdict first = etcdStarts(target, data, ETCD_DEADLINE);
        for (int again = 0; again < 2 && raced(target, first); again++) {
            count("etcd start races", 1);
            first = etcdStarts(target, data, ETCD_DEADLINE);
        }
        if (first.passes() || !first.output().contains("within")) return first;
        return etcdStarts(target, data, ETCD_DEADLINE.multipliedBy(3));
    }

    private static boolean raced(Release target, Verdict verdict) {
        return !verdict.passes() && target.line().startRaces().stream().anyMatch(verdict.output()::contains);
    }

    private Verdict etcdStarts(Release target, Path data, Duration deadline) throws Exception {
        Path copy = dir.resolve("etcd-copy");
        linkCopy(data, copy, null);
        // its own children: stopping them all (also when the start fails) ends this registry
        Children children = new Children(Duration.ofSeconds(10));
        try {
            PrivateEtcd.Settings settings = new PrivateEtcd.Settings(
                    new BinDir(EtcdFixture.binDir()),
                    "it",
                    FreePorts.pick(),
                    List.of(),
                    deadline,
                    Duration.ofSeconds(10),
                    System.getenv(),
                    GatewayClient.newHttpClient());
            try (PrivateEtcd etcd = PrivateEtcd.start(target, copy, settings, List.of(), quiet, children)) {
                etcd.awaitWrite(deadline);
                etcd.stop(Duration.ofSeconds(10));
                return new Verdict(true, "served");
            } catch (Exception e) {
                return new Verdict(false, firstLines(String.valueOf(e.getMessage())));
            }
        } finally {
            children.stopAll();
            deleteTree(copy);
        }
    }

    /** The bbolt tool of the bbolt version {@code target}'s etcd pins, built if missing. */
    private Path bbolt(Release target) throws Exception {
        String module = pinnedBbolt(target);
        Path cached = bbolts.get(module);
        if (cached != null) return cached;
        Path script =
                Path.of("..", "scripts", "build-bbolt.sh").toAbsolutePath().normalize();
        Process p = new ProcessBuilder("bash", script.toString(), module)
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try {
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            assertTrue(p.waitFor(15, TimeUnit.MINUTES), "building bbolt " + module + " within 15 minutes");
            assertEquals(0, p.exitValue(), "building bbolt " + module + " (needs Go: /usr/local/go/bin): " + out);
            Path tool = Path.of(out.lines().reduce((a, c) -> c).orElseThrow());
            bbolts.put(module, tool);
            return tool;
        } finally {
            p.destroyForcibly();
            p.waitFor();
        }
    }

    /** MODULE@VERSION of the bbolt the target's etcd binary was built with (`go version -m`), or its go.mod's. */
    private static String pinnedBbolt(Release target) throws Exception {
        Path binary = EtcdFixture.binDir().resolve("etcd-" + target.version());
        Process p = new ProcessBuilder("/usr/local/go/bin/go", "version", "-m", binary.toString())
                .redirectErrorStream(true)
                .start();
        String out;
        try {
            p.getOutputStream().close();
            out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(60, TimeUnit.SECONDS);
        } finally {
            p.destroyForcibly();
            p.waitFor();
        }
        String found = null;
        for (String line : out.lines().toList()) {
            String[] f = line.strip().split("\\s+");
            if (f.length >= 3 && f[0].equals("dep") && isBbolt(f[1])) found = f[1] + "@" + f[2];
            else if (found != null && f.length >= 3 && f[0].equals("=>") && isBbolt(f[1])) found = f[1] + "@" + f[2];
        }
        if (found != null) return found;
        String fromGoMod = BBOLT_FROM_GO_MOD.get(target.version());
        assertTrue(fromGoMod != null, "no bbolt in etcd " + target.version() + "'s module list:\n" + out);
        return fromGoMod;
    }

    private static boolean isBbolt(String module) {
        return module.equals("go.etcd.io/bbolt")
                || module.equals("github.com/coreos/bbolt")
                || module.equals("github.com/boltdb/bolt");
    }

    /** counts[name] = {seen, passed}. */
    private void count(String name, int passed) {
        int[] c = counts.computeIfAbsent(name, k -> new int[2]);
        c[0]++;
        c[1] += passed;
    }

    private int[] counted(String name) {
        return counts.getOrDefault(name, new int[2]);
    }

    private String summary(
            List<Seed> seeds,
            int healthy,
            long seedNanos,
            long buildNanos,
            long healthyNanos,
            long caseNanos,
            long totalNanos) {
        StringBuilder s = new StringBuilder();
        int[] cases = counted("cases");
        int[] runner = counted("runner");
        int[] bbolt = counted("bbolt");
        int[] etcd = counted("etcd");
        s.append(String.format(
                "DbDifferentialIT seed %d (seed data sha256 %s): %d cases; bbolt check rejected %d, passed %d; etcd started %d times"
                        + " (on runner passes), served %d, failed %d; runner refused %d, passed %d (refused where"
                        + " bbolt passed: %d); disagreements %d; healthy dbs %d (runner refused %d, bbolt rejected"
                        + " %d, etcd failed %d of %d seeds); %.1f s%n",
                SEED,
                seedDigest,
                cases[0],
                bbolt[0] - bbolt[1],
                bbolt[1],
                etcd[0],
                etcd[1],
                etcd[0] - etcd[1],
                runner[0] - runner[1],
                runner[1],
                counted("runner only")[0],
                disagreements.size(),
                healthy,
                counted("healthy")[0] - counted("healthy")[1],
                counted("healthy bbolt")[0] - counted("healthy bbolt")[1],
                counted("healthy etcd")[0] - counted("healthy etcd")[1],
                counted("healthy etcd")[0],
                totalNanos / 1e9));
        s.append(String.format(
                "  seeds %d (%s keys per line, lines %s): %.1f s; bbolt tools %s: %.1f s; healthy: %.1f s; cases: %.1f s%n",
                seeds.size(),
                SIZES,
                EtcdFixture.V3_RELEASES.stream().map(Release::version).toList(),
                seedNanos / 1e9,
                bbolts.keySet(),
                buildNanos / 1e9,
                healthyNanos / 1e9,
                caseNanos / 1e9));
        for (Mutation m : Mutation.values()) {
            int[] c = counted("mutation " + m);
            s.append(String.format("  %-18s %4d cases, bbolt passed %d%n", m, c[0], c[1]));
        }
        return s.toString();
    }

    private static String firstLines(String output) {
        return output.lines().limit(6).reduce((a, b) -> a + "\n  " + b).orElse("");
    }

    private static ByteBuffer read(RandomAccessFile f, long at, int length) throws IOException {
        byte[] b = new byte[length];
        f.seek(at);
        f.readFully(b);
        return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A copy of {@code from}: hard links but for {@code copied} (null: everything copied, for an etcd to write). */
    private static void linkCopy(Path from, Path to, String copied) throws IOException {
        try (Stream<Path> walk = Files.walk(from)) {
            for (Path p : walk.toList()) {
                String rel = from.relativize(p).toString();
                Path target = to.resolve(rel);
                if (Files.isDirectory(p)) {
                    Files.createDirectories(target);
                    Files.setPosixFilePermissions(target, Files.getPosixFilePermissions(p));
                } else if (copied != null && rel.equals(copied)) {
                    continue; // written by the caller
                } else if (copied == null) {
                    Files.copy(p, target, StandardCopyOption.COPY_ATTRIBUTES);
                } else {
                    try {
                        Files.createLink(target, p);
                    } catch (IOException | UnsupportedOperationException otherFileSystem) {
                        Files.copy(p, target); // the kept seeds on another file system than the case
                    }
                }
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root)) return;
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) Files.delete(p);
        }
    }
}
