package dev.etcdmigrate.decide;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.decide.LabelJudgement.Verdict;
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

    /** A label on data whose floor and recorded cluster version are both {@code written}, no step run here. */
    private static Verdict judgeOnData(String label, String written) {
        MinorLine line = MinorLine.parse(written);
        return LabelJudgement.judge(MinorLine.parse(label), Optional.of(line), Optional.of(line), false, CATALOG);
    }

    @Test
    void data35LabelledByHandAs34IsContradicted() {
        // data written by 3.5 labelled 3.4.23 by hand: no run of the runner explains it
        assertEquals(Verdict.CONTRADICTED, judgeOnData("3.4", "3.5"));
    }

    @Test
    void dataOneLineAheadAfterTheRunnersOwnStepsIsTheOnlyToleratedCase() {
        List<String> tolerated = new ArrayList<>();
        for (MinorLine label : LINES) {
            for (MinorLine floor : LINES) {
                for (boolean ran : new boolean[] {false, true}) {
                    Verdict v = LabelJudgement.judge(
                            label,
                            Optional.of(floor),
                            Optional.of(label.isOlderThan(floor) ? floor : label),
                            ran,
                            CATALOG);
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
            assertEquals(
                    Verdict.AGREES, LabelJudgement.judge(label, Optional.empty(), Optional.empty(), false, CATALOG));
        }
    }

    /**
     * A label newer than the data: version.txt 3.7.3/etcd3 on data whose cluster version is 3.4. A label's line runs
     * only on data of a cluster at the line it upgrades from (catalog upgrade.from) or newer: every pair of bundled
     * lines, the label at or above the recorded cluster version.
     */
    @Test
    void aLabelWhoseLineCannotOpenTheDataIsAheadOfIt() {
        assertEquals(Verdict.AHEAD_OF_DATA, judgeOnData("3.7", "3.4"));
        List<String> ahead = new ArrayList<>();
        for (int l = 0; l < LINES.size(); l++) {
            for (int w = 0; w <= l; w++) {
                for (boolean ran : new boolean[] {false, true}) {
                    Verdict v = LabelJudgement.judge(
                            LINES.get(l), Optional.of(LINES.get(w)), Optional.of(LINES.get(w)), ran, CATALOG);
                    if (v == Verdict.AHEAD_OF_DATA) ahead.add(LINES.get(l) + " on " + LINES.get(w));
                    else assertEquals(Verdict.AGREES, v, LINES.get(l) + " on " + LINES.get(w));
                }
            }
        }
        List<String> expected = new ArrayList<>();
        for (int l = 0; l < LINES.size(); l++)
            for (int w = 0; w + 1 < l; w++)
                for (int twice = 0; twice < 2; twice++) expected.add(LINES.get(l) + " on " + LINES.get(w));
        assertEquals(
                expected,
                ahead,
                "exactly: data two or more bundled lines below the label (each line upgrades from"
                        + " the one before it)");
        // the data a cluster member's own step leaves: one line below the label (its etcd wrote nothing new yet)
        assertEquals(Verdict.AGREES, judgeOnData("3.6", "3.5"));
    }
}
