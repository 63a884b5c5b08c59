package dev.etcdmigrate.restore;

import dev.etcdmigrate.datadir.AtomicFile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * What a data dir records of its restore ({@code .etcd-migrate/restore}): the snapshot's hash, how far the restore
 * got, where the member's earlier data went ({@code backup}, relative to the data dir; empty when it had none) and
 * the cluster token, and once restored the release whose tool restored it ({@code version}: what version.txt then
 * says; empty in a marker that does not record it). Written
 * whole with the atomic-file recipe, so a crash leaves the old or the new marker, never half of one. One
 * {@code key=value} line each: nothing in it is a key's value.
 */
public record RestoreMarker(String sha256, State state, Optional<Path> backup, String token, Optional<String> version) {

    /** {@code RESTORING}: the member dir may be moved aside and the restore under way; {@code RESTORED}: done. */
    public enum State {
        RESTORING,
        RESTORED
    }

    /** This restore done by the tool of {@code release} (the version.txt it leaves). */
    public RestoreMarker restored(String release) {
        return new RestoreMarker(sha256, State.RESTORED, backup, token, Optional.of(release));
    }

    /**
     * Whether this data dir's restore is done and left {@code release} in version.txt: the data is that release's
     * tool's restore of a snapshot, also where the snapshot's newer line recorded its cluster version in the db
     * (catalog: a line that goes down by a snapshot restore), until the restored cluster's etcd first runs.
     */
    public boolean restoredAs(String release) {
        return state == State.RESTORED && version.filter(release::equals).isPresent();
    }

    public boolean restoredFrom(String hash) {
        return state == State.RESTORED && sha256.equals(hash);
    }

    public void write(Path file) throws IOException {
        AtomicFile.write(
                file,
                "sha256=" + sha256 + "\nstate=" + state.name().toLowerCase(java.util.Locale.ROOT) + "\nbackup="
                        + backup.map(Path::toString).orElse("") + "\ntoken=" + token + "\n"
                        + version.map(v -> "version=" + v + "\n").orElse(""));
    }

    /** The marker, or empty when the data dir was never restored; an unreadable one is an error, not "none". */
    public static Optional<RestoreMarker> read(Path file) throws IOException {
        if (!Files.exists(file)) return Optional.empty();
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            int eq = line.indexOf('=');
            if (eq > 0) fields.put(line.substring(0, eq), line.substring(eq + 1));
        }
        String sha = fields.getOrDefault("sha256", "");
        String state = fields.getOrDefault("state", "");
        if (!sha.matches("[0-9a-f]{64}") || !(state.equals("restoring") || state.equals("restored"))) {
            throw new IOException(file + " is not a restore marker this runner wrote (sha256 and state missing or"
                    + " malformed); it records which snapshot the data dir was restored from: move it aside only"
                    + " if the data dir was not restored");
        }
        String backup = fields.getOrDefault("backup", "");
        return Optional.of(new RestoreMarker(
                sha,
                State.valueOf(state.toUpperCase(java.util.Locale.ROOT)),
                backup.isEmpty() ? Optional.empty() : Optional.of(Path.of(backup)),
                fields.getOrDefault("token", ""),
                Optional.ofNullable(fields.get("version")).filter(v -> !v.isEmpty())));
    }
}
