package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The kubeadm patches against kubeadm itself (profile `kubeadm`): for each covered kubeadm release
 * (built from the Go module proxy by scripts/build-kubernetes.sh), kubeadm renders its real local
 * etcd static pod (`kubeadm init phase etcd local --rootfs DIR`, no cluster), once as is and once
 * through its patches mechanism (InitConfiguration `patches.directory`) with each of manifests/kubeadm/{entrypoint,init-container}. The patched pod
 * must pass Kubernetes' schema strictly, keep everything kubeadm wrote except what the patch
 * changes (annotation, volumes, kubeadm's etcd flags after "--"), pass the runner's flag rules, have
 * its etcd flags accepted by the target etcd (`etcd <flags> --version`), be planned by the runner's
 * own `plan` against real 3.5 data in kubeadm's data dir, and (init container) migrate that data
 * for real, every key checked afterwards with the target etcd. Older releases' pods are recorded files
 * ({@link #RECORDED}: kubeadm v1.34.4, both shapes of kubeadm's etcd flags), patched by {@link JsonPatch} as kubeadm
 * patches (checked against kubeadm on the built release) and put through the same checks; CI builds only today's
 * kubeadm.
 */
@EnabledIfSystemProperty(
        named = "kubeadm.check",
        matches = "true",
        disabledReason = "the kubeadm profile's execution runs it")
class KubeadmCheck {

    /** The kubeadm releases built (scripts/build-kubernetes.sh) and run: today's. */
    static final List<String> KUBEADM_VERSIONS =
            Arrays.asList(System.getProperty("kubeadm.versions", "v1.37.2").split(","));
    /**
     * Pods an older kubeadm rendered, recorded once (src/test/resources/kubeadm/, {@link #recordFixtures}) instead of
     * built in every CI run: v1.34.4 for etcd 3.6 (`--feature-gates=InitialCorruptCheck=true`,
     * `--watch-progress-notify-interval=5s`, the shape v1.34+ writes for etcd 3.6+) and for etcd 3.5 (imageTag
     * 3.5.24-0: `--experimental-initial-corrupt-check=true`, `--experimental-watch-progress-notify-interval=5s`, the
     * shape every kubeadm up to v1.33 writes). They were rendered with dataDir /var/lib/etcd and certificatesDir
     * /etc/kubernetes/pki; a check moves both to its own directories.
     */
    static final List<String> RECORDED = List.of("v1.34.4-etcd-3.6", "v1.34.4-etcd-3.5");

    static final String RECORDED_PREFIX = "recorded ";
    /** The etcd image tag kubeadm v1.34.4 is given for the 3.5-shaped recording (its default for v1.31-v1.33). */
    static final String RECORDED_35_TAG = "3.5.24-0";

    static final Path PATCHES =
            Path.of(System.getProperty("manifests.dir", "target/manifests")).resolve("kubeadm");
    static final Path SCRIPTS = Path.of(System.getProperty("scripts.dir", "../scripts"));
    static final Path BIN_DIR = Path.of(System.getProperty("etcd.bin.dir", "../.etcd-bin"));
    /** A TEST-NET address: kubeadm only writes it into the manifest, nothing binds it. */
    static final String ADVERTISE = "192.0.2.10";
    /** The seeded data's member name (HostEtcd's), so kubeadm's --name is that member's. */
    static final String NODE = HostEtcd.MEMBER;

    static final int KEYS = 20;

    private static final Map<String, Path> KUBEADM = new ConcurrentHashMap<>();

    @TempDir
    Path tmp;

    /** Every rendering checked: each built kubeadm's, then each recorded one ("recorded NAME"). */
    static Stream<String> versions() {
        return Stream.concat(KUBEADM_VERSIONS.stream(), RECORDED.stream().map(r -> RECORDED_PREFIX + r));
    }

    static Stream<String> built() {
        return KUBEADM_VERSIONS.stream();
    }

    /** Both shapes of kubeadm's etcd flags are covered, and today's kubeadm writes the 3.6+ one. */
    @Test
    void bothShapesOfKubeadmsEtcdFlagsAreCovered() throws Exception {
        List<String> now = List.of("--feature-gates=InitialCorruptCheck=true", "--watch-progress-notify-interval=5s");
        List<String> before = List.of(
                "--experimental-initial-corrupt-check=true", "--experimental-watch-progress-notify-interval=5s");
        Map<String, List<String>> shapes = Map.of(
                KUBEADM_VERSIONS.getFirst(),
                now,
                RECORDED_PREFIX + "v1.34.4-etcd-3.6",
                now,
                RECORDED_PREFIX + "v1.34.4-etcd-3.5",
                before);
        for (var e : shapes.entrySet()) {
            List<String> flags = kubeadmEtcdFlags(
                    render(e.getKey(), tmp.resolve("shape-" + e.getKey().replace(' ', '-')), Optional.empty()));
            for (String flag : e.getValue())
                assertTrue(flags.contains(flag), e.getKey() + " lacks " + flag + ": " + flags);
            List<String> other = e.getValue() == now ? before : now;
            for (String flag : other) assertFalse(flags.contains(flag), e.getKey() + " has " + flag + ": " + flags);
        }
    }

    /**
     * The recorded pods are patched here (JsonPatch), not by kubeadm: on the built releases both ways must give the
     * same pod, for each of the project's patches.
     */
    @ParameterizedTest
    @MethodSource("built")
    void theTestsPatchIsKubeadmsPatch(String version) throws Exception {
        JsonNode plain = render(version, tmp.resolve("plain"), Optional.empty());
        for (String patch : List.of("entrypoint", "init-container")) {
            JsonNode byKubeadm = render(version, tmp.resolve(patch), Optional.empty(), patch);
            assertEquals(byKubeadm, JsonPatch.apply(plain, patchOperations(patch)), version + " " + patch);
        }
    }

    /**
     * Records the older kubeadm's pods (not a check: -Dkubeadm.record=DIR, e.g. image/src/test/resources/kubeadm,
     * with kubeadm v1.34.4 built by scripts/build-kubernetes.sh --version v1.34.4 kubeadm).
     */
    @Test
    @EnabledIfSystemProperty(named = "kubeadm.record", matches = ".+")
    void recordFixtures() throws Exception {
        Path dir = Files.createDirectories(Path.of(System.getProperty("kubeadm.record")));
        for (String name : RECORDED) {
            String version = name.substring(0, name.indexOf("-etcd-"));
            Optional<String> tag = name.endsWith("-etcd-3.5") ? Optional.of(RECORDED_35_TAG) : Optional.empty();
            Path rootfs = tmp.resolve("record-" + name);
            renderWithKubeadm(version, rootfs, Optional.empty(), tag);
            String pod = Files.readString(rootfs.resolve("etc/kubernetes/manifests/etcd.yaml"));
            Files.writeString(
                    dir.resolve(name + ".yaml"),
                    ("# Recorded by KubeadmCheck#recordFixtures: kubeadm %s `init phase etcd local --config kubeadm.yaml"
                                            + " --rootfs DIR`, kubernetesVersion %s, advertiseAddress %s, node name %s,"
                                            + " dataDir /var/lib/etcd, certificatesDir /etc/kubernetes/pki%s. Not edited.\n")
                                    .formatted(
                                            version,
                                            version,
                                            ADVERTISE,
                                            NODE,
                                            tag.map(t -> ", etcd.local.imageTag " + t)
                                                    .orElse(""))
                            + pod);
        }
    }

    /** The covered releases must differ in their default etcd line, or the coverage is one line twice. */
    @Test
    void coveredKubeadmReleasesDefaultToDifferentEtcdLines() throws Exception {
        List<String> covered = versions().toList();
        assertTrue(covered.size() >= 2, "cover at least two etcd lines: " + covered);
        List<String> lines = new ArrayList<>();
        for (String version : covered) {
            JsonNode pod = render(version, tmp.resolve(version.replace(' ', '-')), Optional.empty());
            String image = etcdContainer(pod).path("image").asText();
            Matcher tag = Pattern.compile("registry\\.k8s\\.io/etcd:(\\d+\\.\\d+)\\.\\d+-\\d+")
                    .matcher(image);
            assertTrue(tag.matches(), version + ": kubeadm's etcd image " + image);
            lines.add(tag.group(1));
        }
        assertEquals(lines.size(), lines.stream().distinct().count(), covered + " default to etcd lines " + lines);
    }

    @ParameterizedTest
    @MethodSource("versions")
    void entrypointPatch(String version) throws Exception {
        Path data = seed();
        JsonNode original = render(version, tmp.resolve("plain"), Optional.of(data));
        JsonNode patched = render(version, tmp.resolve("patched"), Optional.of(data), "entrypoint");
        String at = version + " entrypoint";
        checkUnchangedButTheContainers(original, patched, at);
        JsonNode etcd = etcdContainer(patched);
        assertTrue(
                etcd.path("command").isMissingNode(),
                at + ": command left: the image's entrypoint (the runner) is bypassed");
        assertEquals(ManifestsTest.IMAGE_REFERENCE, etcd.path("image").asText(), at);
        List<String> args = strings(etcd.path("args"));
        int dash = args.indexOf("--");
        assertTrue(dash >= 0, at + ": no -- in " + args);
        assertEquals(
                kubeadmEtcdFlags(original),
                args.subList(dash + 1, args.size()),
                at + ": kubeadm's etcd flags must follow -- unchanged");
        assertTrue(patched.path("spec").path("initContainers").isMissingNode(), at);
        assertTrue(
                etcd.path("startupProbe").path("failureThreshold").asInt()
                                * etcd.path("startupProbe")
                                        .path("periodSeconds")
                                        .asInt()
                        >= 600,
                at + ": the startup probe must allow 10 minutes for the migration");
        Map<String, String> env = env(etcd);
        String target = ManifestsTest.checkRunnerArgs(args.subList(0, dash), at, env);
        checkTargetAcceptsFlags(target, args.subList(dash + 1, args.size()), at);
        checkPlan(args, env, data, target, at);
    }

    @ParameterizedTest
    @MethodSource("versions")
    void initContainerPatchMigratesRealData(String version) throws Exception {
        Path data = seed();
        JsonNode original = render(version, tmp.resolve("plain"), Optional.of(data));
        JsonNode patched = render(version, tmp.resolve("patched"), Optional.of(data), "init-container");
        String at = version + " init-container";
        checkUnchangedButTheContainers(original, patched, at);
        JsonNode etcd = etcdContainer(patched);
        JsonNode init = patched.path("spec").path("initContainers");
        assertEquals(1, init.size(), at + ": one init container");
        JsonNode migrate = init.get(0);
        assertEquals(ManifestsTest.IMAGE_REFERENCE, migrate.path("image").asText(), at);
        assertEquals(ManifestsTest.IMAGE_REFERENCE, etcd.path("image").asText(), at);
        assertTrue(
                migrate.path("command").isMissingNode(), at + ": the init container must run the image's entrypoint");
        for (String probe : List.of("startupProbe", "livenessProbe", "readinessProbe")) {
            assertTrue(migrate.path(probe).isMissingNode(), at + ": an init container with a " + probe);
        }
        assertEquals(
                etcd.path("volumeMounts"),
                migrate.path("volumeMounts"),
                at + ": the init container must see the same data");
        List<String> args = strings(migrate.path("args"));
        int dash = args.indexOf("--");
        assertTrue(dash >= 0 && args.subList(0, dash).contains("--no-exec"), at + ": " + args);
        List<String> flags = kubeadmEtcdFlags(original);
        assertEquals(
                flags, args.subList(dash + 1, args.size()), at + ": kubeadm's etcd flags must follow -- unchanged");
        Map<String, String> env = env(migrate);
        String target = ManifestsTest.checkRunnerArgs(args.subList(0, dash), at, env);
        // the main container: kubeadm's flags, the etcd binary of the init container's target
        List<String> command = strings(etcd.path("command"));
        assertEquals(
                "/usr/local/bin/etcd-" + target,
                command.getFirst(),
                at + ": main container runs another etcd than the target");
        assertEquals(flags, command.subList(1, command.size()), at);
        checkTargetAcceptsFlags(target, flags, at);
        checkPlan(args, env, data, target, at);

        // the init container's command, for real: runner + bundled binaries on kubeadm's data dir
        ServerPorts ports = FreePorts.pick();
        List<String> run = new ArrayList<>(args.subList(0, dash));
        run.addAll(List.of(
                "--bin-dir",
                BIN_DIR.toString(),
                "--port",
                String.valueOf(ports.client()),
                "--peer-port",
                String.valueOf(ports.peer())));
        run.addAll(args.subList(dash, args.size()));
        Result migrated = runner(run, env);
        assertEquals(0, migrated.exit, at + ": the init container's migration failed:\n" + migrated.output);
        assertEquals(
                target + "/etcd3", Files.readString(data.resolve("version.txt")).trim(), at);
        try (HostEtcd served = HostEtcd.start(target, data)) {
            assertEquals(Optional.of(target), served.gateway().serverVersion(), at);
            for (int i = 0; i < KEYS; i++) {
                assertEquals(Optional.of("value-" + i), served.gateway().get("/image-it/key-" + i), at + ": key-" + i);
            }
            served.stop();
        }
    }

    // ------------------------------------------------------------------ kubeadm

    private Path seed() throws Exception {
        Path data = tmp.resolve("var-lib-etcd");
        HostEtcd.writeDataDir("3.5.35", data, KEYS);
        // kubeadm writes no version.txt: the runner reads the line from the data
        Files.delete(data.resolve("version.txt"));
        return data;
    }

    /**
     * kubeadm's etcd static pod for VERSION (a built release, or "recorded NAME"), rendered in ROOTFS, through the
     * patch dirs given (none: as kubeadm writes it).
     */
    static JsonNode render(String version, Path rootfs, Optional<Path> dataDir, String... patches) throws Exception {
        if (version.startsWith(RECORDED_PREFIX)) {
            return recorded(version.substring(RECORDED_PREFIX.length()), rootfs, dataDir, patches);
        }
        return renderWithKubeadm(version, rootfs, dataDir, Optional.empty(), patches);
    }

    /** A recorded pod with its data dir and certificates moved to this check's, patched as kubeadm would patch it. */
    private static JsonNode recorded(String name, Path rootfs, Optional<Path> dataDir, String... patches)
            throws Exception {
        String text;
        try (var in = KubeadmCheck.class.getResourceAsStream("/kubeadm/" + name + ".yaml")) {
            assertTrue(in != null, "no recorded kubeadm pod " + name);
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        if (dataDir.isPresent()) {
            Path pki = dataDir.get().resolveSibling("pki");
            if (!Files.isDirectory(pki)) {
                // kubeadm's own etcd certificates, from the kubeadm that is built
                new KubeadmRender(kubeadm(KUBEADM_VERSIONS.getFirst()), rootfs)
                        .configure(node(KUBEADM_VERSIONS.getFirst(), dataDir))
                        .certificates();
            }
            text = text.replace("/var/lib/etcd", dataDir.get().toString())
                    .replace("/etc/kubernetes/pki", pki.toString());
        }
        Path manifest = Files.createDirectories(rootfs.resolve("recorded")).resolve(name + ".yaml");
        Files.writeString(manifest, text);
        List<JsonNode> docs = ManifestsTest.documents(manifest);
        assertEquals(1, docs.size(), manifest.toString());
        JsonNode pod = docs.getFirst();
        for (String patch : patches) pod = JsonPatch.apply(pod, patchOperations(patch));
        KubernetesSchema.validate(
                pod, name + " " + (patches.length == 0 ? "as kubeadm wrote it" : String.join(",", patches)));
        return pod;
    }

    /** The operations of one of the project's kubeadm patches (rendered: the image reference filled in). */
    static List<JsonNode> patchOperations(String patch) throws IOException {
        List<JsonNode> ops = new ArrayList<>();
        try (Stream<Path> files = Files.list(PATCHES.resolve(patch))) {
            for (Path file : files.sorted().toList()) {
                new com.fasterxml.jackson.databind.ObjectMapper(new com.fasterxml.jackson.dataformat.yaml.YAMLFactory())
                        .readTree(file.toFile())
                        .forEach(ops::add);
            }
        }
        return ops;
    }

    /** kubeadm VERSION's own rendering; {@code etcdImageTag} is the ClusterConfiguration's etcd.local.imageTag. */
    static JsonNode renderWithKubeadm(
            String version, Path rootfs, Optional<Path> dataDir, Optional<String> etcdImageTag, String... patches)
            throws Exception {
        KubeadmRender render = new KubeadmRender(kubeadm(version), rootfs);
        for (String patch : patches) render.patches(PATCHES.resolve(patch));
        render.configure(node(version, dataDir).imageTag(etcdImageTag));
        if (dataDir.isPresent() && !Files.isDirectory(dataDir.get().resolveSibling("pki"))) render.certificates();
        Path manifest = render.etcdLocal();
        List<JsonNode> docs = ManifestsTest.documents(manifest);
        assertEquals(1, docs.size(), manifest.toString());
        JsonNode pod = docs.getFirst();
        KubernetesSchema.validate(
                pod, version + " " + (patches.length == 0 ? "as kubeadm writes it" : String.join(",", patches)));
        return pod;
    }

    /** This check's node: its certificates beside the data dir (kubeadm's defaults without one). */
    private static KubeadmRender.Node node(String version, Optional<Path> dataDir) {
        return KubeadmRender.Node.of(
                version,
                NODE,
                ADVERTISE,
                dataDir.map(d -> d.resolveSibling("pki")).orElse(Path.of("/etc/kubernetes/pki")),
                dataDir.orElse(Path.of("/var/lib/etcd")));
    }

    static Path kubeadm(String version) {
        return KUBEADM.computeIfAbsent(version, v -> {
            try {
                Result built = exec(
                        List.of("bash", SCRIPTS.resolve("build-kubernetes.sh").toString(), "--version", v, "kubeadm"),
                        Map.of(),
                        1800);
                assertEquals(0, built.exit, "building kubeadm " + v + ":\n" + built.output);
                String[] lines = built.stdout.strip().split("\n");
                Path binary = Path.of(lines[lines.length - 1]);
                assertTrue(Files.isExecutable(binary), binary + " from build-kubernetes.sh");
                return binary;
            } catch (IOException | InterruptedException e) {
                throw new AssertionError("building kubeadm " + v, e);
            }
        });
    }

    // ------------------------------------------------------------------ checks

    /** Metadata (with kubeadm's annotation), volumes, host settings: exactly kubeadm's. */
    private static void checkUnchangedButTheContainers(JsonNode original, JsonNode patched, String at) {
        String urls = original.path("metadata")
                .path("annotations")
                .path("kubeadm.kubernetes.io/etcd.advertise-client-urls")
                .asText();
        assertEquals("https://" + ADVERTISE + ":2379", urls, at + ": kubeadm's own annotation");
        assertEquals(
                original.path("metadata"),
                patched.path("metadata"),
                at + ": metadata (and the annotation) must stay kubeadm's");
        ObjectNode before = ((ObjectNode) original.path("spec")).deepCopy();
        ObjectNode after = ((ObjectNode) patched.path("spec")).deepCopy();
        for (ObjectNode spec : List.of(before, after)) {
            spec.remove("containers");
            spec.remove("initContainers");
        }
        assertEquals(before, after, at + ": the pod spec outside the containers must stay kubeadm's");
        JsonNode a = etcdContainer(original);
        JsonNode b = etcdContainer(patched);
        for (String field : List.of("volumeMounts", "resources", "livenessProbe", "imagePullPolicy")) {
            assertEquals(a.path(field), b.path(field), at + ": the etcd container's " + field + " must stay kubeadm's");
        }
    }

    private static List<String> kubeadmEtcdFlags(JsonNode original) {
        List<String> command = strings(etcdContainer(original).path("command"));
        assertEquals("etcd", command.getFirst(), "kubeadm's etcd command: " + command);
        assertFalse(command.contains("--"), "kubeadm's etcd command: " + command);
        return command.subList(1, command.size());
    }

    /** What the runner does before any step: `etcd-<target> <flags> --version` must parse them. */
    private static void checkTargetAcceptsFlags(String target, List<String> flags, String at) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(BIN_DIR.resolve("etcd-" + target).toString());
        command.addAll(flags);
        command.add("--version");
        Result parsed = exec(command, Map.of(), 30);
        assertEquals(0, parsed.exit, at + ": etcd " + target + " refuses kubeadm's flags:\n" + parsed.output);
        assertTrue(parsed.output.contains("etcd Version: " + target), at + ": " + parsed.output);
    }

    /**
     * The runner's `plan` (it only reads) on the container's args and env: it must take the data dir
     * from kubeadm's --data-dir after "--" and plan 3.5 -> target on the seeded data.
     */
    private static void checkPlan(List<String> args, Map<String, String> env, Path data, String target, String at)
            throws Exception {
        List<String> plan = new ArrayList<>(List.of("plan", "--bin-dir", BIN_DIR.toString()));
        plan.addAll(args.stream().filter(a -> !a.equals("--no-exec")).toList());
        Result planned = runner(plan, env);
        assertEquals(0, planned.exit, at + ": plan:\n" + planned.output);
        assertTrue(
                planned.stdout.contains("3.5.35") && planned.stdout.contains(target),
                at + ": the plan is not 3.5.35 -> " + target + " on " + data + " (kubeadm's --data-dir):\n"
                        + planned.output);
    }

    // ------------------------------------------------------------------ processes

    record Result(int exit, String stdout, String output) {}

    /** The runner as the image runs it (its main class and jars), with only ENV and PATH in its environment. */
    private static Result runner(List<String> args, Map<String, String> env) throws Exception {
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-cp",
                System.getProperty("java.class.path"),
                "dev.etcdmigrate.Main"));
        command.addAll(args);
        return exec(command, env, 600);
    }

    static Result exec(List<String> command, Map<String, String> env, int timeoutSeconds)
            throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command);
        Map<String, String> environment = builder.environment();
        String path = environment.getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin") + ":/usr/local/go/bin";
        String home = environment.get("HOME");
        environment.clear();
        environment.put("PATH", path);
        if (home != null) environment.put("HOME", home);
        environment.putAll(env);
        Path out = Files.createTempFile("kubeadm-check", ".out");
        Path err = Files.createTempFile("kubeadm-check", ".err");
        try {
            Process process = builder.redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .start();
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor();
                throw new AssertionError(
                        command + " did not finish within " + timeoutSeconds + " s:\n" + Files.readString(err));
            }
            String stdout = Files.readString(out, StandardCharsets.UTF_8);
            return new Result(process.exitValue(), stdout, stdout + Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    // ------------------------------------------------------------------ JSON

    static JsonNode etcdContainer(JsonNode pod) {
        for (JsonNode container : pod.path("spec").path("containers")) {
            if (container.path("name").asText().equals("etcd")) return container;
        }
        throw new AssertionError("no container etcd in " + pod);
    }

    private static Map<String, String> env(JsonNode container) {
        Map<String, String> env = new HashMap<>();
        container
                .path("env")
                .forEach(e -> env.put(e.path("name").asText(), e.path("value").asText()));
        return env;
    }

    private static List<String> strings(JsonNode array) {
        List<String> list = new ArrayList<>();
        array.forEach(n -> list.add(n.asText()));
        return list;
    }
}
