package dev.etcdmigrate.it.input;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.demo.Keyspace;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.it.support.RunnerArgs;
import dev.etcdmigrate.it.support.RunnerProcess;
import dev.etcdmigrate.it.support.ThrowawayCa;
import dev.etcdmigrate.it.support.TreeDigest;
import io.etcd.jetcd.Client;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * etcd's flags after -- in each of Go's spellings: the runner migrates the same member (name, data dir,
 * WAL dir, quota), in exec and --no-exec mode, and the etcd it becomes runs with the same; an ETCD_*
 * variable that duplicates one of them is refused before anything changes. The case that matters most: ETCD_NAME
 * (the Kubernetes image's own variable) with -name=it, 3.6 -> 3.7. The name is the seeded data's own member's
 * ("it"): a start refuses a name the data does not record.
 */
class EtcdCommandLineIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Release NEWEST = EtcdFixture.newest();
    private static final Release PREVIOUS = EtcdFixture.V3_RELEASES.get(EtcdFixture.V3_RELEASES.size() - 2);
    private static final long QUOTA = 3L << 30;

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    enum Spelling {
        TWO_DASHES_NEXT_WORD("--", (f, v) -> List.of("--" + f, v)),
        TWO_DASHES_EQUALS("--", (f, v) -> List.of("--" + f + "=" + v)),
        ONE_DASH_NEXT_WORD("-", (f, v) -> List.of("-" + f, v)),
        ONE_DASH_EQUALS("-", (f, v) -> List.of("-" + f + "=" + v));

        final String dashes;
        private final BiFunction<String, String, List<String>> words;

        Spelling(String dashes, BiFunction<String, String, List<String>> words) {
            this.dashes = dashes;
            this.words = words;
        }

        List<String> args(Map<String, String> flags) {
            List<String> args = new ArrayList<>();
            flags.forEach((f, v) -> args.addAll(words.apply(f, v)));
            return args;
        }
    }

    /** A PREVIOUS member with its WAL outside the data dir, and the peer TLS files of the etcd it becomes. */
    private record Member(Path data, Path wal, Keyspace keys, ThrowawayCa.Pem peer, Path ca) {}

    private Member seed(Path dir) throws Exception {
        Path data = dir.resolve("data");
        Path wal = dir.resolve("wal");
        Keyspace keys = etcd.seed(PREVIOUS, data, 50, "--wal-dir", wal.toString());
        ThrowawayCa certificates = ThrowawayCa.newCa(Files.createDirectories(dir.resolve("pki")));
        return new Member(data, wal, keys, certificates.issue("m1"), certificates.caFile());
    }

    /** The member's flags as the operator gives them to etcd: each of the five the runner reads, and peer TLS. */
    private static Map<String, String> memberFlags(Member m, ServerPorts real) {
        Map<String, String> flags = new LinkedHashMap<>();
        flags.put("name", "it");
        flags.put("data-dir", m.data().toString());
        flags.put("wal-dir", m.wal().toString());
        flags.put("quota-backend-bytes", String.valueOf(QUOTA));
        flags.put("peer-cert-file", m.peer().cert().toString());
        flags.put("peer-key-file", m.peer().key().toString());
        flags.put("peer-trusted-ca-file", m.ca().toString());
        String client = "http://127.0.0.1:" + real.client();
        String peer = "https://127.0.0.1:" + real.peer();
        flags.put("listen-client-urls", client);
        flags.put("advertise-client-urls", client);
        flags.put("listen-peer-urls", peer);
        flags.put("initial-advertise-peer-urls", peer);
        flags.put("initial-cluster", "it=" + peer);
        return flags;
    }

    /** The runner's own flags: no --name and no --data-dir, it takes etcd's. */
    private static List<String> runnerArgs(boolean noExec, List<String> etcdArgs) {
        List<String> args = new ArrayList<>(RunnerArgs.takingEtcds("migrate", NEWEST.version()));
        if (noExec) args.add("--no-exec");
        args.add("--");
        args.addAll(etcdArgs);
        return args;
    }

    /** etcd's arguments spelled one way, a boolean flag (which takes no next word) in front of the rest. */
    private static List<String> etcdArgs(Spelling spelling, Map<String, String> flags) {
        List<String> args = new ArrayList<>(List.of(spelling.dashes + "peer-client-cert-auth"));
        args.addAll(spelling.args(flags));
        return args;
    }

    /** "starting an etcd server" of an etcd's own log: the name, data dir, WAL dir and quota it runs with. */
    private static Map<String, String> startedWith(JsonNode line) {
        return Map.of(
                "name",
                line.path("name").asText(),
                "data-dir",
                line.path("data-dir").asText(),
                "wal-dir",
                line.path("wal-dir").asText(),
                "quota-backend-bytes",
                line.path("quota-backend-bytes").asText());
    }

    private static Map<String, String> expectedStart(Member m) throws Exception {
        return Map.of(
                "name",
                "it",
                "data-dir",
                m.data().toString(),
                "wal-dir",
                m.wal().toString(),
                "quota-backend-bytes",
                String.valueOf(QUOTA));
    }

    /** The private etcd of the step (the target line on the data dir) read the member as the operator's etcd would. */
    private static void assertPrivateEtcdRanAsTheMember(RunnerProcess runner, Member m) throws Exception {
        List<JsonNode> starts = runner.childLines("etcd-" + NEWEST.version()).stream()
                .filter(l -> l.path("msg").asText().equals("starting an etcd server"))
                .toList();
        assertFalse(starts.isEmpty(), runner.output());
        for (JsonNode start : starts) {
            assertEquals(expectedStart(m), startedWith(start), runner.output());
        }
    }

    @ParameterizedTest
    @EnumSource(Spelling.class)
    void eachSpellingMigratesTheSameMemberWithoutExec(Spelling spelling, @TempDir Path dir) throws Exception {
        Member m = seed(dir);
        List<String> args = runnerArgs(true, etcdArgs(spelling, memberFlags(m, FreePorts.pick())));
        try (RunnerProcess runner = RunnerProcess.run(args, Map.of())) {
            assertEquals(0, runner.exitCode(), runner.output());
            assertEquals(1, runner.count("step-finished"), runner.output());
            assertPrivateEtcdRanAsTheMember(runner, m);
        }
        assertMigrated(m);
    }

    @ParameterizedTest
    @EnumSource(Spelling.class)
    void eachSpellingMigratesTheSameMemberAndExecsEtcdWithIt(Spelling spelling, @TempDir Path dir) throws Exception {
        Member m = seed(dir);
        ServerPorts real = FreePorts.pick();
        List<String> etcdArgs = etcdArgs(spelling, memberFlags(m, real));
        try (RunnerProcess runner = RunnerProcess.start(runnerArgs(false, etcdArgs), Map.of())) {
            JsonNode exec = runner.awaitEvent("exec", Duration.ofMinutes(2));
            assertEquals(1, runner.count("step-finished"), runner.output());
            assertPrivateEtcdRanAsTheMember(runner, m);
            List<String> argv = new ArrayList<>();
            exec.path("argv").forEach(a -> argv.add(a.asText()));
            assertEquals(
                    etcdArgs,
                    argv.subList(1, argv.size()),
                    "etcd gets the operator's arguments as given (they name the data dir)");

            // the etcd the runner became: its own reading of the same arguments, and the migrated member served
            try (Client client = Client.builder()
                    .endpoints("http://127.0.0.1:" + real.client())
                    .build()) {
                Keyspace served = awaitKeyspace(client);
                assertEquals(Map.of(), m.keys().differences(served), runner.output());
                assertEquals(
                        "it",
                        client.getClusterClient()
                                .listMember()
                                .get(30, TimeUnit.SECONDS)
                                .getMembers()
                                .getFirst()
                                .getName());
            }
            JsonNode start = ownLines(runner).stream()
                    .filter(l -> l.path("msg").asText().equals("starting an etcd server"))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError(runner.output()));
            assertEquals(expectedStart(m), startedWith(start));
            assertTrue(
                    ownLines(runner).stream()
                            .anyMatch(l -> l.path("msg").asText().equals("starting with peer TLS")),
                    runner.output());

            runner.process().toHandle().destroy(); // SIGTERM to what is now etcd
            assertEquals(143, runner.awaitExit(Duration.ofSeconds(20)), runner.output());
        }
        assertMigrated(m);
    }

    private static void assertMigrated(Member m) throws Exception {
        assertEquals(NEWEST.version() + "/etcd3", Files.readString(m.data().resolve("version.txt")));
        assertFalse(Files.exists(m.data().resolve("member/wal")), "the WAL stays in --wal-dir");
    }

    /** Lines the exec'd etcd printed itself (JSON without the runner's "source"). */
    private static List<JsonNode> ownLines(RunnerProcess runner) {
        List<JsonNode> own = new ArrayList<>();
        for (String line : runner.lines()) {
            if (!line.startsWith("{")) continue;
            try {
                JsonNode json = JSON.readTree(line);
                if (!json.has("source")) own.add(json);
            } catch (java.io.IOException notJson) {
                // a line that is not etcd's JSON
            }
        }
        return own;
    }

    private static Keyspace awaitKeyspace(Client client) throws Exception {
        return Poll.until(
                Duration.ofSeconds(30), Duration.ofMillis(50), "the keyspace read", () -> Keyspace.read(client));
    }

    // ---- ETCD_* duplicates ----------------------------------------------------------------------------

    /** ETCD_NAME with -name, both modes: refused (exit 2, as `--name it` with ETCD_NAME is), nothing changed. */
    @Test
    void etcdNameWithOneDashNameIsRefusedBeforeAnythingChanges(@TempDir Path dir) throws Exception {
        Member m = seed(dir);
        for (boolean noExec : List.of(false, true)) {
            ServerPorts real = FreePorts.pick();
            String client = "http://127.0.0.1:" + real.client();
            List<String> etcdArgs = List.of(
                    "-name=it",
                    "--data-dir",
                    m.data().toString(),
                    "--wal-dir",
                    m.wal().toString(),
                    "--listen-client-urls",
                    client,
                    "--advertise-client-urls",
                    client,
                    "--listen-peer-urls",
                    "http://127.0.0.1:" + real.peer());
            assertRefused(runnerArgs(noExec, etcdArgs), Map.of("ETCD_NAME", "it"), m, "ETCD_NAME", "-name");
        }
    }

    /** Every flag of the member, each spelling, each mode: its variable set too is refused before anything changes. */
    @ParameterizedTest
    @EnumSource(Spelling.class)
    void everyDuplicatingVariableIsRefusedBeforeAnythingChanges(Spelling spelling, @TempDir Path dir) throws Exception {
        Member m = seed(dir);
        Map<String, String> flags = memberFlags(m, FreePorts.pick());
        for (String flag : List.of(
                "name",
                "data-dir",
                "wal-dir",
                "quota-backend-bytes",
                "peer-cert-file",
                "peer-key-file",
                "peer-trusted-ca-file")) {
            String variable = "ETCD_" + flag.toUpperCase(java.util.Locale.ROOT).replace('-', '_');
            for (boolean noExec : List.of(false, true)) {
                assertRefused(
                        runnerArgs(noExec, etcdArgs(spelling, flags)),
                        Map.of(variable, flags.get(flag)),
                        m,
                        variable,
                        spelling.dashes + flag);
            }
        }
        // the boolean in front, too
        assertRefused(
                runnerArgs(true, etcdArgs(spelling, flags)),
                Map.of("ETCD_PEER_CLIENT_CERT_AUTH", "true"),
                m,
                "ETCD_PEER_CLIENT_CERT_AUTH",
                spelling.dashes + "peer-client-cert-auth");
    }

    /** The private etcd of a member rejoining its peers gets the real etcd's peer TLS files: ETCD_CREDS naming others is refused. */
    @ParameterizedTest
    @EnumSource(Spelling.class)
    void peerTlsFlagsAreReadTheSameWayInEachSpelling(Spelling spelling, @TempDir Path dir) throws Exception {
        Member m = seed(dir);
        Map<String, String> flags = memberFlags(m, FreePorts.pick());
        for (boolean noExec : List.of(false, true)) {
            assertRefused(
                    runnerArgs(noExec, etcdArgs(spelling, flags)),
                    Map.of("ETCD_CREDS", "--peer-cert-file=" + m.ca()),
                    m,
                    "ETCD_CREDS",
                    m.ca().toString(),
                    m.peer().cert().toString());
        }
    }

    private static void assertRefused(List<String> args, Map<String, String> env, Member m, String... named)
            throws Exception {
        Map<String, String> data = TreeDigest.of(m.data().toRealPath());
        Map<String, String> wal = TreeDigest.of(m.wal().toRealPath());
        try (RunnerProcess runner = RunnerProcess.run(args, env)) {
            assertEquals(2, runner.exitCode(), runner.output());
            JsonNode ending = runner.ending();
            assertEquals("refused", ending.path("event").asText(), runner.output());
            for (String name : named) {
                assertTrue(
                        ending.path("reason").asText().contains(name),
                        "'" + name + "' in the reason:\n" + runner.output());
            }
            assertEquals(0, runner.count("etcd-started"), runner.output());
            assertEquals(0, runner.count("exec"), runner.output());
        }
        assertEquals(data, TreeDigest.of(m.data().toRealPath()), "data dir byte-identical");
        assertEquals(wal, TreeDigest.of(m.wal().toRealPath()), "WAL dir byte-identical");
    }
}
