package dev.etcdmigrate.step;

import dev.etcdmigrate.datadir.DiskSpace;
import dev.etcdmigrate.step.Step.Binary;
import dev.etcdmigrate.version.DataVersion;
import java.util.List;

/**
 * What a step is, apart from its script: what version.txt says after it, the bundled programs it runs (checked
 * before anything is touched), whether it swaps in a new member dir, its disk peak and what it keeps. One value
 * per step instead of five overrides each, so StepFactsTest reads every step's facts as a table.
 *
 * @param memberCopies how many copies of the member dir it holds at its peak beyond the data dir (a clone costs less)
 * @param etcdStarts how many etcd starts it makes, each of which may preallocate a WAL segment
 */
public record StepFacts(
        DataVersion result,
        List<Binary> binaries,
        boolean replacesMemberDir,
        int memberCopies,
        int etcdStarts,
        String keeps) {

    public StepFacts {
        binaries = List.copyOf(binaries);
    }

    /** A step that works on the data in place and keeps nothing besides it. */
    static StepFacts inPlace(DataVersion result, List<Binary> binaries, int etcdStarts) {
        return new StepFacts(result, binaries, false, 0, etcdStarts, "nothing");
    }

    /** About how much disk the step needs beyond the data dir as it is, for a member dir of {@code memberBytes}. */
    public long extraDisk(long memberBytes) {
        return DiskSpace.needed(memberCopies * memberBytes, etcdStarts);
    }
}
