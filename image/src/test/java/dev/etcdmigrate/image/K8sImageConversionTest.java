package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The guide for registry.k8s.io/etcd users (docs/kubeadm.md, "Coming from registry.k8s.io/etcd"),
 * step by step on a manifest of that shape (docs/examples/k8s-image-etcd.yaml): the converted pod
 * must pass the schema strictly and the runner's rules, and be what manifests/k8s-image/ ships.
 */
class K8sImageConversionTest {

    static final Path ORIGINAL = ManifestsTest.DOCS.resolve("examples/k8s-image-etcd.yaml");
    static final Path SHIPPED = ManifestsTest.MANIFESTS.resolve("k8s-image/etcd-server.yaml");

    @Test
    void theOriginalShapeBypassesTheRunner() throws IOException {
        JsonNode original = ManifestsTest.documents(ORIGINAL).getFirst();
        KubernetesSchema.validate(original, "original");
        // the same pod with only the image swapped: /bin/sh runs /usr/local/bin/etcd, the newest release
        ObjectNode swapped = original.deepCopy();
        container(swapped).put("image", ManifestsTest.IMAGE_REFERENCE);
        AssertionError refused = assertThrows(
                AssertionError.class, () -> ManifestsTest.checkPod(swapped.path("spec"), "image swapped only"));
        assertTrue(refused.getMessage().contains("/bin/sh"), refused.getMessage());
    }

    @Test
    void convertedPodPassesSchemaAndRunnerRules() throws IOException {
        JsonNode original = ManifestsTest.documents(ORIGINAL).getFirst();
        JsonNode converted = convert(original);
        KubernetesSchema.validate(converted, "converted");
        assertEquals(1, ManifestsTest.checkPod(converted.path("spec"), "converted"));
        JsonNode etcd = container(converted);
        assertTrue(etcd.path("command").isMissingNode(), "the image's entrypoint (the runner) must run");
        List<String> args = new ArrayList<>();
        etcd.path("args").forEach(a -> args.add(a.asText()));
        assertEquals("--", args.getFirst(), "etcd's flags follow --: " + args);
        assertTrue(
                args.containsAll(List.of("--data-dir", "/var/etcd/data", "--snapshot-count=10000")), args.toString());
        assertFalse(args.stream().anyMatch(a -> a.contains(">")), "shell redirections left in " + args);
        List<String> env = new ArrayList<>();
        etcd.path("env")
                .forEach(e ->
                        env.add(e.path("name").asText() + "=" + e.path("value").asText()));
        assertTrue(env.contains("TARGET_VERSION=3.5.35"), "3.5.21 is not bundled; the bundled 3.5 patch is: " + env);
        assertFalse(
                env.stream()
                        .anyMatch(e -> e.startsWith("DO_NOT_MOVE_BINARIES=") || e.startsWith("ETCD_SNAPSHOT_COUNT=")),
                env.toString());
        assertEquals(
                ManifestsTest.documents(SHIPPED).getFirst(),
                converted,
                "manifests/k8s-image/etcd-server.yaml is not the guide's conversion of docs/examples/k8s-image-etcd.yaml");
    }

    /** The guide's steps, in its order. */
    static JsonNode convert(JsonNode original) {
        ObjectNode pod = original.deepCopy();
        ObjectNode etcd = container(pod);
        // 1. the image
        etcd.put("image", ManifestsTest.IMAGE_REFERENCE);
        // 2. no shell: the runner is the entrypoint; the words after `exec /usr/local/bin/etcd` go after "--",
        //    without the log redirections (the log goes to the container's output)
        List<String> command = new ArrayList<>();
        etcd.path("command").forEach(c -> command.add(c.asText()));
        assertEquals(List.of("/bin/sh", "-c"), command.subList(0, 2), "not the registry.k8s.io/etcd shape: " + command);
        Matcher exec = Pattern.compile("exec /usr/local/bin/etcd\\s+(.*)$", Pattern.DOTALL)
                .matcher(command.get(2));
        assertTrue(exec.find(), "no `exec /usr/local/bin/etcd` in " + command.get(2));
        assertFalse(
                exec.group(1).matches("(?s).*['\"\\\\$`].*"),
                "quoting or expansion this guide does not cover: " + exec.group(1));
        List<String> etcdFlags =
                new ArrayList<>(Arrays.stream(exec.group(1).trim().split("\\s+"))
                        .filter(w -> !w.matches("\\d?>>?.*|\\d?>&\\d"))
                        .toList());
        etcd.remove("command");
        // 3. the environment: DO_NOT_MOVE_BINARIES goes (nothing is moved); an ETCD_* the runner does not read
        //    becomes etcd's flag; TARGET_VERSION names the bundled patch of its minor
        ArrayNode env = etcd.putArray("env");
        for (JsonNode e : original.path("spec").path("containers").get(0).path("env")) {
            String name = e.path("name").asText();
            String value = e.path("value").asText();
            if (name.equals("DO_NOT_MOVE_BINARIES")) continue;
            if (name.startsWith("ETCD_") && !ManifestsTest.RUNNER_ENV.contains(name)) {
                String flag = "--" + name.substring(5).toLowerCase(Locale.ROOT).replace('_', '-');
                if (etcdFlags.stream().noneMatch(f -> f.equals(flag) || f.startsWith(flag + "=")))
                    etcdFlags.add(flag + "=" + value);
                continue;
            }
            if (name.equals("TARGET_VERSION")) value = bundledPatchOf(value);
            env.addObject().put("name", name).put("value", value);
        }
        ArrayNode args = etcd.putArray("args");
        args.add("--");
        etcdFlags.forEach(args::add);
        return pod;
    }

    private static String bundledPatchOf(String version) {
        String minor = version.substring(0, version.lastIndexOf('.') + 1);
        return ManifestsTest.BUNDLED.stream()
                .filter(v -> v.startsWith(minor))
                .reduce((a, b) -> b)
                .orElseThrow(
                        () -> new AssertionError("no bundled release of " + minor + "x for TARGET_VERSION " + version));
    }

    private static ObjectNode container(JsonNode pod) {
        JsonNode containers = pod.path("spec").path("containers");
        assertEquals(1, containers.size(), "one container expected");
        return (ObjectNode) containers.get(0);
    }
}
