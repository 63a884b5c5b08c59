package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.etcdmigrate.cli.Flag;
import dev.etcdmigrate.cli.MigrateFlags;
import dev.etcdmigrate.config.EtcdCommandLine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every manifest under manifests/ (and the docker run recipe in docs/image.md) agrees with the image
 * and the runner: image name and tag, environment variables the runner reads (MigrateFlags.FLAGS),
 * runner flags before "--", bundled etcd binaries, and no ETCD_* variable that duplicates a flag
 * given to etcd (etcd 3.4+ refuses to start on that).
 */
class ManifestsTest {

    static final Path MANIFESTS = Path.of(System.getProperty("manifests.dir", "../manifests"));
    static final Path DOCS = Path.of(System.getProperty("docs.dir", "../docs"));
    static final String IMAGE_NAME = System.getProperty("image.name", "etcd-migrate");
    static final String IMAGE_TAG = System.getProperty("image.tag");
    /** The one image reference the manifests use (image/pom.xml's image.reference, rendered in). */
    static final String IMAGE_REFERENCE = System.getProperty("image.reference");

    static final List<String> BUNDLED =
            Arrays.asList(System.getProperty("etcd.bundled.versions").split(","));
    static final String NEWEST = System.getProperty("etcd.newest.version");

    /** Variables a pod may set that the runner does not read: Kubernetes plumbing for $(VAR) expansion. */
    static final Set<String> OTHER_ENV = Set.of("POD_NAME", "POD_IP", "POD_NAMESPACE", "ETCD_HOSTNAME", "HOSTNAME");

    static final Map<String, Flag> FLAGS = MigrateFlags.FLAGS.stream().collect(Collectors.toMap(Flag::name, f -> f));
    static final Set<String> RUNNER_ENV =
            MigrateFlags.FLAGS.stream().flatMap(f -> f.env().stream()).collect(Collectors.toSet());

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @Test
    void thereAreManifests() throws IOException {
        assertTrue(
                manifestFiles().size() >= 2,
                "expected the static pod and the StatefulSet under " + MANIFESTS.toAbsolutePath());
    }

    /** The schema check is strict: a misspelt field (here a probe's) is refused, not ignored. */
    @Test
    void schemaRefusesAnUnknownField() throws IOException {
        JsonNode pod = documents(MANIFESTS.resolve("etcd-static-pod.yaml")).getFirst();
        KubernetesSchema.validate(pod, "as shipped");
        ((com.fasterxml.jackson.databind.node.ObjectNode)
                        pod.path("spec").path("containers").get(0).path("livenessProbe"))
                .put("failureTreshold", 3);
        AssertionError refused = org.junit.jupiter.api.Assertions.assertThrows(
                AssertionError.class, () -> KubernetesSchema.validate(pod, "misspelt"));
        assertTrue(refused.getMessage().contains("failureTreshold"), refused.getMessage());
    }

    /** Rendered from manifests/: every ${image.reference} filled in, the same reference everywhere. */
    @Test
    void oneImageReference() throws IOException {
        assertTrue(
                IMAGE_REFERENCE != null && IMAGE_REFERENCE.endsWith("/" + IMAGE_NAME + ":" + IMAGE_TAG),
                IMAGE_REFERENCE);
        try (Stream<Path> files = Files.walk(MANIFESTS)) {
            for (Path file : files.filter(Files::isRegularFile).toList()) {
                String text = Files.readString(file);
                assertFalse(text.contains("${"), file + " still holds a ${...} placeholder");
                Matcher image = Pattern.compile(
                                "(?m)^\\s*(?:image|value):\\s*(\\S*" + Pattern.quote(IMAGE_NAME) + ":\\S*)")
                        .matcher(text);
                while (image.find()) {
                    assertEquals(
                            IMAGE_REFERENCE, image.group(1), file + ": an image reference other than image.reference");
                }
            }
        }
    }

    @TestFactory
    Stream<DynamicTest> everyManifest() throws IOException {
        return manifestFiles().stream()
                .map(file -> DynamicTest.dynamicTest(file.getFileName().toString(), () -> check(file)));
    }

    /** The docker run recipes operators copy, in docs/image.md and the README. */
    @TestFactory
    Stream<DynamicTest> dockerRunRecipes() {
        return Stream.of(DOCS.resolve("image.md"), DOCS.resolveSibling("README.md"))
                .map(doc -> DynamicTest.dynamicTest(doc.getFileName().toString(), () -> checkDockerRuns(doc)));
    }

