package dev.etcdmigrate.event;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.step.Step;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The JSON events (`--log-format=json`) and step kinds (`plan -o json`, step events) are a contract with
 * whatever reads them: every event's name and fields and every step kind are pinned in events.golden.
 * A rename or a dropped field fails here; change the file only on purpose (-Dgolden.update=true rewrites
 * it from the code, then review the diff).
 */
class EventContractTest {

    private static final String GOLDEN = "events.golden";

    @Test
    void eventNamesFieldsAndStepKindsAreTheGoldenOnes() throws Exception {
        String actual = contract();
        if (Boolean.getBoolean("golden.update")) {
            Files.writeString(
                    Path.of("src/test/resources/dev/etcdmigrate/event").resolve(GOLDEN), actual);
            return; // the copy on the class path is the old one until the next build
        }
        String golden;
        try (InputStream in = EventContractTest.class.getResourceAsStream(GOLDEN)) {
            golden = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        assertEquals(
                golden,
                actual,
                "the operator contract changed; if on purpose, run with -Dgolden.update=true and review the diff");
    }

    @Test
    void namesAreUnique() throws Exception {
        List<String> names = new ArrayList<>();
        for (Class<?> type : records(Event.class)) names.add(((Event) sample(type)).name());
        assertEquals(names.size(), new HashSet<>(names).size(), names.toString());
        List<String> kinds = new ArrayList<>();
        for (Class<?> type : Step.class.getPermittedSubclasses()) kinds.add(((Step) sample(type)).kind());
        assertEquals(kinds.size(), new HashSet<>(kinds).size(), kinds.toString());
    }

    static String contract() throws Exception {
        StringBuilder b = new StringBuilder("""
                # etcd-migrate's operator contract: the "event" name and fields of each JSON log line (--log-format=json;
                # every line also has time, level, source and message), the objects nested in them, and the step kinds
                # (the "kind" of step events and of `plan -o json`). child-output carries a child's own JSON line with
                # "source" in front, or wraps any other line as source and line. Pinned by EventContractTest.
                """);
        TreeMap<String, String> events = new TreeMap<>();
        TreeMap<String, Class<?>> nested = new TreeMap<>();
        for (Class<?> type : records(Event.class)) {
            events.put(((Event) sample(type)).name(), fields(type, nested));
        }
        events.forEach(
                (name, fields) -> b.append("event ").append(name).append(fields).append('\n'));
        TreeMap<String, String> objects = new TreeMap<>();
        while (!nested.isEmpty()) {
            var first = nested.pollFirstEntry();
            objects.put(first.getKey(), fields(first.getValue(), nested));
        }
        objects.forEach((name, fields) ->
                b.append("object ").append(name).append(fields).append('\n'));
        List<String> kinds = new ArrayList<>();
        for (Class<?> type : Step.class.getPermittedSubclasses()) kinds.add(((Step) sample(type)).kind());
        kinds.stream().sorted().forEach(k -> b.append("step ").append(k).append('\n'));
        return b.toString();
    }

    private static String fields(Class<?> record, TreeMap<String, Class<?>> nested) {
        StringBuilder b = new StringBuilder();
        for (RecordComponent c : record.getRecordComponents()) {
            if (c.getName().equals("level") || c.getName().equals("message")) continue;
            b.append(' ').append(c.getName()).append(':').append(type(c.getGenericType(), nested));
        }
        return b.toString();
    }

    private static String type(Type type, TreeMap<String, Class<?>> nested) {
        if (type instanceof ParameterizedType p && p.getRawType() == List.class) {
            return "[" + type(p.getActualTypeArguments()[0], nested) + "]";
        }
        Class<?> c = (Class<?>) type;
        if (c == String.class) return "string";
        if (c == int.class || c == long.class) return "number";
        if (c == boolean.class) return "boolean";
        if (c.isEnum()) {
            return String.join(
                    "|",
                    Arrays.stream(c.getEnumConstants())
                            .map(e -> ((Enum<?>) e).name().toLowerCase(java.util.Locale.ROOT))
                            .toList());
        }
        if (c.isRecord()) {
            String name = c.getSimpleName();
            nested.put(name, c);
            return name;
        }
        throw new IllegalStateException("no JSON type for " + type);
    }

    /** The event records: the leaves under Event's sealed subject interfaces. */
    static List<Class<?>> records(Class<?> sealed) {
        List<Class<?>> records = new ArrayList<>();
        for (Class<?> type : sealed.getPermittedSubclasses()) {
            if (type.isRecord()) records.add(type);
            else records.addAll(records(type));
        }
        return records;
    }

    /** An instance of a record with empty values, to ask it its name. */
    private static Object sample(Class<?> type) throws Exception {
        RecordComponent[] components = type.getRecordComponents();
        Class<?>[] types =
                Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new);
        Object[] values = new Object[components.length];
        for (int i = 0; i < types.length; i++) {
            values[i] = types[i] == int.class
                    ? 0
                    : types[i] == long.class
                            ? 0L
                            : types[i] == boolean.class
                                    ? false
                                    : types[i] == String.class
                                            ? ""
                                            : types[i] == List.class
                                                    ? List.of()
                                                    : types[i] == Optional.class
                                                            ? Optional.empty()
                                                            : types[i] == Set.class
                                                                    ? Set.of()
                                                                    : types[i].isEnum()
                                                                            ? types[i].getEnumConstants()[0]
                                                                            : null;
        }
        Constructor<?> constructor = type.getDeclaredConstructor(types);
        constructor.setAccessible(true);
        return constructor.newInstance(values);
    }
}
