package dev.etcdmigrate.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

public class MigrateFlagsTest {

    /** A minimal valid environment: a target and a host name. */
    public static Map<String, String> env(String... pairs) {
        Map<String, String> env = new HashMap<>(Map.of("TARGET_VERSION", "3.6.16", "HOSTNAME", "host0"));
        for (int i = 0; i < pairs.length; i += 2) {
            if (pairs[i + 1] == null) env.remove(pairs[i]);
            else env.put(pairs[i], pairs[i + 1]);
        }
        return env;
    }

    public static RunConfig options(Map<String, String> env, String... args) throws UsageException {
        return MigrateFlags.read(ParsedArgs.parse(MigrateFlags.FLAGS, List.of(args), env));
    }

    static UsageException usage(Map<String, String> env, String... args) {
        return assertThrows(UsageException.class, () -> options(env, args));
    }

    @Test
    void defaults() throws UsageException {
        RunConfig o = options(env());
        assertEquals(new DataVersion(EtcdVersion.parse("3.6.16"), StorageApi.ETCD3), o.target());
        assertEquals(Path.of("/var/etcd/data"), o.dataDir());
        assertEquals(Path.of("/usr/local/bin"), o.binDir());
        assertEquals(Optional.empty(), o.catalogFile());
        assertEquals(Optional.empty(), o.bundledVersions());
        assertEquals("etcd-host0", o.name());
        assertEquals("etcd-host0=http://localhost:2380", o.topology().peers().initialCluster());
        assertEquals("http://localhost:2380", o.topology().peers().advertisePeerUrls());
        assertEquals(18629, o.clientPort());
        assertEquals(2380, o.peerPort());
        assertEquals(List.of(), o.serverExtraArgs());
        assertEquals("/registry", o.dataPrefix());
        assertEquals("/registry/events", o.ttlKeysDirectory());
        assertEquals(Optional.empty(), o.initialVersion());
        assertEquals(Duration.ofMinutes(2), o.startTimeout());
        assertEquals(Duration.ofSeconds(30), o.stopGrace());
        assertEquals(Duration.ofSeconds(60), o.lockTimeout());
        assertEquals(Optional.empty(), o.backupDir(), "the data dir's own .etcd-migrate/backups");
        assertEquals(3, o.backupRetention());
        assertFalse(o.noExec());
        assertEquals(List.of(), o.etcdArgs());
    }

    // ---- target ----------------------------------------------------------------------------------

    @Test
    void missingTargetMentionsTargetVersion() {
        UsageException e = usage(env("TARGET_VERSION", null));
        assertTrue(e.getMessage().contains("TARGET_VERSION"), e.getMessage());
        assertTrue(e.getMessage().contains("--target-version"), e.getMessage());
    }