    private static void checkDockerRuns(Path doc) throws IOException {
        String where = doc.getFileName().toString();
        assertTrue(Files.isRegularFile(doc), doc + " is missing");
        String text = Files.readString(doc).replace("\\\n", " ");
        Matcher run = Pattern.compile("(?m)^\\s*docker run [^\\n]*").matcher(text);
        int checked = 0;
        while (run.find()) {
            List<String> words = Arrays.asList(run.group().trim().split("\\s+"));
            int image = -1;
            for (int i = 0; i < words.size(); i++) {
                if (words.get(i).matches("([\\w.-]+(:\\d+)?/)*" + Pattern.quote(IMAGE_NAME) + ":[\\w.-]+")) {
                    image = i;
                    break;
                }
            }
            if (image < 0) continue;
            checkImage(words.get(image), where + ": " + run.group().trim());
            for (int i = 0; i < image; i++) {
                if (words.get(i).equals("-e")) {
                    String name = words.get(i + 1).split("=", 2)[0];
                    assertTrue(
                            RUNNER_ENV.contains(name) || OTHER_ENV.contains(name),
                            where + ": unknown variable " + name);
                }
            }
            checkRunnerArgs(
                    words.subList(image + 1, words.size()),
                    where + ": " + run.group().trim(),
                    Map.of());
            checked++;
        }
        assertTrue(checked > 0, where + " has no `docker run ... " + IMAGE_NAME + ":TAG` recipe");
    }

    // ------------------------------------------------------------------ checks

    private static List<Path> manifestFiles() throws IOException {
        try (Stream<Path> files = Files.list(MANIFESTS)) {
            return files.filter(
                            f -> f.toString().endsWith(".yaml") || f.toString().endsWith(".yml"))
                    .sorted()
                    .toList();
        }
    }

