package dev.etcdmigrate.cli;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.error.UsageException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ParsedArgsTest {

    static ParsedArgs parse(List<String> args, Map<String, String> env) throws UsageException {
        return ParsedArgs.parse(MigrateFlags.FLAGS, args, env);
    }

    @Test
    void flagBeatsEnvironment() throws UsageException {
        ParsedArgs a = parse(List.of("--target-version", "3.6.16"), Map.of("TARGET_VERSION", "3.5.35"));
        assertEquals(Optional.of("3.6.16"), a.get("target-version"));
        assertEquals("--target-version", a.source("target-version"));
    }

    @Test
    void environmentIsUsedWithoutTheFlag() throws UsageException {
        ParsedArgs a = parse(List.of(), Map.of("TARGET_VERSION", "3.5.35"));
        assertEquals(Optional.of("3.5.35"), a.get("target-version"));
        assertEquals("$TARGET_VERSION", a.source("target-version"));
        assertTrue(a.isSet("target-version"));
    }

    @Test
    void emptyEnvironmentVariableCountsAsUnset() throws UsageException {
        ParsedArgs a = parse(List.of(), Map.of("TARGET_VERSION", "", "DATA_DIRECTORY", ""));
        assertEquals(Optional.empty(), a.get("target-version"));
        assertFalse(a.isSet("target-version"));
        assertEquals(Optional.empty(), a.get("data-dir"));
    }

    @Test
    void flagWithoutAVariableIgnoresTheEnvironment() throws UsageException {
        // --port has no variable; a PORT in the environment must not leak in
        ParsedArgs a = parse(List.of(), Map.of("PORT", "1234", "port", "1234"));
        assertEquals(Optional.empty(), a.get("port"));
        assertEquals("--port", a.source("port"));
    }

    @Test
    void equalsAndSpaceFormsAreEquivalent() throws UsageException {
        ParsedArgs eq = parse(List.of("--data-dir=/var/etcd/x", "--name=a=b"), Map.of());
        ParsedArgs sp = parse(List.of("--data-dir", "/var/etcd/x", "--name", "a=b"), Map.of());
        assertEquals(Optional.of("/var/etcd/x"), eq.get("data-dir"));
        assertEquals(Optional.of("/var/etcd/x"), sp.get("data-dir"));
        assertEquals(Optional.of("a=b"), eq.get("name"), "only the first '=' splits");
        assertEquals(Optional.of("a=b"), sp.get("name"));
    }

    @Test
    void theLastOccurrenceOfAFlagWins() throws UsageException {
        assertEquals(
                Optional.of("2"),
                parse(List.of("--port=1", "--port", "2"), Map.of()).get("port"));
    }

    @Test
    void valueMayLookLikeAFlagInTheSpaceForm() throws UsageException {
        ParsedArgs a = parse(List.of("--etcd-server-extra-args", "--peer-cert-file=/x"), Map.of());
        assertEquals(Optional.of("--peer-cert-file=/x"), a.get("etcd-server-extra-args"));
    }

    @Test
    void unknownFlagIsAnError() {
        UsageException e =
                assertThrows(UsageException.class, () -> parse(List.of("--target-versoin", "3.6.16"), Map.of()));
        assertTrue(e.getMessage().contains("--target-versoin"), e.getMessage());
        UsageException e2 = assertThrows(UsageException.class, () -> parse(List.of("--bogus=1"), Map.of()));
        assertTrue(e2.getMessage().contains("--bogus"), e2.getMessage());
        assertFalse(e2.getMessage().contains("=1"), e2.getMessage());
    }

    @Test
    void missingValueIsAnError() {
        UsageException e = assertThrows(UsageException.class, () -> parse(List.of("--data-dir"), Map.of()));
        assertTrue(e.getMessage().contains("--data-dir"), e.getMessage());
    }

    @Test
    void toggleTakesNoValue() throws UsageException {
        assertTrue(parse(List.of("--no-exec"), Map.of()).isSet("no-exec"));
        assertFalse(parse(List.of(), Map.of()).isSet("no-exec"));
        UsageException e = assertThrows(UsageException.class, () -> parse(List.of("--no-exec=false"), Map.of()));
        assertTrue(e.getMessage().contains("--no-exec"), e.getMessage());
    }

    @Test
    void everythingAfterDoubleDashIsPassedThroughVerbatim() throws UsageException {
        List<String> etcdArgs =
                List.of("--name", "etcd-x", "--data-dir=/elsewhere", "--", "--bogus", "", " spaced  arg ", "--no-exec");
        List<String> args = new java.util.ArrayList<>(List.of("--target-version=3.6.16", "--"));
        args.addAll(etcdArgs);
        ParsedArgs a = parse(args, Map.of());
        assertEquals(etcdArgs, a.passThrough());
        assertEquals(Optional.empty(), a.get("name"), "flags after -- are not ours");
        assertEquals(Optional.empty(), a.get("data-dir"));
        assertFalse(a.isSet("no-exec"));
        assertEquals(Optional.of("3.6.16"), a.get("target-version"));
    }

    @Test
    void noDoubleDashMeansNoPassThrough() throws UsageException {
        assertEquals(List.of(), parse(List.of("--no-exec"), Map.of()).passThrough());
        assertEquals(List.of(), parse(List.of("--no-exec", "--"), Map.of()).passThrough());
    }

    @Test
    void bareWordsArePositional() throws UsageException {
        ParsedArgs a = parse(List.of("3.5.35", "--no-exec", "3.6.16"), Map.of());
        assertEquals(List.of("3.5.35", "3.6.16"), a.positional());
        UsageException stray = assertThrows(UsageException.class, () -> a.withoutPositional("plan"));
        assertTrue(stray.getMessage().contains("'3.5.35'"), stray.getMessage());
    }

    @Test
    void singleDashFlagsAreRefusedWithTheTwoDashSpelling() {
        UsageException e = assertThrows(UsageException.class, () -> parse(List.of("-data-dir", "/x"), Map.of()));
        assertTrue(e.getMessage().contains("--data-dir"), e.getMessage());
        assertThrows(UsageException.class, () -> parse(List.of("-x"), Map.of()));
        assertDoesNotThrow(
                () -> parse(List.of("--no-exec", "--", "-data-dir", "/y"), Map.of()), "etcd's own flags after --");
    }

    @Test
    void askingForAnUndeclaredFlagIsAProgrammingError() throws UsageException {
        ParsedArgs a = parse(List.of(), Map.of());
        assertThrows(IllegalArgumentException.class, () -> a.get("nope"));
    }

    @Test
    void environmentIsKeptForTheExecdEtcd() throws UsageException {
        Map<String, String> env = Map.of("ETCD_DATA_DIR", "/d", "FOO", "");
        assertEquals(env, parse(List.of(), env).environment());
    }

    @Test
    void anUnknownFlagNamesTheNearestOne() {
        UsageException e =
                assertThrows(UsageException.class, () -> parse(List.of("--target-verison", "3.6.16"), Map.of()));
        assertEquals(List.of("--target-verison", "--target-version", "--help"), flagsNamed(e), e.getMessage());
        UsageException far = assertThrows(UsageException.class, () -> parse(List.of("--frobnicate"), Map.of()));
        assertEquals(List.of("--frobnicate", "--help"), flagsNamed(far), "no flag is near: " + far.getMessage());
    }

    /** The flags a message names, in order: the contract of a usage error is which flags it names. */
    private static List<String> flagsNamed(UsageException e) {
        return java.util.regex.Pattern.compile("--[a-z][a-z-]*")
                .matcher(e.getMessage())
                .results()
                .map(java.util.regex.MatchResult::group)
                .toList();
    }
}
