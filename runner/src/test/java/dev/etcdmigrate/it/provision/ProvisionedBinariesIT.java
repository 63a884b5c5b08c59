package dev.etcdmigrate.it.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.it.support.EtcdFixture;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every provisioned release reports its version, serves a v3 write on loopback, and stops on SIGTERM. */
class ProvisionedBinariesIT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    static Stream<Release> releases() {
        return EtcdFixture.CATALOG.releases().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("releases")
    void eachToolReportsItsVersion(Release release) throws Exception {
        for (String tool : release.toolNames()) {
            Path binary = EtcdFixture.binDir().resolve(tool + "-" + release.version());
            // v2-era etcdctl (2.x, and 3.0-3.3 by default) answers --version; v3 tools answer `version`
            boolean v2EraEtcdctl = tool.equals("etcdctl")
                    && (!release.line().v3Api() || release.line().etcdctlEnv().containsKey("ETCDCTL_API"));
            String ask = tool.equals("etcd") || v2EraEtcdctl ? "--version" : "version";
            Process p = new ProcessBuilder(binary.toString(), ask)
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue(), out);
            assertTrue(
                    out.matches("(?s).*" + tool + " [Vv]ersion:? " + java.util.regex.Pattern.quote(release.version())
                            + "\\s.*"),
                    tool + " output: " + out);
        }
    }

    /** v3 lines take a v3 write (the JSON gateway); 2.x lines, which have no v3 API, a v2 write. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("releases")
    void servesAWriteOnLoopbackAndStops(Release release, @TempDir Path dir) throws Exception {
        try (PrivateEtcd server = etcd.start(release, dir.resolve("data"))) {
            assertEquals("127.0.0.1", server.gateway().baseUrl().getHost());
            if (release.line().v3Api()) {
                long revision = server.gateway().put("/it/key", "value");
                assertTrue(revision > 1, "a put creates a revision, got " + revision);
            } else {
                assertEquals(201, EtcdFixture.v2(server, "PUT", "/it/key", "value"));
            }
            assertEquals(
                    release.version(),
                    server.gateway().version().path("etcdserver").asText());
            server.stop(Duration.ofSeconds(20));
        }
        assertEquals(
                List.of(),
                ProcessHandle.current()
                        .children()
                        .filter(ProcessHandle::isAlive)
                        .toList());
    }
}
