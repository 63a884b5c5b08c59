package dev.etcdmigrate.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.error.UsageException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The restore's flags and their environment variables (docs/restore.md). */
class RestoreFlagsTest {

    private static final String SHA = "ab".repeat(32);

    private static RunConfig read(Map<String, String> env, String... args) throws UsageException {
        List<String> all = new java.util.ArrayList<>(List.of("--target-version", "3.7.3", "--name", "m0"));
        all.addAll(List.of(args));
        return MigrateFlags.read(ParsedArgs.parse(MigrateFlags.FLAGS, all, env));
    }

    @Test
    void noSnapshotNoRestore() throws UsageException {
        assertEquals(Optional.empty(), read(Map.of()).restore());
    }

    @Test
    void theEnvironmentGivesTheSnapshotTheHashAndTheDefaultBump() throws UsageException {
        RunConfig.Restore restore = read(Map.of(
                        "RESTORE_SNAPSHOT", "/backup/s.db", "RESTORE_SHA256", SHA.toUpperCase()))
                .restore()
                .orElseThrow();
        assertEquals(Path.of("/backup/s.db"), restore.snapshot());
        assertEquals(SHA, restore.sha256(), "as sha256sum prints it: lower case");
        assertEquals(MigrateFlags.DEFAULT_RESTORE_BUMP, restore.bumpRevision());
        assertEquals(
                0,
                read(Map.of("RESTORE_BUMP_REVISION", "0"), "--restore-snapshot", "s.db", "--restore-sha256", SHA)
                        .restore()
                        .orElseThrow()
                        .bumpRevision());
    }

    @Test
    void aSnapshotWithoutItsHashOrABadHashOrBumpIsAUsageError() {
        assertTrue(assertThrows(UsageException.class, () -> read(Map.of(), "--restore-snapshot", "s.db"))
                .getMessage()
                .contains("--restore-sha256"));
        assertThrows(
                UsageException.class, () -> read(Map.of(), "--restore-snapshot", "s.db", "--restore-sha256", "12"));
        assertThrows(UsageException.class, () -> read(Map.of(), "--restore-sha256", SHA));
        assertThrows(
                UsageException.class,
                () -> read(
                        Map.of(),
                        "--restore-snapshot",
                        "s.db",
                        "--restore-sha256",
                        SHA,
                        "--restore-bump-revision",
                        "-5"));
    }
}
