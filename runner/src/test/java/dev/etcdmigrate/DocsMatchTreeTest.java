package dev.etcdmigrate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * docs/architecture.md cannot drift from the tree: it names every package of the runner and every public
 * top-level type of its main sources, and every package, type and member the project's own docs name in
 * backticks exists as written.
 */
class DocsMatchTreeTest {

    private static final Path REPO = Path.of("").toAbsolutePath().getParent();
    private static final Path MAIN = REPO.resolve("runner/src/main/java/dev/etcdmigrate");
    private static final Path TOOLS = REPO.resolve("runner/src/tools/java/dev/etcdmigrate");
    /** The source roots whose types the docs may name: the runner's main, tools and tests, and the image's. */
    private static final List<Path> SOURCES =
            List.of(REPO.resolve("runner/src"), REPO.resolve("test-fixtures/src"), REPO.resolve("image/src"));
    /** The docs whose backticked names must exist; docs/architecture.md must also name the whole tree. */
    private static final List<String> DOCS = List.of(
            "docs/architecture.md",
            "README.md",
            "docs/development.md",
            "docs/operations.md",
            "docs/testing.md",
            "docs/compatibility.md",
            "docs/runbooks/README.md",
            "docs/runbooks/kubeadm-one-node.md",
            "docs/runbooks/kubeadm-three-nodes.md",
            "docs/runbooks/kubeadm-upgrade.md",
            "docs/runbooks/rollback.md",
            "docs/runbooks/status.md",
            "docs/runbooks/exit-codes.md");

    private static final Pattern TICKED = Pattern.compile("`([^`\\s]+)`");
    private static final Pattern PACKAGE = Pattern.compile("[a-z][a-z0-9]*(?:[./][a-z][a-z0-9]*)*/?");
    /** A type, a nested type or a member of one: {@code Step}, {@code Topology.Member}, {@code Event.name()}. */
    private static final Pattern TYPE_REF =
            Pattern.compile("[A-Z][a-z0-9]+[A-Za-z0-9]*(?:\\.[A-Z][A-Za-z0-9]*)*(?:\\.[a-z][A-Za-z0-9]*(?:\\(\\))?)?");
    /** A type named with its package: {@code cli/MigrateFlags}, {@code etcd.client.ClusterClient}. */
    private static final Pattern QUALIFIED = Pattern.compile(
            "(?:[a-z][a-z0-9]*[./])+([A-Z][A-Za-z0-9]*(?:\\.[A-Z][A-Za-z0-9]*)*)(?:\\.[a-z]\\w*(?:\\(\\))?)?");
    /** Two or more capitals: the picture's class names, not its prose. */
    private static final Pattern PICTURED = Pattern.compile("\\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\\b");

    private static final Pattern DECLARATION =
            Pattern.compile("\\b(?:class|interface|record|enum)\\s+([A-Z][A-Za-z0-9]*)");

    private static String doc(String path) throws IOException {
        return Files.readString(REPO.resolve(path));
    }

    private static List<String> ticked(String text) {
        List<String> found = new ArrayList<>();
        Matcher m = TICKED.matcher(text);
        while (m.find()) {
            found.add(m.group(1));
        }
        return found;
    }

    private static String picture(String architecture) {
        int fence = architecture.indexOf("```");
        return architecture.substring(fence + 3, architecture.indexOf("```", fence + 3));
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

    /** Every type declared in the sources (nested ones too), with the files that declare it. */
    private static Map<String, List<Path>> declaredTypes() throws IOException {
        Map<String, List<Path>> types = new HashMap<>();
        for (Path root : SOURCES) {
            try (Stream<Path> files = Files.walk(root)) {
                for (Path file :
                        files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    Matcher m = DECLARATION.matcher(Files.readString(file));
                    while (m.find()) {
                        types.computeIfAbsent(m.group(1), k -> new ArrayList<>())
                                .add(file);
                    }
                }
            }
        }
        return types;
    }

    /** The public top-level types of the main sources, as "package/Type" ("Main" for the root package). */
    private static Set<String> publicTopLevelTypes() throws IOException {
        Set<String> types = new TreeSet<>();
        try (Stream<Path> files = Files.walk(MAIN)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String name = file.getFileName().toString().replace(".java", "");
                Pattern top = Pattern.compile("(?m)^public\\s+(?:(?:final|abstract|sealed|non-sealed|static)\\s+)*"
                        + "(?:class|interface|record|enum)\\s+" + name + "\\b");
                if (top.matcher(Files.readString(file)).find()) {
                    types.add(MAIN.relativize(file).toString().replace(".java", ""));
                }
            }
        }
        return types;
    }

