package dev.etcdmigrate.version;

/**
 * What last wrote a data directory, as recorded in its version.txt: {@code <semver>/<etcd2|etcd3>}.
 */
public record DataVersion(EtcdVersion version, StorageApi storage) {

    public static DataVersion of(String version, StorageApi storage) {
        return new DataVersion(EtcdVersion.parse(version), storage);
    }

    /**
     * Parse of version.txt content. White space around the line (CRLF, spaces, trailing blank lines) is
     * dropped, as the Kubernetes tool's TrimSpace did: nodes whose file it accepted must not crash-loop
     * here. Anything else is an error that quotes the text.
     */
    public static DataVersion parse(String text) {
        String body = text.strip();
        int slash = body.indexOf('/');
        if (slash < 0 || body.indexOf('/', slash + 1) >= 0) {
            throw new IllegalArgumentException(
                    "expected <version>/<etcd2|etcd3>, e.g. 3.5.35/etcd3, found '" + printable(text) + "'");
        }
        EtcdVersion version;
        StorageApi storage;
        try {
            version = EtcdVersion.parse(body.substring(0, slash));
        } catch (IllegalArgumentException e) {
            // the cause quotes the raw text: keep it out of the message, which shows only a cut, escaped copy
            throw new IllegalArgumentException(
                    "expected <version>/<etcd2|etcd3>, e.g. 3.5.35/etcd3, found '" + printable(text)
                            + "': the version is not MAJOR.MINOR.PATCH",
                    e);
        }
        try {
            storage = StorageApi.parse(body.substring(slash + 1));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "expected <version>/<etcd2|etcd3>, e.g. 3.5.35/etcd3, found '" + printable(text)
                            + "': the storage is neither etcd2 nor etcd3",
                    e);
        }
        return new DataVersion(version, storage);
    }

    /** Shows what was read without letting control characters or huge files into the log. */
    static String printable(String text) {
        String cut = text.length() > 64 ? text.substring(0, 64) + "..." : text;
        StringBuilder b = new StringBuilder();
        cut.codePoints().forEach(cp -> {
            if (cp == '\n') b.append("\\n");
            else if (cp < 0x20 || cp == 0x7f) b.append(String.format("\\x%02x", cp));
            else b.appendCodePoint(cp);
        });
        return b.toString();
    }

    /** The text written to version.txt (no trailing newline, like the Kubernetes etcd image). */
    public String format() {
        return version + "/" + storage;
    }

    @Override
    public String toString() {
        return format();
    }

    // equals and hashCode written out: a record's generated ones link an invokedynamic bootstrap (ObjectMethods) at
    // first use, a few ms of every start's cold path for values compared on every start
    @Override
    public boolean equals(Object o) {
        return o instanceof DataVersion d && d.version.equals(version) && d.storage == storage;
    }

    @Override
    public int hashCode() {
        return version.hashCode() * 31 + storage.hashCode();
    }
}
