package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.etcd.server.FreePorts;
import dev.etcdmigrate.etcd.server.ServerPorts;
import dev.etcdmigrate.it.support.EtcdGateway;
import dev.etcdmigrate.it.support.Poll;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Getting the image onto a node through a registry: a real registry (Debian's docker-registry, the
 * distribution registry) on loopback, `jib:build` pushing the image profile's image to it, podman
 * pulling it back, and the pulled image migrating an empty volume and serving a write.
 */
class RegistryIT {

    static final Path ROOT = Path.of(System.getProperty("project.root", ".."));
    static final String NAME = System.getProperty("image.name", "etcd-migrate");
    static final String TAG = System.getProperty("image.tag", "3.7.3-0");
    static final String NEWEST = System.getProperty("etcd.newest.version", "3.7.3");
    static final Duration DEADLINE = Duration.ofMinutes(5);

    @TempDir
    Path tmp;

    private final List<Runnable> cleanup = new ArrayList<>();

    @AfterEach
    void cleanUp() {
        cleanup.reversed().forEach(Runnable::run);
    }

    @Test
    void pushedByJibPulledByPodmanServesAWrite() throws Exception {
        ServerPorts ports = FreePorts.pick();
        String registry = "127.0.0.1:" + ports.client();
        startRegistry(registry);

        String pushed = registry + "/" + NAME;
        // `compile` lets the reactor resolve the runner (provided) from runner/target/classes without a local install,
        // and -am brings test-fixtures into it (jib's goal resolves the image's test dependencies too); the image's
        // layers are the ones this build's prepare-package already made under image/target/image
        Result jib = exec(
                List.of(
                        ROOT.resolve("mvnw").toString(),
                        "-B",
                        "-q",
                        "-f",
                        ROOT.resolve("pom.xml").toString(),
                        "-pl",
                        "runner,image",
                        "-am",
                        "-Pimage",
                        "compile",
                        "jib:build@image-tar", // the default flavour's layers
                        "-Djib.skip=true", // the runner has no image; image/pom.xml's jib <skip>false</skip> wins over
                        // it
                        "-Dimage.name=" + pushed,
                        "-Djib.allowInsecureRegistries=true"),
                Map.of("JAVA_HOME", System.getProperty("java.home")),
                600);
        assertEquals(0, jib.exit, "jib:build to " + registry + ":\n" + jib.output);
        HttpResponse<String> tags = get("http://" + registry + "/v2/" + NAME + "/tags/list");
        assertEquals(200, tags.statusCode(), tags.body());
        assertTrue(tags.body().contains("\"" + TAG + "\""), "the registry lists " + tags.body());

        String reference = pushed + ":" + TAG;
        Result pull = exec(List.of("podman", "pull", "--tls-verify=false", reference), Map.of(), 300);
        assertEquals(0, pull.exit, pull.output);
        cleanup.add(() -> quietly(List.of("podman", "rmi", "-f", reference)));

        Path data = Files.createDirectories(tmp.resolve("data"));
        int client = FreePorts.pick().client();
        Result run = exec(
                List.of(
                        "podman",
                        "run",
                        "-d",
                        "-p",
                        "127.0.0.1:" + client + ":2379",
                        "-v",
                        data + ":/var/etcd/data",
                        "-e",
                        "ETCD_NAME=" + HostEtcd.MEMBER,
                        reference,
                        "--target-version",
                        NEWEST,
                        "--",
                        "--listen-client-urls",
                        "http://0.0.0.0:2379",
                        "--advertise-client-urls",
                        "http://127.0.0.1:2379"),
                Map.of(),
                120);
        assertEquals(0, run.exit, run.output);
        String container = run.stdout.strip();
        cleanup.add(() -> quietly(List.of("podman", "rm", "-f", "-t", "10", container)));

        EtcdGateway gateway = EtcdGateway.plain("127.0.0.1", client);
        try {
            gateway.awaitWrite(DEADLINE);
        } catch (AssertionError e) {
            throw new AssertionError(
                    "the pulled image did not serve; its log:\n"
                            + exec(List.of("podman", "logs", container), Map.of(), 30).output,
                    e);
        }
        gateway.put("/registry-it/pulled", "served");
        assertEquals(Optional.of("served"), gateway.get("/registry-it/pulled"));
        assertEquals(Optional.of(NEWEST), gateway.serverVersion());
        assertEquals(
                NEWEST + "/etcd3", Files.readString(data.resolve("version.txt")).trim());
    }

    /** docker-registry serve on ADDRESS with storage under tmp; returns once GET /v2/ answers 200. */
    private void startRegistry(String address) throws Exception {
        Path config = tmp.resolve("registry.yml");
        Files.writeString(config, """
                version: 0.1
                log:
                  level: warn
                storage:
                  filesystem:
                    rootdirectory: %s
                http:
                  addr: %s
                """.formatted(tmp.resolve("registry-storage"), address));
        Path log = tmp.resolve("registry.log");
        Process registry = new ProcessBuilder("docker-registry", "serve", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        cleanup.add(() -> {
            registry.destroy();
            try {
                if (!registry.waitFor(10, TimeUnit.SECONDS))
                    registry.destroyForcibly().waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            Poll.untilTrue(Duration.ofSeconds(30), Duration.ofMillis(100), "docker-registry answering /v2/", () -> {
                if (!registry.isAlive()) throw new AssertionError("docker-registry exited");
                return get("http://" + address + "/v2/").statusCode() == 200;
            });
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "; its log: " + Files.readString(log), e);
        }
    }

    private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        try (HttpClient http = HttpClient.newHttpClient()) {
            return http.send(
                    HttpRequest.newBuilder(URI.create(url))
                            .timeout(Duration.ofSeconds(5))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        }
    }

    record Result(int exit, String stdout, String output) {}

    private static Result exec(List<String> command, Map<String, String> env, int timeoutSeconds)
            throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putAll(env);
        Path out = Files.createTempFile("registry-it", ".out");
        Path err = Files.createTempFile("registry-it", ".err");
        try {
            Process process = builder.redirectOutput(out.toFile())
                    .redirectError(err.toFile())
                    .start();
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                process.descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly().waitFor();
                throw new AssertionError(command + " did not finish within " + timeoutSeconds + " s");
            }
            String stdout = Files.readString(out);
            return new Result(process.exitValue(), stdout, stdout + Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }

    private static void quietly(List<String> command) {
        try {
            exec(command, Map.of(), 60);
        } catch (IOException | InterruptedException | AssertionError ignored) {
            // cleanup: the test's own result matters more
        }
    }
}
