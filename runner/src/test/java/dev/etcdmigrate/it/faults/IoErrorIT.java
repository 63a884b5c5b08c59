package dev.etcdmigrate.it.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.it.support.EtcdFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * I/O errors at the runner's own file-system calls: one clean run on the power-cut file system lists
 * every call the runner (a java process) makes on the data dir (open, create, read, write, truncate,
 * fallocate, mkdir, unlink, rmdir, rename, link, chmod, fsync, directory fsync); then, for chosen calls
 * in turn, the same run again with that one call failing with EIO or ENOSPC. The run must exit 1 with a
 * termination message that names the error and the file, and a rerun without the fault must converge
 * with every key intact. (A failed call the runner can do without is allowed only when that run itself
 * converges: exit 0 at the target with every key.)
 *
 * <p>System properties: {@code ioerror.faults} (calls per step type, default 2: one EIO, one ENOSPC; {@code every}: each
 * distinct call (op and path, its first occurrence) once with EIO and once with ENOSPC, what the powercut-long profile
 * sets), {@code powercut.seed}, {@code fault.scenarios}.
 */
class IoErrorIT {

    private static final Map<Integer, String> ERRORS = Map.of(5, "Input/output error", 28, "No space left on device");

    private final EtcdFixture etcd = new EtcdFixture();

    @AfterEach
    void stopAll() {
        etcd.close();
    }

