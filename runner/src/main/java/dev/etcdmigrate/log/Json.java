package dev.etcdmigrate.log;

import java.lang.reflect.RecordComponent;
import java.util.List;

/** Just enough JSON writing for events (records of strings, numbers, booleans, lists, nested records): no library at start-up. */
public final class Json {

    private Json() {}

    /** Appends ",\"name\":value" for each record component ("level" and "message" are written by the caller). */
    static void fields(Record record, StringBuilder b) {
        for (RecordComponent c : record.getClass().getRecordComponents()) {
            if (c.getName().equals("level") || c.getName().equals("message")) continue;
            try {
                Object value = c.getAccessor().invoke(record);
                b.append(",\"").append(c.getName()).append("\":");
                value(value, b);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    static void fields(Object event, StringBuilder b) {
        fields((Record) event, b);
    }

    /** A record as one JSON object, every component a field (e.g. the plan for `plan -o json`). */
    public static String object(Record record) {
        StringBuilder b = new StringBuilder();
        value(record, b);
        return b.toString();
    }

    private static void value(Object value, StringBuilder b) {
        switch (value) {
            case null -> b.append("null");
            case Number n -> b.append(n);
            case Boolean bool -> b.append(bool);
            case Enum<?> e -> b.append(string(e.name().toLowerCase(java.util.Locale.ROOT)));
            case Record r -> {
                StringBuilder inner = new StringBuilder();
                fields(r, inner);
                b.append('{').append(inner.isEmpty() ? "" : inner.substring(1)).append('}');
            }
            case List<?> list -> {
                b.append('[');
                for (int i = 0; i < list.size(); i++) {
                    if (i > 0) b.append(',');
                    value(list.get(i), b);
                }
                b.append(']');
            }
            default -> b.append(string(value.toString()));
        }
    }

    static String string(String s) {
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }
}
