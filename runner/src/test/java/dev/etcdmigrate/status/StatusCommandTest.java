package dev.etcdmigrate.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.etcdmigrate.config.StatusConfig;
import dev.etcdmigrate.etcd.client.ClusterIdentities;
import dev.etcdmigrate.etcd.client.ClusterIdentities.Identity;
import dev.etcdmigrate.etcd.client.PemTls;
import dev.etcdmigrate.it.support.ThrowawayCa;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpConnectTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * status's client against an etcd whose TLS handshake completes only after the runner's times to connect (2 s) and
 * to answer (3 s): what a JVM started cold in a member's container, on that container's share of the CPU, meets on
 * its first handshake while etcd serves.
 */
class StatusCommandTest {

    /** When the server starts its side of the handshake: after the runner's 2 s and 3 s, well within status's. */
    private static final Duration SLOW_HANDSHAKE = Duration.ofMillis(3500);

    private ServerSocket server;

    @AfterEach
    void stop() throws IOException {
        if (server != null) server.close();
    }

    @Test
    void aHandshakeSlowerThanTheRunnersTimeoutsStillAnswersStatus(@TempDir Path dir) throws Exception {
        ThrowawayCa ca = ThrowawayCa.newCa(dir);
        ThrowawayCa.Pem pem = ca.issue("etcd");
        URI base =
                slowTlsEtcd(PemTls.context(Optional.of(pem.cert()), Optional.of(pem.key()), Optional.of(ca.caFile())));
        StatusConfig options = new StatusConfig(
                List.of(base),
                Optional.empty(),
                Duration.ofMinutes(10),
                "text",
                Optional.of(pem.cert()),
                Optional.of(pem.key()),
                Optional.of(ca.caFile()),
                Optional.empty());

        // the runner's client on the same server gives up: the server is slow enough to tell the two apart
        var runners = new ClusterIdentities(
                PemTls.httpClient(options.certFile(), options.keyFile(), options.trustedCaFile()), "/v3");
        assertThrows(HttpConnectTimeoutException.class, () -> runners.identify(base));

        var status = new ClusterIdentities(StatusCommand.httpClient(options), "/v3", StatusCommand.REQUEST);
        assertEquals(new Identity(7, 9), status.identify(base));
    }

    /**
     * A loopback server that accepts at once (the kernel's part) and starts the TLS handshake only after {@link
     * #SLOW_HANDSHAKE}, then answers one Maintenance/Status with cluster 7, member 9.
     */
    private URI slowTlsEtcd(SSLContext tls) throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            while (!server.isClosed()) {
                Socket plain;
                try {
                    plain = server.accept();
                } catch (IOException closed) {
                    return;
                }
                Thread.ofVirtual().start(() -> answer(tls, plain));
            }
        });
        return URI.create("https://127.0.0.1:" + server.getLocalPort());
    }

    private static void answer(SSLContext tls, Socket plain) {
        try (plain) {
            // the slowness under test: the handshake's server half held back, as a starved peer would be
            Thread.sleep(SLOW_HANDSHAKE);
            try (SSLSocket s =
                    (SSLSocket) tls.getSocketFactory().createSocket(plain, "127.0.0.1", plain.getPort(), true)) {
                s.setUseClientMode(false);
                BufferedReader in =
                        new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
                int length = 0;
                for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
                    if (line.toLowerCase().startsWith("content-length:"))
                        length = Integer.parseInt(line.substring(15).trim());
                }
                for (int i = 0; i < length; i++) in.read();
                byte[] body =
                        "{\"header\":{\"cluster_id\":\"7\",\"member_id\":\"9\"}}".getBytes(StandardCharsets.UTF_8);
                OutputStream out = s.getOutputStream();
                out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                                + "\r\nConnection: close\r\n\r\n")
                        .getBytes(StandardCharsets.UTF_8));
                out.write(body);
                out.flush();
            }
        } catch (IOException | InterruptedException gone) {
            // the runner's client gave up on this connection
        }
    }
}
