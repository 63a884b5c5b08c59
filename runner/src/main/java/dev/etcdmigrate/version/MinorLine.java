package dev.etcdmigrate.version;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** An etcd release line such as 3.5: the unit in which upgrades and downgrades move. */
public record MinorLine(int major, int minor) implements Comparable<MinorLine> {

    private static final Pattern LINE = Pattern.compile("(0|[1-9]\\d{0,3})\\.(0|[1-9]\\d{0,3})");

    public static MinorLine parse(String text) {
        Matcher m = LINE.matcher(text == null ? "" : text);
        if (!m.matches()) {
            throw new IllegalArgumentException("not an etcd release line (MAJOR.MINOR, e.g. 3.5): '" + text + "'");
        }
        return new MinorLine(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
    }

    @Override
    public int compareTo(MinorLine o) {
        int c = Integer.compare(major, o.major);
        return c != 0 ? c : Integer.compare(minor, o.minor);
    }

    public boolean isOlderThan(MinorLine o) {
        return compareTo(o) < 0;
    }

    @Override
    public String toString() {
        return major + "." + minor;
    }

    // equals and hashCode written out: a record's generated ones link an invokedynamic bootstrap (ObjectMethods) at
    // first use, a few ms of every start's cold path for values compared on every start
    @Override
    public boolean equals(Object o) {
        return o instanceof MinorLine l && l.major == major && l.minor == minor;
    }

    @Override
    public int hashCode() {
        return major * 31 + minor;
    }
}