    @Test
    void emptyTargetVariableCountsAsMissing() {
        UsageException e = usage(env("TARGET_VERSION", ""));
        assertTrue(e.getMessage().contains("TARGET_VERSION"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"v3.6.16", "3.6", "3.6.16-rc.0", "latest", " 3.6.16"})
    void malformedTargetFromTheFlagNamesTheFlagAndValue(String target) {
        UsageException e = usage(env(), "--target-version", target);
        assertTrue(e.getMessage().startsWith("--target-version: "), e.getMessage());
        assertTrue(e.getMessage().contains("'" + target + "'"), e.getMessage());
    }

    @Test
    void malformedTargetFromTheEnvironmentNamesTheVariable() {
        UsageException e = usage(env("TARGET_VERSION", "3.6"));
        assertTrue(e.getMessage().startsWith("$TARGET_VERSION: "), e.getMessage());
        assertTrue(e.getMessage().contains("'3.6'"), e.getMessage());
    }

    @Test
    void targetFlagBeatsVariable() throws UsageException {
        assertEquals(
                EtcdVersion.parse("3.4.23"),
                options(env(), "--target-version=3.4.23").target().version());
    }

    // ---- storage -----------------------------------------------------------------------------

    @Test
    void storage() throws UsageException {
        assertEquals(
                StorageApi.ETCD2,
                options(env("TARGET_STORAGE", "etcd2")).target().storage());
        assertEquals(
                StorageApi.ETCD3, options(env("TARGET_STORAGE", "")).target().storage());
        assertEquals(
                StorageApi.ETCD3,
                options(env("TARGET_STORAGE", "etcd2"), "--target-storage", "etcd3")
                        .target()
                        .storage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"etcd4", "ETCD3", "v3"})
    void badStorageIsAUsageError(String storage) {
        UsageException e = usage(env("TARGET_STORAGE", storage));
        assertTrue(e.getMessage().startsWith("$TARGET_STORAGE: "), e.getMessage());
        assertTrue(e.getMessage().contains("'" + storage + "'"), e.getMessage());
        UsageException f = usage(env(), "--target-storage=" + storage);
        assertTrue(f.getMessage().startsWith("--target-storage: "), f.getMessage());
    }

    // ---- data dir and ports -------------------------------------------------------------------

    @Test
    void dataDirIsMadeAbsoluteAndNormal() throws UsageException {
        assertEquals(
                Path.of("/var/etcd/data-x"),
                options(env("DATA_DIRECTORY", "/var/etcd/./y/../data-x/")).dataDir());
        assertEquals(
                Path.of("rel").toAbsolutePath(),
                options(env(), "--data-dir", "rel").dataDir());
    }

    @ParameterizedTest
    @CsvSource({
        "/var/etcd/data,               18629, 2380",
        "/var/etcd/data-events,        18631, 2381",
        "/mnt/event-store/data,        18631, 2381",
        "/var/etcd/data-main,          18629, 2380",
        "/var/etcd/Events,             18629, 2380"
    })
    void portsDependOnWhetherTheDataDirIsTheEventsOne(String dataDir, int client, int peer) throws UsageException {
        RunConfig o = options(env("DATA_DIRECTORY", dataDir));
        assertEquals(client, o.clientPort());
        assertEquals(peer, o.peerPort());
    }

    @Test
    void portFlagsOverrideTheDefaults() throws UsageException {
        RunConfig o = options(env("DATA_DIRECTORY", "/var/etcd/data-events"), "--port", "3000", "--peer-port=3001");
        assertEquals(3000, o.clientPort());
        assertEquals(3001, o.peerPort());
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "65536", "-1", "abc", "", "80.5"})
    void badPortsAreRejected(String port) {
        UsageException e = usage(env(), "--port=" + port);
        assertTrue(e.getMessage().contains("--port"), e.getMessage());
        assertTrue(e.getMessage().contains("'" + port + "'"), e.getMessage());
    }

    // ---- one source of truth: the runner's settings and etcd's own flags after -- --------------------

    @Test
    void etcdsOwnDataDirStandsInForTheRunnersAndMustAgreeWithIt() throws UsageException {
        assertEquals(
                Path.of("/srv/etcd"),
                options(env(), "--", "--data-dir", "/srv/etcd").dataDir());
        assertEquals(
                Path.of("/srv/etcd"), options(env("ETCD_DATA_DIR", "/srv/etcd")).dataDir());
        assertEquals(
                Path.of("/srv/etcd"),
                options(env("DATA_DIRECTORY", "/srv/etcd/"), "--", "--data-dir=/srv/./etcd")
                        .dataDir(),
                "the same directory spelled differently");
        // flag against flag, and variable against variable: both ways refused, both named
        UsageException flags = usage(env(), "--data-dir", "/a", "--", "--data-dir", "/b");
        assertTrue(
                flags.getMessage().contains("--data-dir is '/a'")
                        && flags.getMessage().contains("'/b'"),
                flags.getMessage());
        UsageException vars = usage(env("DATA_DIRECTORY", "/a", "ETCD_DATA_DIR", "/b"));
        assertTrue(
                vars.getMessage().contains("$DATA_DIRECTORY")
                        && vars.getMessage().contains("$ETCD_DATA_DIR"),
                vars.getMessage());
    }

