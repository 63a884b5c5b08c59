package dev.etcdmigrate.event;

/**
 * The keyspace a step carries: v2 content found or refused, keys read, dumped, loaded and matched.
 */
public sealed interface KeysEvent extends Event {

    /** A rollback to etcd2 dumped the v3 keys; revisions are not carried into v2. */
    record KeysDumped(long keys, long leased, long expired) implements KeysEvent {
        public String message() {
            return "dumped " + keys + " keys (" + leased + " with a lease TTL, " + expired
                    + " whose lease ran out left behind); revisions are not carried into v2";
        }
    }

    /** Keys written into a store: a conversion's lease re-attachment, or a rollback's load through /v2/keys. */
    record KeysLoaded(String into, long keys, long millis) implements KeysEvent {
        public String message() {
            return "loaded " + keys + " keys " + into + " in " + millis + " ms (" + keys * 1000 / Math.max(1, millis)
                    + " keys/s)";
        }
    }

    /** A keyspace was compared with what it must hold ({@code when}: e.g. "after migrate", "after the restore") and matched. */
    record KeyspaceMatched(String digest, long keys, String when) implements KeysEvent {
        public String message() {
            return "the keyspace matches (digest " + digest + ", " + keys + " keys) " + when;
        }
    }

    /** {@code etcdutl check v2store} found v2 content; {@code remains}: after a fresh snapshot it is still there (real v2 keys). */
    record V2ContentFound(String checker, String finding, boolean remains) implements KeysEvent {
        public String message() {
            return remains
                    ? "etcdutl " + checker + " still finds v2 content after a fresh snapshot: " + finding
                    : "etcdutl " + checker + " found v2 content (" + finding + "); etcd " + checker
                            + " runs once with --snapshot-count=1 so a fresh snapshot follows old v2 WAL entries";
        }
    }

    /**
     * The next line's etcd, started first (see {@code MinorUpgrade}), refused the data for v2 content at start with
     * {@code refusal} (one of its line's catalog lines); the data is as the previous line left it, and the
     * previous line's {@code etcdutl check v2store} decides what the content is.
     */
    record V2ContentRefused(String etcd, String refusal, String checker) implements KeysEvent {
        public String message() {
            return "etcd " + etcd + " refused the data at start for v2 content (\"" + refusal
                    + "\"); the data is still etcd " + checker + " data, and etcdutl " + checker
                    + " check v2store decides what the content is";
        }
    }

    /** An etcd2 conversion read the v2 store: live keys (hidden and to-be-leased among them), expired ones dropped. */
    record V2StoreRead(long keys, long hidden, long leased, long expired, String digest) implements KeysEvent {
        public String message() {
            return "v2 store: " + keys + " live keys (" + hidden + " hidden, " + leased + " to lease), " + expired
                    + " with an expired TTL (not carried over); digest " + digest;
        }
    }
}
