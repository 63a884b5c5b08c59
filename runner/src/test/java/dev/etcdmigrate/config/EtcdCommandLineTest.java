package dev.etcdmigrate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.cli.MigrateFlagsTest;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.etcd.backend.BackendQuota;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.BiFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** etcd's command line as Go's flag package and etcd read it, and every reader of it seeing the same. */
class EtcdCommandLineTest {

    /** The four ways Go's flag package takes a value, and etcd's variable standing in for the flag. */
    enum Spelling {
        TWO_DASHES_NEXT_WORD((f, v) -> List.of("--" + f, v)),
        TWO_DASHES_EQUALS((f, v) -> List.of("--" + f + "=" + v)),
        ONE_DASH_NEXT_WORD((f, v) -> List.of("-" + f, v)),
        ONE_DASH_EQUALS((f, v) -> List.of("-" + f + "=" + v)),
        VARIABLE(null);

        private final BiFunction<String, String, List<String>> words;

        Spelling(BiFunction<String, String, List<String>> words) {
            this.words = words;
        }

        /** etcd's arguments and environment giving each flag its value this way. */
        void give(Map<String, String> flags, List<String> args, Map<String, String> env) {
            flags.forEach((f, v) -> {
                if (words == null) env.put(EtcdCommandLine.variable(f), v);
                else args.addAll(words.apply(f, v));
            });
        }

        /** A boolean flag as this spelling's dashes write it: never with the next word. */
        String bool(String flag) {
            return (this == ONE_DASH_NEXT_WORD || this == ONE_DASH_EQUALS ? "-" : "--") + flag;
        }
    }

    private static final Map<String, String> FLAGS = new java.util.LinkedHashMap<>();

    static {
        FLAGS.put("name", "m1");
        FLAGS.put("data-dir", "/var/lib/etcd");
        FLAGS.put("wal-dir", "/var/lib/etcd-wal");
        FLAGS.put("quota-backend-bytes", "3221225472");
        FLAGS.put("peer-cert-file", "/pki/peer.crt");
        FLAGS.put("peer-key-file", "/pki/peer.key");
        FLAGS.put("initial-cluster", "m1=https://10.0.0.1:2380,m2=https://10.0.0.2:2380");
        FLAGS.put("initial-advertise-peer-urls", "https://10.0.0.1:2380");
        FLAGS.put("listen-peer-urls", "https://0.0.0.0:2380");
    }

    /** Every reader of etcd's flags, for each spelling: the same values, the same refusals. */
    @ParameterizedTest
    @EnumSource(Spelling.class)
    void everyReaderSeesTheSameWhateverTheSpelling(Spelling spelling) throws UsageException {
        List<String> etcdArgs = new ArrayList<>();
        Map<String, String> env = MigrateFlagsTest.env();
        if (spelling != Spelling.VARIABLE)
            etcdArgs.add(spelling.bool("peer-client-cert-auth")); // before a flag: takes no word
        spelling.give(FLAGS, etcdArgs, env);
        List<String> args = new ArrayList<>(List.of("--"));
        args.addAll(etcdArgs);
        RunConfig o = MigrateFlagsTest.options(env, args.toArray(String[]::new));

        assertEquals("m1", o.name());
        assertEquals(Path.of("/var/lib/etcd"), o.dataDir());
        assertEquals(Optional.of(Path.of("/var/lib/etcd-wal")), o.walDir());
        assertEquals(OptionalLong.of(3L << 30), BackendQuota.requested(o.etcd()));
        assertEquals(
                "m1=https://10.0.0.1:2380,m2=https://10.0.0.2:2380",
                o.topology().peers().initialCluster());
        assertEquals(2, o.topology().peers().count());
        assertEquals("https://10.0.0.1:2380", o.topology().peers().advertisePeerUrls());
        assertEquals("https://0.0.0.0:2380", o.topology().peers().listenPeerUrls());
        List<String> peerTls =
                new ArrayList<>(List.of("--peer-cert-file=/pki/peer.crt", "--peer-key-file=/pki/peer.key"));
        if (spelling != Spelling.VARIABLE) peerTls.add("--peer-client-cert-auth=true");
        assertEquals(peerTls, ((Topology.Member) o.topology()).peerTls().args());
        assertEquals(etcdArgs, o.finalEtcdArgs(), "etcd names its data dir: nothing added");
        assertEquals(etcdArgs, o.etcdArgs());

        // the same flags with their variables set too: each pair is a duplicate (whether etcd exits on it is its
        // line's)
        Map<String, String> both = new HashMap<>(env);
        FLAGS.keySet().forEach(f -> both.put(EtcdCommandLine.variable(f), FLAGS.get(f)));
        EtcdCommandLine withBoth =
                MigrateFlagsTest.options(both, args.toArray(String[]::new)).etcd();
        List<String> refused = withBoth.duplicateVariables();
        if (spelling == Spelling.VARIABLE) {
            assertEquals(List.of(), refused);
        } else {
            String dashes = spelling.bool("");
            assertEquals(
                    FLAGS.keySet().stream()
                            .map(f -> EtcdCommandLine.variable(f) + " (" + dashes + f + ")")
                            .sorted()
                            .toList(),
                    refused);
        }
    }

