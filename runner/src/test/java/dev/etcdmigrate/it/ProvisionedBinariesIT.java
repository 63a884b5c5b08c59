package dev.etcdmigrate.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.PrivateEtcd;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every provisioned release reports its version, serves a v3 write on loopback, and stops on SIGTERM. */
class ProvisionedBinariesIT {

    private final EtcdFixture etcd = new EtcdFixture();

    @AfterEach
    void stopAll() {
        etcd.close();
    }

    static Stream<Release> releases() {
        return EtcdFixture.CATALOG.releases().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("releases")
    void eachToolReportsItsVersion(Release release) throws Exception {
        for (String tool : release.toolNames()) {
            Path binary = EtcdFixture.binDir().resolve(tool + "-" + release.version());
            Process p = new ProcessBuilder(binary.toString(), tool.equals("etcd") ? "--version" : "version")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains(tool + " Version: " + release.version()) || out.contains(tool + " version: " + release.version()),
                    tool + " output: " + out);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("releases")
    void servesAV3WriteOnLoopbackAndStops(Release release, @TempDir Path dir) throws Exception {
        try (PrivateEtcd server = etcd.start(release, dir.resolve("data"))) {
            long revision = server.gateway().put("/it/key", "value");
            assertTrue(revision > 1, "a put creates a revision, got " + revision);
            assertEquals("127.0.0.1", server.gateway().baseUrl().getHost());
            assertTrue(server.gateway().version().path("etcdserver").asText().equals(release.version()));
            server.stop(Duration.ofSeconds(20));
        }
        assertEquals(List.of(), ProcessHandle.current().children().filter(ProcessHandle::isAlive).toList());
    }
}
