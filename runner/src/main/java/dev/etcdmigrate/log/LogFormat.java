package dev.etcdmigrate.log;

import java.util.Locale;

/** --log-format: the operator's text diary, or one JSON object per line for a log pipeline. */
public enum LogFormat {
    TEXT,
    JSON;

    /** @throws IllegalArgumentException naming the accepted values */
    public static LogFormat parse(String value) {
        for (LogFormat f : values()) {
            if (f.name().toLowerCase(Locale.ROOT).equals(value)) return f;
        }
        throw new IllegalArgumentException("--log-format must be text or json, not '" + value + "'");
    }
}
