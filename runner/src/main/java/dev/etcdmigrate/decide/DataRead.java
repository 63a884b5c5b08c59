package dev.etcdmigrate.decide;

import dev.etcdmigrate.ondisk.Damage;
import dev.etcdmigrate.ondisk.DataDetection;
import dev.etcdmigrate.ondisk.OwnMember;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * What was read of the data dir. {@code detection} is empty where nothing needed it (version.txt
 * answers a start; the label is judged against the data separately, {@link StartDecision#judge}).
 * {@code stepsRanHere}: this runner's etcd-output.log is there (its steps ran on the data itself);
 * {@code content}: what the dir holds, in words (for a refusal); {@code member}: the member the data records
 * (its name is checked against --name); {@code damage}: what the readers found damaged in what a start reads
 * ({@link DamageFound}); {@code authEnabled}: the db records etcd's auth as enabled (read where a plan may
 * have steps; a db that cannot say: false, its damage is reported as such); {@code downgradeJob}: the line of a
 * downgrade job the db records as in progress (read and reported as {@code authEnabled} is).
 */
public record DataRead(
        Path dataDir,
        boolean holdsData,
        Optional<DataVersion> versionTxt,
        StorageApi inferredStorage,
        Optional<DataDetection.Detection> detection,
        boolean stepsRanHere,
        String content,
        Optional<OwnMember> member,
        DamageFound damage,
        boolean authEnabled,
        Optional<MinorLine> downgradeJob) {

    /** Whether a start reads every page of the db: unless version.txt names the target (a restart). */
    public static boolean readsEveryDbPage(Optional<DataVersion> versionTxt, DataVersion target) {
        return !versionTxt.equals(Optional.of(target));
    }

    /** What a start for {@code target} finds damaged: the read it makes ({@link #readsEveryDbPage}). */
    public List<Damage> damageFor(DataVersion target) {
        return (readsEveryDbPage(versionTxt, target) ? damage.everyDbPage() : damage.restart())
                .orElseThrow(() -> new IllegalStateException("the damage read for " + target + " was not made"));
    }

    /**
     * What the readers found damaged ({@code DataRecords.damageFound}): reading every db page (a start whose
     * version.txt does not name the target) and reading what a restart reads; empty where that read was not made
     * (a start makes the one its target needs, inspect both).
     */
    public record DamageFound(Optional<List<Damage>> everyDbPage, Optional<List<Damage>> restart) {
        public static final DamageFound NONE = new DamageFound(Optional.of(List.of()), Optional.of(List.of()));
    }
}
