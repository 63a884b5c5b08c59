package dev.etcdmigrate.version;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** An etcd release version, {@code MAJOR.MINOR.PATCH}; pre-release suffixes are not accepted. */
public record EtcdVersion(int major, int minor, int patch) implements Comparable<EtcdVersion> {

    private static final Pattern SEMVER = Pattern.compile("(0|[1-9]\\d{0,3})\\.(0|[1-9]\\d{0,3})\\.(0|[1-9]\\d{0,3})");

    public EtcdVersion {
        if (major < 0 || minor < 0 || patch < 0) {
            throw new IllegalArgumentException("negative version component");
        }
    }

    /** Parses {@code 3.5.21}; anything else (a leading v, a suffix, blanks) is rejected. */
    public static EtcdVersion parse(String text) {
        Matcher m = SEMVER.matcher(text == null ? "" : text);
        if (!m.matches()) {
            throw new IllegalArgumentException("not an etcd version (MAJOR.MINOR.PATCH, e.g. 3.5.35): '" + text + "'");
        }
        return new EtcdVersion(
                Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)));
    }

    public MinorLine line() {
        return new MinorLine(major, minor);
    }

    public boolean sameLine(EtcdVersion other) {
        return line().equals(other.line());
    }

    @Override
    public int compareTo(EtcdVersion o) {
        int c = Integer.compare(major, o.major);
        if (c == 0) c = Integer.compare(minor, o.minor);
        if (c == 0) c = Integer.compare(patch, o.patch);
        return c;
    }

    public boolean isOlderThan(EtcdVersion o) {
        return compareTo(o) < 0;
    }

    @Override
    public String toString() {
        return major + "." + minor + "." + patch;
    }

    // equals and hashCode written out: a record's generated ones link an invokedynamic bootstrap (ObjectMethods) at
    // first use, a few ms of every start's cold path for values compared on every start
    @Override
    public boolean equals(Object o) {
        return o instanceof EtcdVersion v && v.major == major && v.minor == minor && v.patch == patch;
    }

    @Override
    public int hashCode() {
        return (major * 31 + minor) * 31 + patch;
    }
}