    @Test
    void memberIdentityComesFromEtcdsFlagsWhereTheRunnerHasNone() throws UsageException {
        RunConfig o = options(
                env(),
                "--",
                "--name=m2",
                "--initial-cluster=m1=https://10.0.0.1:2380,m2=https://10.0.0.2:2380",
                "--initial-advertise-peer-urls",
                "https://10.0.0.2:2380",
                "--listen-peer-urls=https://10.0.0.2:2380",
                "--peer-cert-file=/p.crt",
                "--peer-key-file=/p.key",
                "--wal-dir=/wal");
        assertEquals("m2", o.name());
        assertEquals(2, o.topology().peers().count());
        assertEquals("https://10.0.0.2:2380", o.topology().peers().advertisePeerUrls());
        assertEquals("https://10.0.0.2:2380", o.topology().peers().listenPeerUrls());
        assertEquals(Optional.of(Path.of("/wal")), o.walDir());
        assertEquals(
                List.of("--peer-cert-file=/p.crt", "--peer-key-file=/p.key"),
                ((Topology.Member) o.topology()).peerTls().args());
        UsageException cluster = usage(
                env("INITIAL_CLUSTER", "m2=http://localhost:2380"),
                "--",
                "--name=m2",
                "--initial-cluster=m1=https://10.0.0.1:2380,m2=https://10.0.0.2:2380");
        assertTrue(cluster.getMessage().contains("$INITIAL_CLUSTER"), cluster.getMessage());
        UsageException tls = usage(
                env("ETCD_CREDS", "--peer-cert-file=/other.crt --peer-key-file=/p.key"),
                "--",
                "--peer-cert-file=/p.crt");
        assertTrue(tls.getMessage().contains("/other.crt") && tls.getMessage().contains("/p.crt"), tls.getMessage());
    }

    @Test
    void aWalDirInsideTheMemberDirIsNotExternal() throws UsageException {
        assertEquals(
                Optional.empty(),
                options(env(), "--data-dir", "/d", "--", "--wal-dir=/d/member/wal")
                        .walDir());
        assertEquals(Optional.empty(), options(env()).walDir());
    }

    @Test
    void theExecdEtcdGetsTheDataDirOnlyWhereNothingNamesIt() throws UsageException {
        assertEquals(
                List.of("--name=x", "--data-dir=/d"),
                options(env(), "--data-dir", "/d", "--", "--name=x").finalEtcdArgs());
        assertEquals(
                List.of("-data-dir=/d"), options(env(), "--", "-data-dir=/d").finalEtcdArgs());
        assertEquals(List.of(), options(env("ETCD_DATA_DIR", "/d")).finalEtcdArgs());
        // after etcd's own "--" (or a stray word) etcd reads no flag: the runner's goes before it
        assertEquals(
                List.of("-name", "x", "--data-dir=/d", "--"),
                options(env(), "--data-dir", "/d", "--", "-name", "x", "--").finalEtcdArgs());
    }

    // ---- member identity -------------------------------------------------------------------------

    @Test
    void nameComesFromEtcdNameFirst() throws UsageException {
        assertEquals(
                "member-a",
                options(env("ETCD_NAME", "member-a", "ETCD_HOSTNAME", "h1")).name());
        assertEquals("flag", options(env("ETCD_NAME", "flag"), "--name", "flag").name());
        // etcd itself would run as member-a (its ETCD_NAME) while the runner restores a member called flag
        UsageException e = usage(env("ETCD_NAME", "member-a"), "--name", "flag");
        assertTrue(e.getMessage().contains("'flag'") && e.getMessage().contains("'member-a'"), e.getMessage());
    }

    @Test
    void nameFallsBackToEtcdHostnameThenHostname() throws UsageException {
        assertEquals("etcd-h1", options(env("ETCD_HOSTNAME", "h1")).name());
        assertEquals(
                "etcd-h1", options(env("ETCD_NAME", "", "ETCD_HOSTNAME", "h1")).name());
        assertEquals(
                "etcd-host0", options(env("ETCD_NAME", "", "ETCD_HOSTNAME", "")).name());
        assertEquals("etcd-host0", options(env()).name());
    }

    @Test
    void noNameAtAllIsAUsageError() {
        UsageException e = usage(env("HOSTNAME", null));
        assertTrue(e.getMessage().contains("ETCD_NAME"), e.getMessage());
        assertTrue(e.getMessage().contains("HOSTNAME"), e.getMessage());
        usage(env("HOSTNAME", "", "ETCD_HOSTNAME", "", "ETCD_NAME", ""));
    }

    @Test
    void advertisedPeerUrlIsThisMembersEntryInTheInitialCluster() throws UsageException {
        RunConfig o = options(env(
                "ETCD_NAME",
                "etcd-b",
                "INITIAL_CLUSTER",
                "etcd-a=https://10.0.0.1:2380,etcd-b=https://10.0.0.2:2380, etcd-c = https://10.0.0.3:2380"));
        assertEquals("https://10.0.0.2:2380", o.topology().peers().advertisePeerUrls());
        assertEquals(
                "etcd-a=https://10.0.0.1:2380,etcd-b=https://10.0.0.2:2380, etcd-c = https://10.0.0.3:2380",
                o.topology().peers().initialCluster());
        assertEquals(
                "https://10.0.0.3:2380",
                options(env(
                                "ETCD_NAME",
                                "etcd-c",
                                "INITIAL_CLUSTER",
                                "etcd-a=https://10.0.0.1:2380, etcd-c = https://10.0.0.3:2380"))
                        .topology()
                        .peers()
                        .advertisePeerUrls());
    }

