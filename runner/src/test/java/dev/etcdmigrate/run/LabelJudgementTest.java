package dev.etcdmigrate.run;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.run.DataDirState.Verdict;
import dev.etcdmigrate.version.MinorLine;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A label against the data's floor line: every pair of bundled lines, with and without steps having run here. */
class LabelJudgementTest {

    private static final Catalog CATALOG = Catalog.bundled();
    private static final List<MinorLine> LINES =
            CATALOG.releases().stream().map(Release::minorLine).toList();

    @Test
    void theIssuesExampleIsContradicted() {
        // data written by 3.5 labelled 3.4.23 by hand: no run of the runner explains it
        assertEquals(
                Verdict.CONTRADICTED,
                DataDirState.judge(MinorLine.parse("3.4"), Optional.of(MinorLine.parse("3.5")), false, CATALOG));
    }

    @Test
    void dataOneLineAheadAfterTheRunnersOwnStepsIsTheOnlyToleratedCase() {
        List<String> tolerated = new ArrayList<>();
        for (MinorLine label : LINES) {
            for (MinorLine floor : LINES) {
                for (boolean ran : new boolean[] {false, true}) {
                    Verdict v = DataDirState.judge(label, Optional.of(floor), ran, CATALOG);
                    if (!label.isOlderThan(floor)) {
                        assertEquals(Verdict.AGREES, v, label + " on " + floor);
                    } else if (v == Verdict.INTERRUPTED_STEP) {
                        tolerated.add(label + "->" + floor + (ran ? " ran" : ""));
                    } else {
                        assertEquals(Verdict.CONTRADICTED, v, label + " on " + floor);
                    }
                }
            }
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i + 1 < LINES.size(); i++) expected.add(LINES.get(i) + "->" + LINES.get(i + 1) + " ran");
        assertEquals(expected, tolerated, "exactly: the next bundled line, and only where the runner's steps ran");
    }

    @Test
    void dataThatRecordsNoLineContradictsNoLabel() {
        for (MinorLine label : LINES) {
            assertEquals(Verdict.AGREES, DataDirState.judge(label, Optional.empty(), false, CATALOG));
        }
    }
}