    /** The capitalised words of a backticked name: `cli/MigrateFlags` names MigrateFlags, `A.B` names A and B. */
    private static Set<String> namedTypes(String architecture) {
        Set<String> named = new TreeSet<>();
        for (String t : ticked(architecture)) {
            for (String part : t.split("[./()]")) {
                if (!part.isEmpty() && Character.isUpperCase(part.charAt(0))) {
                    named.add(part);
                }
            }
        }
        Matcher m = PICTURED.matcher(picture(architecture));
        while (m.find()) {
            named.add(m.group());
        }
        return named;
    }

    @Test
    void everyPackageIsNamedByTheArchitecture() throws IOException {
        Set<String> named = new TreeSet<>();
        for (String t : ticked(doc("docs/architecture.md"))) {
            String pkg = t.replaceAll("[./][A-Z].*$", "");
            if (PACKAGE.matcher(pkg).matches()) {
                named.add(asPath(pkg));
            }
        }
        Set<String> unnamed = new TreeSet<>(packages(MAIN));
        unnamed.addAll(packages(TOOLS));
        unnamed.removeAll(named);
        assertEquals(Set.of(), unnamed, "packages docs/architecture.md does not name");
    }

    @Test
    void everyPublicTypeIsNamedByTheArchitecture() throws IOException {
        Set<String> named = namedTypes(doc("docs/architecture.md"));
        List<String> unnamed = publicTopLevelTypes().stream()
                .filter(t -> !named.contains(t.substring(t.lastIndexOf('/') + 1)))
                .toList();
        assertEquals(List.of(), unnamed, "public types of runner/src/main/java docs/architecture.md does not name");
    }

    @Test
    void everyPackageInTheArchitecturesTableExists() throws IOException {
        Set<String> named = new TreeSet<>();
        Matcher row = Pattern.compile("(?m)^\\| `([^|]+)` \\|").matcher(doc("docs/architecture.md"));
        while (row.find()) {
            for (String p : row.group(1).split("`, `")) {
                if (!p.equals("dev.etcdmigrate")) {
                    named.add(asPath(p));
                }
            }
        }
        List<String> missing = named.stream()
                .filter(p -> !Files.isDirectory(MAIN.resolve(p)) && !Files.isDirectory(TOOLS.resolve(p)))
                .toList();
        assertEquals(List.of(), missing, "packages docs/architecture.md's table names that do not exist");
    }

    @Test
    void everyNamedTypeAndMemberExists() throws IOException {
        Map<String, List<Path>> declared = declaredTypes();
        List<String> missing = new ArrayList<>();
        for (String path : DOCS) {
            String text = doc(path);
            Set<String> names = new TreeSet<>();
            for (String t : ticked(text)) {
                t = t.endsWith(".java") ? t.substring(0, t.length() - ".java".length()) : t;
                if (TYPE_REF.matcher(t).matches() || QUALIFIED.matcher(t).matches()) {
                    names.add(t);
                }
            }
            if (path.equals("docs/architecture.md")) {
                Matcher m = PICTURED.matcher(picture(text));
                while (m.find()) {
                    names.add(m.group());
                }
            }
            for (String name : names) {
                if (!exists(name, declared)) {
                    missing.add(path + ": " + name);
                }
            }
        }
        assertEquals(List.of(), missing, "names the docs give in backticks that the sources do not declare");
    }

    /**
     * A name as written: its package (when given) holds its first type, each nested type is declared in the file
     * that declares the one before it, and a member ({@code .name} or {@code .name()}) is declared there too.
     */
    private static boolean exists(String name, Map<String, List<Path>> declared) throws IOException {
        Matcher q = QUALIFIED.matcher(name);
        String packagePath = null;
        String rest = name;
        if (q.matches()) {
            rest = q.group(1) + name.substring(q.end(1));
            packagePath = asPath(name.substring(0, q.start(1) - 1));
        }
        String member = null;
        Matcher tail = Pattern.compile("\\.([a-z]\\w*)(?:\\(\\))?$").matcher(rest);
        if (tail.find()) {
            member = tail.group(1);
            rest = rest.substring(0, tail.start());
        }
        String[] types = rest.split("\\.");
        List<Path> files = declared.getOrDefault(types[0], List.of());
        if (packagePath != null) {
            String wanted = packagePath + "/" + types[0] + ".java";
            files = files.stream()
                    .filter(f -> f.toString().endsWith("/" + wanted))
                    .toList();
        }
        for (Path file : files) {
            String source = Files.readString(file);
            boolean nested = true;
            for (int i = 1; i < types.length && nested; i++) {
                nested = Pattern.compile("\\b(?:class|interface|record|enum)\\s+" + types[i] + "\\b")
                        .matcher(source)
                        .find();
            }
            if (nested
                    && (member == null
                            || Pattern.compile("\\b" + member + "\\s*\\(")
                                    .matcher(source)
                                    .find()
                            || Pattern.compile("\\b" + member + "\\b\\s*[,;=)]")
                                    .matcher(source)
                                    .find())) {
                return true;
            }
        }
        return false;
    }
}