    /** The kth call of op on path (relative to the mount, backup stamps as STAMP, etcd's .snap/.wal names as SEQ). */
    record Call(int k, String op, String path) {
        String fault(int errno) {
            return op + ":" + path + ":" + k + ":" + errno;
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(FaultScenario.class)
    void eachFailingCallFailsTheRunNamingItAndARerunConverges(FaultScenario scenario, @TempDir Path dir)
            throws Exception {
        failEachChosenCall(scenario, dir);
    }

    /**
     * The same for a restore from a snapshot ({@link RestoreScenario}): the runner's reads of the snapshot, its
     * marker, the member dir's move into the backup, the staging's sync and rename, version.txt. A failed run keeps
     * the member's data before the restore whole (member/ still, or the backup inspect lists) and may end refused
     * (exit 3) where a check could not read what it checks.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(RestoreScenario.class)
    void eachFailingCallOfARestoreKeepsTheDataAndARerunConverges(RestoreScenario scenario, @TempDir Path dir)
            throws Exception {
        failEachChosenCall(scenario, dir);
    }

    private void failEachChosenCall(CutScenario scenario, Path dir) throws Exception {
        scenario.assumeSelected();
        String budget = System.getProperty("ioerror.faults", "2");
        long seed = Long.getLong("powercut.seed", System.nanoTime());
        Random random = new Random(seed + scenario.ordinal());

        FaultScenario.Seeded seeded = scenario.seed(etcd, dir.resolve("base/data"));
        PowerCutIT.Recording clean = PowerCutIT.record(scenario, seeded, dir, Optional.empty());
        assertEquals(0, clean.exitCode(), clean.output());
        List<Call> calls = calls(Files.readAllLines(dir.resolve("work/log")));
        List<Fault> chosen = new ArrayList<>(
                budget.equals("every") ? everySite(calls) : alternate(choose(calls, Integer.parseInt(budget), random)));
        for (Fault regression : regressions(scenario, calls)) {
            if (!chosen.contains(regression)) chosen.add(regression);
        }
        Map<String, Long> kinds = new TreeMap<>();
        calls.forEach(c -> kinds.merge(c.op(), 1L, Long::sum));
        System.out.printf(
                "[ioerror] %s: %d runner calls %s at %d distinct sites; %d faults, -Dpowercut.seed=%d%n",
                scenario.name(), calls.size(), kinds, everySite(calls).size() / 2, chosen.size(), seed);

        List<String> failures = new ArrayList<>();
        Map<String, Integer> outcomes = new TreeMap<>();
        long start = System.nanoTime();
        for (Fault fault : chosen) {
            // etcd2 TTLs run in wall time: a key that runs out meanwhile is rightly dropped, which the seed does not
            // know
            if (java.time.Instant.now().plusSeconds(120).isAfter(seeded.usableUntil())) {
                System.out.println(
                        "[ioerror] " + scenario.name() + ": the seed's shortest TTL runs out; stopping here");
                break;
            }
            Call call = fault.call();
            int errno = fault.errno();
            String what = scenario.name() + " " + call.op() + " #" + call.k() + " of " + call.path() + " fails with "
                    + ERRORS.get(errno);
            try {
                PowerCutIT.Recording faulted = PowerCutIT.record(scenario, seeded, dir, Optional.of(call.fault(errno)));
                boolean fired =
                        Files.readString(dir.resolve("work/log")).contains(" R fault " + call.op() + " " + errno);
                String outcome;
                if (!fired) {
                    // a later call of a path (the 61st write of a log) may not come again; the first one must: else the
                    // path is not named the same in the next run and the fault proves nothing
                    assertTrue(call.k() > 1, "the fault never fired: the path is not the same in the next run");
                    assertEquals(0, faulted.exitCode(), faulted.output());
                    outcome = "not-reached";
                } else if (faulted.exitCode() == 0) {
                    // the runner did without this call: then this very run must have converged
                    PowerCutIT.assertConvergedAfterUnmount(scenario, seeded, etcd, dir);
                    outcome = "tolerated";
                } else {
                    assertTrue(
                            scenario.failureExits().contains(faulted.exitCode()),
                            "exit " + faulted.exitCode() + ":\n" + faulted.output());
                    scenario.assertNothingLost(seeded, dir.resolve("backing/data"));
                    String reason = faulted.reason();
                    String name = Path.of(call.path()).getFileName().toString();
                    java.util.regex.Pattern named = java.util.regex.Pattern.compile(java.util.regex.Pattern.quote(name)
                            .replace("STAMP", "\\E[0-9]{8}T[0-9]{6}Z\\Q")
                            .replace("SEQ", "\\E[0-9a-f]{16}-[0-9a-f]{16}\\Q"));
                    assertTrue(
                            reason.contains(ERRORS.get(errno))
                                    && named.matcher(reason).find(),
                            "the termination message names " + ERRORS.get(errno) + " and " + name + ": " + reason);
                    PowerCutIT.Recording rerun = PowerCutIT.runMounted(scenario, seeded, dir, Optional.empty());
                    assertEquals(0, rerun.exitCode(), "the rerun:\n" + rerun.output());
                    PowerCutIT.assertConvergedAfterUnmount(scenario, seeded, etcd, dir);
                    outcome = "failed-then-converged";
                }
                outcomes.merge(outcome, 1, Integer::sum);
                System.out.println("[ioerror] " + what + ": " + outcome);
            } catch (AssertionError | Exception e) {
                String failure = what + ", seed " + seed + ": " + e;
                System.out.println("[ioerror] FAILED " + failure);
                failures.add(failure);
            }
        }
        System.out.printf(
                "[ioerror] %s summary: %d faults %s in %d s; failures %d (-Dpowercut.seed=%d)%n",
                scenario.name(),
                chosen.size(),
                outcomes,
                (System.nanoTime() - start) / 1_000_000_000L,
                failures.size(),
                seed);
        assertEquals(List.of(), failures, "faults not handled");
    }

    /**
     * A read error on etcd's own files during a step (the first read of the db, or of the WAL of etcd2
     * data, by etcd or its tools) fails the step: exit 1, a step-failed event, version.txt still at the
     * start; a rerun without the fault converges.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(FaultScenario.class)
    void aReadErrorOnEtcdsFilesFailsTheStepCleanly(FaultScenario scenario, @TempDir Path dir) throws Exception {
        scenario.assumeSelected();
        FaultScenario.Seeded seeded = scenario.seed(etcd, dir.resolve("base/data"));
        String file = switch (scenario) {
            case CONVERT_TO_V3 -> "data/.etcd-migrate/staging/work/member/wal/0000000000000000-0000000000000000.wal";
            case ROLLBACK_TO_V2 -> "data/.etcd-migrate/staging/work/member/snap/db";
            default -> "data/member/snap/db";
        };
        PowerCutIT.Recording faulted =
                PowerCutIT.record(scenario, seeded, dir, Optional.of("etcd.read:" + file + ":1:5"));
        assertTrue(
                Files.readString(dir.resolve("work/log")).contains(" E fault read 5"),
                "the fault was hit:\n" + faulted.output());
        assertEquals(1, faulted.exitCode(), faulted.output());
        System.out.println("[ioerror] " + scenario.name() + " etcd's first read of " + file + " fails with EIO: "
                + faulted.reason());
        assertTrue(faulted.output().contains("step") && faulted.reason().startsWith("step "), faulted.reason());
        assertEquals(
                scenario.versions().getFirst().format(), Files.readString(dir.resolve("backing/data/version.txt")));
        PowerCutIT.Recording rerun = PowerCutIT.runMounted(scenario, seeded, dir, Optional.empty());
        assertEquals(0, rerun.exitCode(), "the rerun:\n" + rerun.output());
        PowerCutIT.assertConvergedAfterUnmount(scenario, seeded, etcd, dir);
    }

    /**
     * The restore tool's own calls failing from the first one on (a bad sector, a full disk): its read of the
     * snapshot (EIO), its writes (ENOSPC) and its fsync (EIO) of the db it restores into the staging dir. The restore
     * fails (exit 1), the member's data before it kept whole, and a rerun without the fault converges.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "read:restore/snapshot.db:5:named",
                "write:data/.etcd-migrate/restore-staging/member/snap/db:28:named",
                // etcdutl 3.5.35 exits 1 without a word when its db's sync fails: only the exit tells
                "fsync:data/.etcd-migrate/restore-staging/member/snap/db:5:silent"
            })
    void aFailingCallOfTheRestoreToolFailsTheRestoreKeepingTheData(String call, @TempDir Path dir) throws Exception {
        RestoreScenario scenario = RestoreScenario.RESTORE_INTO_35;
        scenario.assumeSelected();
        String[] f = call.split(":");
        FaultScenario.Seeded seeded = scenario.seed(etcd, dir.resolve("base/data"));
        PowerCutIT.Recording faulted =
                PowerCutIT.record(scenario, seeded, dir, Optional.of("etcd." + f[0] + ":" + f[1] + ":1:" + f[2]));
        assertTrue(
                Files.readString(dir.resolve("work/log")).contains(" E fault " + f[0] + " " + f[2]),
                "the fault was hit:\n" + faulted.output());
        assertEquals(1, faulted.exitCode(), faulted.output());
        System.out.println("[ioerror] " + scenario.name() + " the restore tool's " + f[0] + " of " + f[1]
                + " fails with " + ERRORS.get(Integer.parseInt(f[2])) + ": " + faulted.reason());
        // the tool's own words for the error (Go's are lower case), as the termination message carries them
        assertTrue(
                f[3].equals("silent")
                        || faulted.reason()
                                .toLowerCase(java.util.Locale.ROOT)
                                .contains(ERRORS.get(Integer.parseInt(f[2])).toLowerCase(java.util.Locale.ROOT)),
                "the termination message names the error: " + faulted.reason() + "\n" + faulted.output());
        scenario.assertNothingLost(seeded, dir.resolve("backing/data"));
        PowerCutIT.Recording rerun = PowerCutIT.runMounted(scenario, seeded, dir, Optional.empty());
        assertEquals(0, rerun.exitCode(), "the rerun:\n" + rerun.output());
        PowerCutIT.assertConvergedAfterUnmount(scenario, seeded, etcd, dir);
    }

    /** A call to fail and the errno it fails with. */
    record Fault(Call call, int errno) {}

    /**
     * A call whose fault found a defect (docs/power-loss.md, defects 11-14 and 17), failed in every run as its
     * regression.
     */
    record Regression(CutScenario scenario, String op, java.util.function.Predicate<String> path, int errno) {}

    static final List<Regression> REGRESSIONS = List.of(
            // 12: etcd's snapshot names differ between runs; the runner's sync of one must still be faultable
            new Regression(FaultScenario.PATCH_FLOOR, "fsync", p -> p.endsWith("/member/snap/SEQ.snap"), 28),
            // 10, 11: the file-clone probe (fixed names) and the backup copy's files name themselves
            new Regression(FaultScenario.ONLINE_DOWNGRADE, "write", p -> p.equals("data/.clone-probe"), 5),
            new Regression(
                    FaultScenario.ONLINE_DOWNGRADE,
                    "write",
                    p -> p.contains("/backups/") && p.endsWith("/member/snap/db"),
                    28),
            // 13, 14: the conversion's and the rollback's work files
            new Regression(FaultScenario.CONVERT_TO_V3, "write", p -> p.endsWith("/staging/fixes.bin"), 5),
            new Regression(FaultScenario.ROLLBACK_TO_V2, "write", p -> p.endsWith("/staging/dump.bin"), 28),
            // 17: the restore's way to the backup synced, and the member dir's move into it; the runner's first read
            // of the snapshot
            new Regression(
                    RestoreScenario.RESTORE_INTO_35,
                    "fsyncdir",
                    p -> p.equals("data/.etcd-migrate/restore-backups"),
                    5),
            new Regression(RestoreScenario.RESTORE_INTO_35, "rename", p -> p.equals("data/member"), 28),
            new Regression(RestoreScenario.RESTORE_INTO_35, "read", p -> p.equals("restore/snapshot.db"), 5));

    /** This step type's regression faults, at the first matching call of the clean run; a call gone fails the test. */
    static List<Fault> regressions(CutScenario scenario, List<Call> calls) {
        List<Fault> faults = new ArrayList<>();
        for (Regression r : REGRESSIONS) {
            if (r.scenario() != scenario) continue;
            Call call = calls.stream()
                    .filter(c -> c.op().equals(r.op()) && r.path().test(c.path()))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(
                            scenario + ": the run makes no " + r.op() + " call a regression fault names"));
            faults.add(new Fault(call, r.errno()));
        }
        return faults;
    }

