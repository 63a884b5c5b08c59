package dev.etcdmigrate.ondisk;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * The member a data dir belongs to, as the data records it: its id from the WAL's metadata record (etcd writes it
 * when it creates the WAL and repeats it at the head of every segment; a snapshot restore makes a new one) and the
 * name and peer URLs the membership records for that id: 3.x's db, bucket members (etcd publishes its --name there
 * at every start), else, without a db (etcd2 layout), the newest snapshot's v2 store. Keyed by the id, so a stale
 * entry of another member (3.3-era restored data keeps the old member's entry beside the new one) is never taken
 * for this one. Empty where the data does not say: no WAL, no entry for the id, or an empty name (a member added
 * but never started). A start reads it every time: a few KB of the WAL's newest segment and one bucket of the db,
 * no JSON library.
 */
public record OwnMember(String id, String name, List<String> peerUrls, String where) {

    public static Optional<OwnMember> read(Path dataDir, Optional<Path> walDir) {
        Path member = dataDir.resolve("member");
        try {
            OptionalLong id = WalRecords.memberId(walDir.orElse(member.resolve("wal")));
            if (id.isEmpty()) return Optional.empty();
            String hex = Long.toHexString(id.getAsLong());
            Path db = member.resolve("snap").resolve("db");
            if (Files.isRegularFile(db)) {
                try (BboltFile file = BboltFile.open(db)) {
                    Optional<byte[]> value = file.value("members", hex);
                    if (value.isEmpty()) return Optional.empty();
                    String json = new String(value.get(), StandardCharsets.UTF_8);
                    return named(
                            hex, field(json, "name"), stringsOf(json, "peerURLs"), "member/snap/db, bucket members");
                }
            }
            Optional<Path> snapshot = V2SnapshotReader.newestSnapshot(member);
            if (snapshot.isEmpty()) return Optional.empty();
            String[] found = {null, null};
            V2SnapshotReader.readMembership(snapshot.get(), key -> {
                if (key.key().equals("/0/members/" + hex + "/attributes")) found[0] = key.value();
                if (key.key().equals("/0/members/" + hex + "/raftAttributes")) found[1] = key.value();
            });
            if (found[0] == null) return Optional.empty();
            return named(
                    hex,
                    field(found[0], "name"),
                    found[1] == null ? List.of() : stringsOf(found[1], "peerURLs"),
                    "snapshot " + snapshot.get().getFileName() + ", /0/members/" + hex);
        } catch (IOException | RuntimeException unreadable) {
            return Optional.empty(); // damage is the damage checks' to report; this one only says what it can prove
        }
    }

    private static Optional<OwnMember> named(String id, Optional<String> name, List<String> peers, String where) {
        return name.filter(n -> !n.isEmpty()).map(n -> new OwnMember(id, n, peers, where));
    }

    /** A top-level string field of a JSON object (etcd's json.Marshal of a member), decoded; empty if absent. */
    static Optional<String> field(String json, String name) {
        int[] at = {valueStart(json, name)};
        if (at[0] < 0 || at[0] >= json.length() || json.charAt(at[0]) != '"') return Optional.empty();
        return Optional.ofNullable(string(json, at));
    }

    /** A top-level array of strings; empty if absent or of another shape. */
    static List<String> stringsOf(String json, String name) {
        int start = valueStart(json, name);
        List<String> out = new ArrayList<>();
        if (start < 0 || start >= json.length() || json.charAt(start) != '[') return out;
        int[] at = {start + 1};
        while (at[0] < json.length()) {
            char c = json.charAt(at[0]);
            if (c == ']') return out;
            if (c == '"') {
                String s = string(json, at);
                if (s == null) return List.of();
                out.add(s);
            } else {
                at[0]++;
            }
        }
        return List.of();
    }

    /** Where the value of a key of the outermost object starts, skipping strings and nested values; -1 if absent. */
    private static int valueStart(String json, String name) {
        int depth = 0;
        int[] at = {0};
        while (at[0] < json.length()) {
            char c = json.charAt(at[0]);
            if (c == '"') {
                String s = string(json, at);
                if (s == null) return -1;
                int next = skipSpace(json, at[0]);
                if (depth == 1 && next < json.length() && json.charAt(next) == ':') {
                    int value = skipSpace(json, next + 1);
                    if (s.equals(name)) return value;
                    at[0] = value;
                }
                continue;
            }
            if (c == '{' || c == '[') depth++;
            if (c == '}' || c == ']') depth--;
            at[0]++;
        }
        return -1;
    }

    private static int skipSpace(String json, int i) {
        while (i < json.length() && Character.isWhitespace(json.charAt(i))) i++;
        return i;
    }

    /** The JSON string starting at at[0] (a quote), decoded; at[0] moves past it. Null if it is cut short. */
    private static String string(String json, int[] at) {
        StringBuilder b = new StringBuilder();
        int i = at[0] + 1;
        while (i < json.length()) {
            char c = json.charAt(i);
            if (c == '"') {
                at[0] = i + 1;
                return b.toString();
            }
            if (c == '\\') {
                if (i + 1 >= json.length()) return null;
                char e = json.charAt(i + 1);
                if (e == 'u') {
                    if (i + 6 > json.length()) return null;
                    try {
                        b.append((char) Integer.parseInt(json.substring(i + 2, i + 6), 16));
                    } catch (NumberFormatException bad) {
                        return null;
                    }
                    i += 6;
                    continue;
                }
                b.append(
                        switch (e) {
                            case 'n' -> '\n';
                            case 't' -> '\t';
                            case 'r' -> '\r';
                            case 'b' -> '\b';
                            case 'f' -> '\f';
                            default -> e;
                        });
                i += 2;
                continue;
            }
            b.append(c);
            i++;
        }
        return null;
    }
}
