package dev.etcdmigrate.error;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.cli.Help;
import dev.etcdmigrate.cli.MigrateFlags;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One exit-status table: the codes are the contract's, and --help and the README print exactly it. */
class ExitStatusTest {

    @Test
    void theCodesAreTheContractsAndEachEndingHasOne() {
        assertEquals(
                List.of(0, 1, 2, 3, 4, 5, 143),
                Arrays.stream(ExitStatus.values()).map(ExitStatus::code).toList());
        assertEquals(ExitStatus.USAGE, new UsageException("x").status());
        assertEquals(2, new UsageException("x").exitCode());
        assertEquals(ExitStatus.REFUSED, new RefusedException("x").status());
        assertEquals(ExitStatus.FAILED, new FailedException("x").status());
    }

    @Test
    void theReadmeHasTheTable() throws Exception {
        String readme = Files.readString(Path.of("../README.md"));
        assertTrue(
                readme.contains(ExitStatus.markdownTable()),
                "README.md must hold ExitStatus.markdownTable():\n" + ExitStatus.markdownTable());
    }

    @Test
    void helpPrintsEveryStatus() {
        String help = (Help.text(List.of()) + Help.migrate(MigrateFlags.FLAGS)).replaceAll("\\s+", " ");
        for (ExitStatus status : ExitStatus.values()) {
            assertTrue(help.contains(status.code() + " " + status.meaning()), status + " in --help");
        }
    }
}