    /** The chosen calls failing with EIO and ENOSPC by turns. */
    static List<Fault> alternate(List<Call> calls) {
        List<Fault> faults = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) faults.add(new Fault(calls.get(i), i % 2 == 0 ? 5 : 28));
        return faults;
    }

    /** Each distinct call (op and path) at its first occurrence, with EIO and with ENOSPC. */
    static List<Fault> everySite(List<Call> calls) {
        Map<String, Call> first = new LinkedHashMap<>();
        for (Call c : calls) first.putIfAbsent(c.op() + " " + c.path(), c);
        List<Fault> faults = new ArrayList<>();
        for (Call c : first.values()) {
            faults.add(new Fault(c, 5));
            faults.add(new Fault(c, 28));
        }
        return faults;
    }

    static List<Call> calls(List<String> log) {
        List<Call> calls = new ArrayList<>();
        for (String line : log) {
            String[] f = line.split(" ");
            if (f.length >= 6 && f[1].equals("R") && f[2].equals("call")) {
                calls.add(new Call(
                        Integer.parseInt(f[3]),
                        f[4],
                        java.net.URLDecoder.decode(f[5].replace("+", "%2B"), java.nio.charset.StandardCharsets.UTF_8)));
            }
        }
        return calls;
    }

    /** Round robin over the kinds of call (and, within one, its paths), each in a seeded order: every kind early. */
    static List<Call> choose(List<Call> calls, int budget, Random random) {
        Map<String, List<Call>> byKind = new LinkedHashMap<>();
        for (Call c : calls)
            byKind.computeIfAbsent(c.op(), k -> new ArrayList<>()).add(c);
        List<List<Call>> lists = new ArrayList<>();
        for (List<Call> l : new TreeMap<>(byKind).values()) {
            // one per distinct path first, then the rest
            Map<String, Call> firstPerPath = new LinkedHashMap<>();
            List<Call> rest = new ArrayList<>();
            List<Call> shuffled = new ArrayList<>(l);
            Collections.shuffle(shuffled, random);
            for (Call c : shuffled) {
                if (firstPerPath.putIfAbsent(c.path(), c) != null) rest.add(c);
            }
            List<Call> ordered = new ArrayList<>(firstPerPath.values());
            ordered.addAll(rest);
            lists.add(ordered);
        }
        List<Call> chosen = new ArrayList<>();
        int[] next = new int[lists.size()];
        while (chosen.size() < budget) {
            boolean any = false;
            for (int k = 0; k < lists.size() && chosen.size() < budget; k++) {
                if (next[k] < lists.get(k).size()) {
                    chosen.add(lists.get(k).get(next[k]++));
                    any = true;
                }
            }
            if (!any) break;
        }
        return chosen;
    }
}