    static List<JsonNode> documents(Path file) throws IOException {
        List<JsonNode> documents = new ArrayList<>();
        try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(file.toFile())) {
            while (it.hasNext()) {
                JsonNode doc = it.next();
                if (doc != null && !doc.isNull() && !doc.isMissingNode()) documents.add(doc);
            }
        }
        return documents;
    }

    private static void check(Path file) throws IOException {
        List<JsonNode> documents = documents(file);
        assertFalse(documents.isEmpty(), file + " holds no document");
        int images = 0;
        for (JsonNode doc : documents) {
            assertTrue(
                    doc.hasNonNull("apiVersion") && doc.hasNonNull("kind"),
                    file + ": a document without apiVersion/kind");
            KubernetesSchema.validate(
                    doc, file.getFileName() + " " + doc.path("kind").asText());
            JsonNode podSpec = switch (doc.path("kind").asText()) {
                case "Pod" -> doc.path("spec");
                case "StatefulSet", "Deployment", "DaemonSet", "ReplicaSet", "Job" ->
                    doc.path("spec").path("template").path("spec");
                default -> null;
            };
            if (podSpec == null) continue;
            images += checkPod(
                    podSpec,
                    file.getFileName() + " " + doc.path("kind").asText() + "/"
                            + doc.path("metadata").path("name").asText());
        }
        assertTrue(images > 0, file + " runs no " + IMAGE_NAME + " container");
    }

    /** Returns how many containers run the image. */
    static int checkPod(JsonNode spec, String where) {
        int images = 0;
        Optional<String> targetVersion = Optional.empty();
        List<JsonNode> all = new ArrayList<>();
        spec.path("initContainers").forEach(all::add);
        spec.path("containers").forEach(all::add);
        for (JsonNode container : all) {
            String image = container.path("image").asText();
            if (!image.matches("([^/]+/)*" + Pattern.quote(IMAGE_NAME) + ":.*")) continue;
            images++;
            String at = where + " container " + container.path("name").asText();
            checkImage(image, at);
            assertEquals(IMAGE_REFERENCE, image, at + ": not the image reference the build sets (image.reference)");
            Map<String, String> env = new HashMap<>();
            container
                    .path("env")
                    .forEach(e ->
                            env.put(e.path("name").asText(), e.path("value").asText()));
            List<String> command = strings(container.path("command"));
            List<String> args = strings(container.path("args"));
            if (command.isEmpty()) {
                // the image's entrypoint: the runner
                for (String name : env.keySet()) {
                    assertTrue(
                            RUNNER_ENV.contains(name) || OTHER_ENV.contains(name),
                            at + ": environment variable " + name + " is read neither by the runner (" + RUNNER_ENV
                                    + ") nor used for $(VAR)");
                }
                String target = checkRunnerArgs(args, at, env);
                targetVersion = Optional.of(target);
            } else {
                // etcd itself, from the image's bin dir
                String program = command.getFirst();
                Matcher m = Pattern.compile("/usr/local/bin/etcd(?:-(\\d+\\.\\d+\\.\\d+))?")
                        .matcher(program);
                assertTrue(m.matches(), at + ": command " + program + " is not a bundled etcd");
                String version = m.group(1) == null ? NEWEST : m.group(1);
                assertTrue(BUNDLED.contains(version), at + ": etcd " + version + " is not bundled " + BUNDLED);
                if (targetVersion.isPresent()) {
                    assertEquals(
                            targetVersion.get(),
                            version,
                            at + ": runs etcd " + version + " but the init container migrates to "
                                    + targetVersion.get());
                }
                List<String> etcdArgs = new ArrayList<>(command.subList(1, command.size()));
                etcdArgs.addAll(args);
                checkEtcdArgs(etcdArgs, env, version, at);
            }
        }
        return images;
    }

    static void checkImage(String image, String at) {
        String tag = image.substring(image.lastIndexOf(':') + 1);
        assertEquals(IMAGE_TAG, tag, at + ": image " + image + " is not the tag the build makes");
    }

    /** Checks the runner's flags (before "--") and etcd's (after); returns the target version. */
    static String checkRunnerArgs(List<String> args, String at, Map<String, String> env) {
        if (!args.isEmpty() && List.of("migrate", "plan").contains(args.getFirst())) {
            args = args.subList(1, args.size()); // the runner's commands that take the migrate flags
        }
        int dash = args.indexOf("--");
        List<String> runner = dash < 0 ? args : args.subList(0, dash);
        Map<String, String> given = new HashMap<>();
        for (int i = 0; i < runner.size(); i++) {
            String arg = runner.get(i);
            if (!arg.startsWith("--")) fail(at + ": '" + arg + "' is not a runner flag (etcd's flags go after --)");
            String name = arg.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            Flag flag = FLAGS.get(name);
            if (flag == null) fail(at + ": the runner has no flag --" + name + " (it has " + FLAGS.keySet() + ")");
            if (flag.takesValue() && value == null) {
                assertTrue(i + 1 < runner.size(), at + ": --" + name + " needs a value");
                value = runner.get(++i);
            }
            if (!flag.takesValue()) assertTrue(value == null, at + ": --" + name + " takes no value");
            given.put(name, value);
        }
        String target = Optional.ofNullable(given.get("target-version")).orElse(env.get("TARGET_VERSION"));
        assertTrue(target != null, at + ": no --target-version or TARGET_VERSION");
        assertTrue(BUNDLED.contains(target), at + ": target " + target + " is not bundled " + BUNDLED);
        if (dash >= 0) {
            checkEtcdArgs(args.subList(dash + 1, args.size()), env, target, at);
        }
        return target;
    }

    /** etcd's arguments read as etcd reads them (EtcdCommandLine, the runner's own reader). */
    private static void checkEtcdArgs(List<String> etcdArgs, Map<String, String> env, String version, String at) {
        EtcdCommandLine etcd = EtcdCommandLine.read(etcdArgs, env);
        assertEquals(Optional.empty(), etcd.error(), at);
        assertEquals(List.of(), etcd.unread(), at + ": etcd refuses words that are not flags");
        assertEquals(
                List.of(),
                etcd.duplicateVariables(),
                at + ": variables that duplicate etcd's flags (etcd 3.4+ refuses to start)");
        for (String name : etcd.names()) {
            assertFalse(
                    name.startsWith("experimental-"),
                    at + ": --" + name + ": etcd 3.7 removed every --experimental-* flag");
        }
    }

    private static List<String> strings(JsonNode array) {
        List<String> list = new ArrayList<>();
        array.forEach(n -> list.add(n.asText()));
        return list;
    }
}
