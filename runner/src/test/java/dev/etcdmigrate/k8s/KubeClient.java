package dev.etcdmigrate.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.stream.Stream;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * A small Kubernetes REST client (java.net.http, bearer token, JSON) for the tests. It trusts exactly
 * the serving certificate the API server generated into its cert dir (pinned: the API server's
 * self-signed certificate names its advertise address, not 127.0.0.1).
 */
public final class KubeClient {

    static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private final URI base;
    private final String token;
    private final HttpClient http;

    KubeClient(URI base, String token, Path servingCert) throws Exception {
        this.base = base;
        this.token = token;
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, new TrustManager[] {new PinnedCertificate(servingCert)}, new SecureRandom());
        this.http = HttpClient.newBuilder()
                .sslContext(tls)
                .connectTimeout(Duration.ofSeconds(5))
                .build();
    }

    /** The API server's URL, e.g. for a kubelet's kubeconfig. */
    public URI base() {
        return base;
    }

    /** A request whose answer the caller judges. */
    public HttpResponse<String> raw(String method, String path, JsonNode body)
            throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(base.resolve(path))
                .timeout(REQUEST_TIMEOUT)
                .header("Authorization", "Bearer " + token)
                .header("Accept", "application/json");
        if (body == null) {
            b.method(method, HttpRequest.BodyPublishers.noBody());
        } else {
            b.header("Content-Type", "application/json")
                    .method(method, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    public ObjectNode create(String collection, JsonNode object) throws Exception {
        return expect(201, "POST", collection, object);
    }

    public ObjectNode get(String path) throws Exception {
        return expect(200, "GET", path, null);
    }

    public int status(String path) throws Exception {
        return raw("GET", path, null).statusCode();
    }

    /** PUT of the object as read (its resourceVersion makes it a compare-and-swap). */
    public ObjectNode update(String path, JsonNode object) throws Exception {
        return expect(200, "PUT", path, object);
    }

    public ObjectNode delete(String path) throws Exception {
        return expect(200, "DELETE", path, null);
    }

    /** A list; query is appended as given (e.g. "resourceVersion=12&resourceVersionMatch=Exact"). */
    public ObjectNode list(String collection, String query) throws Exception {
        return expect(200, "GET", collection + (query.isEmpty() ? "" : "?" + query), null);
    }

    public ObjectNode expect(int status, String method, String path, JsonNode body) throws Exception {
        HttpResponse<String> r = raw(method, path, body);
        if (r.statusCode() != status) {
            throw new AssertionError(
                    method + " " + path + ": expected " + status + ", got " + r.statusCode() + " " + r.body());
        }
        return (ObjectNode) JSON.readTree(r.body());
    }

    /** What a watch from a resourceVersion answered. */
    public record WatchResult(int httpStatus, List<JsonNode> events) {
        /** 410 as the HTTP status, or as the ERROR event the stream opens with. */
        public boolean gone() {
            return httpStatus == 410
                    || (!events.isEmpty()
                            && events.getFirst().path("type").asText().equals("ERROR")
                            && events.getFirst().path("object").path("code").asInt() == 410);
        }
    }

    /**
     * Watches a collection from resourceVersion until the server ends the stream (timeoutSeconds) or
     * maxEvents arrived; returns the events read.
     */
    public WatchResult watch(String collection, String resourceVersion, int timeoutSeconds, int maxEvents)
            throws Exception {
        HttpRequest request = HttpRequest.newBuilder(
                        base.resolve(collection + "?watch=1&allowWatchBookmarks=false&resourceVersion="
                                + resourceVersion + "&timeoutSeconds=" + timeoutSeconds))
                .timeout(Duration.ofSeconds(timeoutSeconds + 30))
                .header("Authorization", "Bearer " + token)
                .header("Accept", "application/json")
                .GET()
                .build();
        HttpResponse<Stream<String>> r = http.send(request, HttpResponse.BodyHandlers.ofLines());
        List<JsonNode> events = new ArrayList<>();
        if (r.statusCode() != 200) {
            // a refusal (e.g. 410 Gone) is one Status document, not a stream of events
            try (Stream<String> lines = r.body()) {
                String body = String.join("\n", lines.toList());
                events.add(body.isBlank() ? JSON.createObjectNode() : JSON.readTree(body));
            }
            return new WatchResult(r.statusCode(), events);
        }
        try (Stream<String> lines = r.body()) {
            Iterator<String> it = lines.iterator();
            while (events.size() < maxEvents && it.hasNext()) {
                String line = it.next();
                if (line.isBlank()) continue;
                JsonNode node = JSON.readTree(line);
                events.add(node);
                if (node.path("type").asText().equals("ERROR")) break;
            }
        }
        return new WatchResult(r.statusCode(), events);
    }

    /** Trusts one certificate, read when the first connection is made (the server writes it at start). */
    private static final class PinnedCertificate extends X509ExtendedTrustManager {
        private final Path file;

        PinnedCertificate(Path file) {
            this.file = file;
        }

        private void check(X509Certificate[] chain) throws CertificateException {
            if (chain == null || chain.length == 0) throw new CertificateException("no server certificate");
            X509Certificate pinned;
            try (InputStream in = Files.newInputStream(file)) {
                pinned = (X509Certificate)
                        CertificateFactory.getInstance("X.509").generateCertificate(in);
            } catch (IOException e) {
                throw new CertificateException("the API server has not written " + file + " yet", e);
            }
            if (!pinned.equals(chain[0]))
                throw new CertificateException("not the certificate the API server wrote to " + file);
            chain[0].checkValidity();
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            check(chain);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            check(chain);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            check(chain);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
                throws CertificateException {
            throw new CertificateException("client side only");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                throws CertificateException {
            throw new CertificateException("client side only");
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("client side only");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
