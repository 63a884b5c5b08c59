package dev.etcdmigrate.cluster;

/**
 * What a runner knows, on its own disk, of the cluster's restart record (docs/ha.md, "The rules", 2): it holds
 * none, it is creating one (the creation may commit and its answer be lost with the process), or it holds the
 * record written at a revision. Stored by a {@link NoteStore}; read first by a run that starts again.
 */
public sealed interface Note {

    /** No record of this runner's. */
    record None() implements Note {}

    /** Between noting and the create transaction's answer: this runner may hold the record. */
    record Taking() implements Note {}

    /** This runner holds the record written at {@code revision}. */
    record Holds(long revision) implements Note {}

    Note NONE = new None();
    Note TAKING = new Taking();

    /** The file's text (.etcd-migrate/restart-record, one line): "taking" or the revision; no file for none. */
    static Note parse(String text) {
        String t = text.strip();
        if (t.isEmpty()) return NONE;
        if (t.equals("taking")) return TAKING;
        try {
            return new Holds(Long.parseLong(t));
        } catch (NumberFormatException e) {
            // written by nothing but this class: an unreadable note is treated as "may hold", the careful reading
            return TAKING;
        }
    }

    static String text(Note note) {
        return switch (note) {
            case None n -> "";
            case Taking t -> "taking";
            case Holds h -> Long.toString(h.revision());
        };
    }
}
