package dev.etcdmigrate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * README's layout and docs/architecture.md cannot drift from the tree: every package of the runner is named by
 * one of them, and every package and class they name exists (issue 39: both had drifted twice).
 */
class DocsMatchTreeTest {

    private static final Path REPO = Path.of("").toAbsolutePath().getParent();
    private static final Path MAIN = REPO.resolve("runner/src/main/java/dev/etcdmigrate");
    private static final Path TOOLS = REPO.resolve("runner/src/tools/java/dev/etcdmigrate");
    private static final Pattern TICKED = Pattern.compile("`([^`\\s]+)`");
    private static final Pattern PACKAGE = Pattern.compile("[a-z][a-z0-9]*(?:[./][a-z][a-z0-9]*)*/?");
    private static final Pattern CLASS = Pattern.compile("[A-Z][a-z0-9]+[A-Za-z0-9]*(?:\\.[A-Z][A-Za-z0-9]*)*");
    /** Two or more capitals: the picture's class names, not its prose. */
    private static final Pattern PICTURED = Pattern.compile("\\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\\b");

    private static String readmeLayout() throws IOException {
        String readme = Files.readString(REPO.resolve("docs/architecture.md"));
        int start = readme.indexOf("\n## Where the code is");
        int end = readme.indexOf("\n## ", start + 1);
        return readme.substring(start, end < 0 ? readme.length() : end);
    }

    private static String architecture() throws IOException {
        return Files.readString(REPO.resolve("docs/architecture.md"));
    }

    private static Set<String> ticked(String text, Pattern shape) {
        Set<String> found = new TreeSet<>();
        Matcher m = TICKED.matcher(text);
        while (m.find()) {
            if (shape.matcher(m.group(1)).matches()) {
                found.add(m.group(1));
            }
        }
        return found;
    }

    /** The runner's packages, as paths below dev/etcdmigrate (e.g. "etcd/server"). */
    private static Set<String> packages(Path root) throws IOException {
        if (!Files.isDirectory(root)) {
            return Set.of();
        }
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(p -> p.toString().endsWith(".java"))
                    .map(p -> root.relativize(p.getParent()).toString())
                    .filter(p -> !p.isEmpty())
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }

    private static String asPath(String name) {
        String path = name.replace('.', '/');
        return path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
    }

    /** Every type declared in the runner's sources (main, tools and test), nested ones too. */
    private static Set<String> declaredTypes() throws IOException {
        Pattern declaration = Pattern.compile("\\b(?:class|interface|record|enum)\\s+([A-Z][A-Za-z0-9]*)");
        Set<String> types = new TreeSet<>();
        try (Stream<Path> files = Files.walk(REPO.resolve("runner/src"))) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                Matcher m = declaration.matcher(Files.readString(file));
                while (m.find()) {
                    types.add(m.group(1));
                }
            }
        }
        return types;
    }

    @Test
    void everyPackageIsNamedByTheReadmeOrTheArchitecture() throws IOException {
        Set<String> named = new TreeSet<>();
        ticked(readmeLayout(), PACKAGE).forEach(p -> named.add(asPath(p)));
        ticked(architecture(), PACKAGE).forEach(p -> named.add(asPath(p)));
        Set<String> unnamed = new TreeSet<>(packages(MAIN));
        unnamed.addAll(packages(TOOLS));
        unnamed.removeAll(named);
        assertEquals(Set.of(), unnamed, "packages neither README's layout nor docs/architecture.md names");
    }

    @Test
    void everyNamedPackageExists() throws IOException {
        Set<String> named = new TreeSet<>();
        ticked(readmeLayout(), PACKAGE).stream().filter(p -> p.endsWith("/")).forEach(p -> named.add(asPath(p)));
        // the architecture's table of rooms: its first column
        Matcher row = Pattern.compile("(?m)^\\| `([^|]+)` \\|").matcher(architecture());
        while (row.find()) {
            for (String p : row.group(1).split("`, `")) {
                if (!p.equals("dev.etcdmigrate")) {
                    named.add(asPath(p));
                }
            }
        }
        List<String> missing = named.stream()
                .filter(p -> !Files.isDirectory(MAIN.resolve(p))
                        && !Files.isDirectory(TOOLS.resolve(p))
                        && !Files.isDirectory(REPO.resolve(p)))
                .toList();
        assertEquals(List.of(), missing, "packages or folders the docs name that do not exist");
    }

    @Test
    void everyNamedClassExists() throws IOException {
        Set<String> named = new TreeSet<>(ticked(readmeLayout(), CLASS));
        String architecture = architecture();
        named.addAll(ticked(architecture, CLASS));
        int fence = architecture.indexOf("```");
        String picture = architecture.substring(fence + 3, architecture.indexOf("```", fence + 3));
        Matcher m = PICTURED.matcher(picture);
        while (m.find()) {
            named.add(m.group());
        }
        Set<String> declared = declaredTypes();
        List<String> missing = named.stream()
                .filter(n -> !declared.contains(n.substring(n.lastIndexOf('.') + 1)))
                .toList();
        assertEquals(List.of(), missing, "classes README's layout or docs/architecture.md names that do not exist");
    }
}