    @Test
    void aMemberNameThatIsAPrefixOfAnotherDoesNotMatchIt() throws UsageException {
        RunConfig o =
                options(env("ETCD_NAME", "etcd-1", "INITIAL_CLUSTER", "etcd-10=http://a:2380,etcd-1=http://b:2380"));
        assertEquals("http://b:2380", o.topology().peers().advertisePeerUrls());
    }

    @Test
    void advertisedPeerUrlsFlagWins() throws UsageException {
        RunConfig o = options(
                env("ETCD_NAME", "etcd-b", "INITIAL_CLUSTER", "etcd-b=https://10.0.0.2:2380"),
                "--initial-advertise-peer-urls",
                "https://192.168.0.2:2380");
        assertEquals("https://192.168.0.2:2380", o.topology().peers().advertisePeerUrls());
    }

    @Test
    void memberMissingFromTheInitialClusterIsAUsageError() {
        UsageException e = usage(env("ETCD_NAME", "etcd-x", "INITIAL_CLUSTER", "etcd-a=http://a:2380"));
        assertTrue(e.getMessage().contains("'etcd-x'"), e.getMessage());
        assertTrue(e.getMessage().contains("etcd-a=http://a:2380"), e.getMessage());
    }

    @Test
    void givenAdvertisedUrlsAMemberMissingFromTheInitialClusterIsAccepted() throws UsageException {
        RunConfig o = options(env(
                "ETCD_NAME",
                "etcd-x",
                "INITIAL_CLUSTER",
                "etcd-a=http://a:2380",
                "INITIAL_ADVERTISE_PEER_URLS",
                "http://x:2380"));
        assertEquals("http://x:2380", o.topology().peers().advertisePeerUrls());
    }

    @Test
    void aMemberWithSeveralPeerUrlsAdvertisesAllOfThem() throws UsageException {
        RunConfig o = options(env(
                "ETCD_NAME",
                "etcd-a",
                "INITIAL_CLUSTER",
                "etcd-a=http://10.0.0.1:2380,etcd-a=http://10.0.1.1:2380,etcd-b=http://10.0.0.2:2380"));
        assertEquals(
                "http://10.0.0.1:2380,http://10.0.1.1:2380",
                o.topology().peers().advertisePeerUrls());
    }

    // ---- durations ----------------------------------------------------------------------------

    @ParameterizedTest
    @CsvSource({"500ms, PT0.5S", "90s, PT1M30S", "2m, PT2M", "1h, PT1H", "45, PT45S", " 7s , PT7S"})
    void durations(String text, String expected) throws UsageException {
        RunConfig o = options(env(), "--start-timeout", text, "--stop-grace=" + text, "--lock-timeout", text);
        assertEquals(Duration.parse(expected), o.startTimeout());
        assertEquals(Duration.parse(expected), o.stopGrace());
        assertEquals(Duration.parse(expected), o.lockTimeout());
    }

    @ParameterizedTest
    @ValueSource(strings = {"0s", "0", "0ms", "abc", "-5s", "1.5s", "5 s", "s", "ms", "2d", "10us", ""})
    void badDurationsAreRejected(String text) {
        UsageException e = usage(env(), "--stop-grace=" + text);
        assertTrue(e.getMessage().contains("--stop-grace"), e.getMessage());
        assertTrue(e.getMessage().contains("'" + text.trim() + "'"), e.getMessage());
    }

    @Test
    void hugeDurationIsAUsageError() {
        usage(env(), "--lock-timeout", "9999999999999999h");
    }

    // ---- the rest ----------------------------------------------------------------------------

    @Test
    void extraServerArgsAreSplitOnBlanks() throws UsageException {
        assertEquals(
                List.of("--peer-cert-file=/a", "--peer-key-file=/b"),
                options(env("ETCD_CREDS", "  --peer-cert-file=/a \t --peer-key-file=/b  "))
                        .serverExtraArgs());
        assertEquals(
                List.of(), options(env(), "--etcd-server-extra-args", "   ").serverExtraArgs());
        assertEquals(List.of(), options(env("ETCD_CREDS", "")).serverExtraArgs());
    }

