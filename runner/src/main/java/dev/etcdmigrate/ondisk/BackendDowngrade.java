package dev.etcdmigrate.ondisk;

import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A downgrade job in progress, as this member's v3 backend records it. etcd applies {@code downgrade enable} and the
 * job's end through raft and keeps the job in every member's db (bucket {@code cluster}, key {@code downgrade}: JSON
 * {@code {"target-version":"3.5.0","enabled":true}}, 3.5's and 3.6's storage schema alike). While it is enabled, the
 * leader holds the cluster version at the target, and it ends the job only once every member runs the target's line.
 */
public final class BackendDowngrade {

    static final String BUCKET = "cluster";
    static final String KEY = "downgrade";
    private static final Pattern TARGET = Pattern.compile("(\\d+\\.\\d+)\\.\\d+");

    private BackendDowngrade() {}

    /**
     * The line of the job's target while a job is enabled; empty when the db, the key or an enabled job is missing.
     * A value that is not etcd's JSON, or an enabled job without a target version, is damage.
     */
    public static Optional<MinorLine> job(Path db) throws IOException {
        if (!Files.isRegularFile(db)) return Optional.empty();
        Optional<byte[]> value;
        try (BboltFile file = BboltFile.open(db)) {
            value = file.value(BUCKET, KEY);
        }
        if (value.isEmpty()) return Optional.empty();
        String where = "bucket " + BUCKET + ", key " + KEY;
        EtcdJson.Node info = EtcdJson.parse(db, where, value.get());
        if (!info.path("enabled").asBoolean(false)) return Optional.empty();
        Matcher target = TARGET.matcher(info.path("target-version").asText(""));
        if (!target.matches())
            throw new DamagedFileException(new Damage(
                    db, where, "an enabled job names its target version (MAJOR.MINOR.PATCH), as etcd writes it"));
        return Optional.of(MinorLine.parse(target.group(1)));
    }
}