    /** ETCD_CREDS is read the same way: its files checked, its quota and --v2-deprecation found. */
    @ParameterizedTest
    @EnumSource(value = Spelling.class, names = "VARIABLE", mode = EnumSource.Mode.EXCLUDE)
    void theServerExtraArgsAreReadTheSameWay(Spelling spelling) {
        List<String> creds = new ArrayList<>(List.of(spelling.bool("peer-auto-tls")));
        spelling.give(
                Map.of(
                        "peer-cert-file",
                        "/nonexistent/peer.crt",
                        "quota-backend-bytes",
                        "5",
                        "v2-deprecation",
                        "write-only"),
                creds,
                new HashMap<>());
        assertEquals(
                List.of(
                        "--peer-cert-file=/nonexistent/peer.crt: no such file",
                        "--peer-cert-file without --peer-key-file"),
                ServerArgsCheck.problems(creds));
        EtcdCommandLine read = EtcdCommandLine.read(creds, Map.of("ETCD_QUOTA_BACKEND_BYTES", "7"));
        assertEquals(OptionalLong.of(5), BackendQuota.requested(EtcdCommandLine.read(creds, Map.of())));
        assertEquals(Optional.of("write-only"), read.flag("v2-deprecation"));
        assertEquals(Optional.of("true"), read.flag("peer-auto-tls"));
    }

    @Test
    void goFlagParsing() {
        assertEquals(Optional.of("/b"), read("--data-dir=/a", "-data-dir", "/b").flag("data-dir"), "the last one wins");
        assertEquals(
                Optional.of("-x"), read("--name", "-x").flag("name"), "the next word is the value, even with a dash");
        assertEquals(
                Optional.of("false"),
                read("--peer-auto-tls=false", "--name", "a").flag("peer-auto-tls"));
        assertEquals(
                Optional.of("a"), read("--peer-auto-tls", "--name", "a").flag("name"), "a boolean takes no next word");
        assertEquals(
                Optional.of("true"), read("-v", "--name", "a").flag("v"), "an ignored legacy flag is a boolean too");

        EtcdCommandLine terminated = read("--name", "a", "--", "--data-dir=/x");
        assertEquals(Optional.empty(), terminated.flag("data-dir"), "Go's flag parsing stops at --");
        assertEquals(List.of("--data-dir=/x"), terminated.unread());
        EtcdCommandLine stray = read("--name", "a", "stray", "--data-dir=/x");
        assertEquals(Optional.empty(), stray.flag("data-dir"), "and at the first word that is not a flag");
        assertEquals(List.of("stray", "--data-dir=/x"), stray.unread());
        assertEquals(List.of("-", "--name=b"), read("-", "--name=b").unread(), "a lone dash is a word");

        assertEquals(
                Optional.of("flag needs an argument: --name"), read("--name").error());
        assertEquals(
                Optional.of("bad flag syntax: ---name=a"), read("---name=a").error());
        assertEquals(Optional.of("bad flag syntax: -=a"), read("-=a").error());
        assertEquals(Optional.of(""), read("--name=").flag("name"), "an empty value is a value");
    }

    @Test
    void aVariableStandsInForAnAbsentFlagUnlessEmpty() {
        EtcdCommandLine etcd = EtcdCommandLine.read(
                List.of("--wal-dir=/flag"), Map.of("ETCD_WAL_DIR", "/env", "ETCD_NAME", "", "ETCD_DATA_DIR", "/d"));
        assertEquals(Optional.of("/flag"), etcd.get("wal-dir"));
        assertEquals(Optional.empty(), etcd.get("name"), "an empty variable is unset");
        assertEquals(Optional.of("/d"), etcd.get("data-dir"));
        assertEquals("$ETCD_DATA_DIR (etcd's --data-dir)", etcd.source("data-dir"));
        assertEquals("etcd's --wal-dir after --", etcd.source("wal-dir"));
        assertEquals(
                "etcd's -name after --",
                EtcdCommandLine.read(List.of("-name=a"), Map.of()).source("name"));
    }

    /** etcd's verifyEnv looks at the variable's name: an empty one duplicating a flag is fatal too. */
    @Test
    void anEmptyVariableDuplicatingAFlagIsRefused() {
        EtcdCommandLine etcd = EtcdCommandLine.read(
                List.of("-name=m1", "--listen-client-urls", "http://127.0.0.1:1"),
                Map.of(
                        "ETCD_NAME",
                        "",
                        "ETCD_LISTEN_CLIENT_URLS",
                        "http://0.0.0.0:2379",
                        "ETCD_CREDS",
                        "x",
                        "ETCD_DATA_DIR",
                        "/d"));
        assertEquals(
                List.of("ETCD_LISTEN_CLIENT_URLS (--listen-client-urls)", "ETCD_NAME (-name)"),
                etcd.duplicateVariables());
    }

    @Test
    void aDefaultGoesWhereEtcdStillReadsFlags() {
        assertEquals(List.of("--name=a", "--data-dir=/d"), read("--name=a").withDefault("data-dir", "/d"));
        assertEquals(
                List.of("--name=a", "--data-dir=/d", "--"),
                read("--name=a", "--").withDefault("data-dir", "/d"));
        assertEquals(List.of("-data-dir", "/x"), read("-data-dir", "/x").withDefault("data-dir", "/d"));
        assertEquals(
                List.of(),
                EtcdCommandLine.read(List.of(), Map.of("ETCD_DATA_DIR", "/x")).withDefault("data-dir", "/d"));
    }

    private static EtcdCommandLine read(String... args) {
        return EtcdCommandLine.read(List.of(args), Map.of());
    }
}