    @Test
    void ttlDirectoryFollowsTheDataPrefix() throws UsageException {
        RunConfig o = options(env("ETCD_DATA_PREFIX", "/k8s"));
        assertEquals("/k8s", o.dataPrefix());
        assertEquals("/k8s/events", o.ttlKeysDirectory());
        assertEquals(
                "/ttl",
                options(env("ETCD_DATA_PREFIX", "/k8s", "TTL_KEYS_DIRECTORY", "/ttl"))
                        .ttlKeysDirectory());
    }

    @Test
    void initialVersion() throws UsageException {
        assertEquals(
                Optional.of(EtcdVersion.parse("3.4.13")),
                options(env("INITIAL_VERSION", "3.4.13")).initialVersion());
        UsageException e = usage(env("INITIAL_VERSION", "3.4"));
        assertTrue(e.getMessage().startsWith("$INITIAL_VERSION: "), e.getMessage());
    }

    @Test
    void bundledVersionsAcceptCommasAndBlanks() throws UsageException {
        RunConfig o = options(env("BUNDLED_VERSIONS", " 3.4.23, 3.5.35 3.6.16,,3.7.3 "));
        assertEquals(
                Optional.of(Set.of(
                        EtcdVersion.parse("3.4.23"),
                        EtcdVersion.parse("3.5.35"),
                        EtcdVersion.parse("3.6.16"),
                        EtcdVersion.parse("3.7.3"))),
                o.bundledVersions());
        UsageException bad = usage(env("BUNDLED_VERSIONS", "3.5.35,3.6"));
        assertTrue(bad.getMessage().startsWith("$BUNDLED_VERSIONS: "), bad.getMessage());
        UsageException none = usage(env("BUNDLED_VERSIONS", " , "));
        assertTrue(none.getMessage().startsWith("$BUNDLED_VERSIONS"), none.getMessage());
    }

    @Test
    void catalogBinDirNoExecAndPassThrough() throws UsageException {
        List<String> args = new ArrayList<>(List.of(
                "--catalog",
                "/etc/c.yaml",
                "--bin-dir",
                "/opt/bin",
                "--no-exec",
                "--",
                "--listen-client-urls=http://0.0.0.0:2379",
                "--name",
                "other"));
        RunConfig o = options(env(), args.toArray(String[]::new));
        assertEquals(Optional.of(Path.of("/etc/c.yaml")), o.catalogFile());
        assertEquals(Path.of("/opt/bin"), o.binDir());
        assertTrue(o.noExec());
        assertEquals(List.of("--listen-client-urls=http://0.0.0.0:2379", "--name", "other"), o.etcdArgs());
        assertEquals("other", o.name(), "without its own --name the runner takes etcd's");
    }

    @Test
    void compatibilityFlagsAreAcceptedAndIgnored() throws UsageException {
        RunConfig o =
                options(env("LISTEN_PEER_URLS", "http://0.0.0.0:2380"), "--listen-client-urls", "http://0.0.0.0:2379");
        assertEquals(18629, o.clientPort());
        assertEquals(2380, o.peerPort());
    }

    // ---- backups ---------------------------------------------------------------------------------

    @Test
    void backupDirAndRetentionFromFlagsOrEnvironment() throws UsageException {
        RunConfig flags = options(
                env("BACKUP_DIR", "/elsewhere", "BACKUP_RETENTION", "7"),
                "--backup-dir",
                "/srv/etcd-backups/../backups",
                "--backup-retention",
                "2");
        assertEquals(Optional.of(Path.of("/srv/backups")), flags.backupDir());
        assertEquals(2, flags.backupRetention());
        RunConfig env = options(env("BACKUP_DIR", "/elsewhere", "BACKUP_RETENTION", "7"));
        assertEquals(Optional.of(Path.of("/elsewhere")), env.backupDir());
        assertEquals(7, env.backupRetention());
    }

    @ParameterizedTest
    @ValueSource(strings = {"0", "-1", "two", "1.5", " "})
    void aBadRetentionIsAUsageError(String value) {
        UsageException e = usage(env(), "--backup-retention", value);
        assertTrue(
                e.getMessage().contains("--backup-retention must be a whole number of backups to keep, at least 1"),
                e.getMessage());
    }

    @Test
    void aBadRetentionVariableIsNamed() {
        UsageException e = usage(env("BACKUP_RETENTION", "0"));
        assertTrue(e.getMessage().startsWith("$BACKUP_RETENTION must be"), e.getMessage());
    }
}
