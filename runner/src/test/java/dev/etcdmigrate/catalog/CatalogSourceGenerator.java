package dev.etcdmigrate.catalog;

import java.io.InputStream;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes BundledCatalog.java: the bundled catalog (versions/catalog.yaml) as plain constructor calls, so
 * the runner builds it at start without parsing YAML (parsing it costs 0.17-0.78 s of a cold start).
 * BundledCatalogTest fails when the committed file differs from what this prints for the YAML:
 *
 * <pre>
 * ./mvnw -q -pl runner test-compile &amp;&amp; java -cp runner/target/test-classes:runner/target/classes:$(ls runner/target/lib/*.jar | tr '\n' :) \
 *     dev.etcdmigrate.catalog.CatalogSourceGenerator runner/src/main/java/dev/etcdmigrate/catalog/BundledCatalog.java
 * </pre>
 */
public final class CatalogSourceGenerator {

    static final Path SOURCE = Path.of("src/main/java/dev/etcdmigrate/catalog/BundledCatalog.java");

    public static void main(String[] args) throws Exception {
        Path out = args.length > 0 ? Path.of(args[0]) : SOURCE;
        Files.writeString(out, generate(yamlCatalog()));
        System.out.println("wrote " + out);
    }

    static Catalog yamlCatalog() throws Exception {
        try (InputStream in = Catalog.class.getResourceAsStream(Catalog.RESOURCE)) {
            return Catalog.parse(in);
        }
    }

    static String generate(Catalog catalog) {
        StringBuilder b = new StringBuilder();
        b.append("package dev.etcdmigrate.catalog;\n\n");
        b.append("import java.util.List;\nimport java.util.Map;\n\n");
        b.append(
                "/**\n * GENERATED from versions/catalog.yaml by CatalogSourceGenerator (test sources); do not edit. The bundled\n");
        b.append(
                " * catalog as constructor calls: no YAML parse at start. BundledCatalogTest fails when it is stale.\n */\n");
        b.append("final class BundledCatalog {\n\n    private BundledCatalog() {}\n\n");
        b.append("    static List<Release> releases() {\n        return List.of(");
        List<Release> releases = catalog.releases();
        for (int i = 0; i < releases.size(); i++) {
            b.append(i == 0 ? "\n" : ",\n").append("            ");
            value(b, releases.get(i), 3);
        }
        b.append(");\n    }\n}\n");
        return b.toString();
    }

    private static void value(StringBuilder b, Object v, int depth) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof String s) {
            b.append('"');
            for (char c : s.toCharArray()) {
                switch (c) {
                    case '"' -> b.append("\\\"");
                    case '\\' -> b.append("\\\\");
                    case '\n' -> b.append("\\n");
                    default -> {
                        if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
                        else b.append(c);
                    }
                }
            }
            b.append('"');
        } else if (v instanceof Boolean bool) {
            b.append(bool ? "Boolean.TRUE" : "Boolean.FALSE");
        } else if (v instanceof Enum<?> e) {
            b.append(name(e.getDeclaringClass())).append('.').append(e.name());
        } else if (v instanceof List<?> list) {
            b.append("List.of(");
            for (int i = 0; i < list.size(); i++) {
                if (i > 0) b.append(", ");
                value(b, list.get(i), depth + 1);
            }
            b.append(')');
        } else if (v instanceof Map<?, ?> map) {
            // sorted: the same YAML gives the same file
            Map<String, Object> sorted = new TreeMap<>();
            map.forEach((k, x) -> sorted.put((String) k, x));
            b.append("Map.ofEntries(");
            boolean first = true;
            for (Map.Entry<String, Object> e : sorted.entrySet()) {
                if (!first) b.append(", ");
                first = false;
                b.append("Map.entry(");
                value(b, e.getKey(), depth + 1);
                b.append(", ");
                value(b, e.getValue(), depth + 1);
                b.append(')');
            }
            b.append(')');
        } else if (v.getClass().isRecord()) {
            b.append("new ").append(name(v.getClass())).append('(');
            RecordComponent[] components = v.getClass().getRecordComponents();
            for (int i = 0; i < components.length; i++) {
                b.append(i == 0 ? "\n" : ",\n").append("    ".repeat(depth + 1));
                try {
                    value(b, components[i].getAccessor().invoke(v), depth + 1);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException(e);
                }
            }
            b.append(')');
        } else {
            throw new IllegalArgumentException("no source form for " + v.getClass());
        }
    }

    /** Release.Line for a nested type, Release for the top one. */
    private static String name(Class<?> type) {
        return type.getEnclosingClass() == null
                ? type.getSimpleName()
                : name(type.getEnclosingClass()) + "." + type.getSimpleName();
    }
}
