package dev.etcdmigrate.etcd.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;

/**
 * One JSON-over-HTTP call to etcd's gRPC gateway (and the JSON GETs beside it: /version, a peer's /members),
 * for {@link GatewayClient} and {@link ClusterClient}: the POST, keys and values in base64, and etcd's answers
 * other than a result as {@link IOException}s that carry etcd's own words.
 */
final class GatewayTransport {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** How much of an error answer's body a message keeps. */
    private static final int BODY_SHOWN = 300;

    private final HttpClient http;
    private final Duration timeout;

    GatewayTransport(HttpClient http, Duration timeout) {
        this.http = http;
        this.timeout = timeout;
    }

    /**
     * POSTs {@code body} to {@code url}; a status other than 200 (404: {@link NotFound}) or a reply that is an
     * error (a gateway error object, a non-zero gRPC code) fails.
     */
    JsonNode post(URI url, String body) throws IOException, InterruptedException {
        return post(url, body, timeout);
    }

    /** {@link #post(URI, String)} answered within {@code within} (at most this transport's own timeout). */
    JsonNode post(URI url, String body, Duration within) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(url)
                .timeout(within.compareTo(timeout) < 0 ? within : timeout)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        JsonNode reply = JSON.readTree(send(request));
        if (reply.has("error") || (reply.has("code") && reply.path("code").asInt() != 0)) {
            throw new IOException(url.getPath() + " answered " + reply);
        }
        return reply;
    }

    /** GETs a JSON document, e.g. /version. */
    JsonNode get(URI url) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(url).timeout(timeout).GET().build();
        return JSON.readTree(send(request));
    }

    private String send(HttpRequest request) throws IOException, InterruptedException {
        HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        if (response.statusCode() == 404) {
            throw new NotFound(request.method() + " " + request.uri() + " answered 404");
        }
        if (response.statusCode() != 200) {
            throw new IOException(request.method() + " " + request.uri() + " answered " + response.statusCode() + ": "
                    + abbreviate(response.body()));
        }
        return response.body();
    }

    private static String abbreviate(String body) {
        return body.length() > BODY_SHOWN ? body.substring(0, BODY_SHOWN) + "..." : body;
    }

    /**
     * The downgrade job of an etcd whose Maintenance/Status has no downgradeInfo (a line that can hold a job but does
     * not report it there, such as 3.5): etcd refuses a downgrade VALIDATE to the minor below the cluster version with
     * "a downgrade job in progress" while one runs, and answers it (changing nothing) otherwise; a running job's target
     * is the cluster version, which enabling it lowered. Empty where etcd serves no downgrade API (404: a line without
     * downgrades, where no job can exist). Any other failure is an {@link IOException}: never read as "no job".
     */
    Optional<MinorLine> unreportedDowngradeJob(URI base, String prefix) throws IOException, InterruptedException {
        Optional<MinorLine> line =
                line(get(base.resolve("/version")).path("etcdcluster").asText(""));
        if (line.isEmpty() || line.get().minor() == 0) return Optional.empty();
        MinorLine below = new MinorLine(line.get().major(), line.get().minor() - 1);
        try {
            post(
                    base.resolve(prefix + "/maintenance/downgrade"),
                    "{\"action\":\"VALIDATE\",\"version\":\"" + below + ".0\"}");
            return Optional.empty();
        } catch (NotFound noDowngrades) {
            return Optional.empty();
        } catch (IOException refused) {
            if (String.valueOf(refused.getMessage()).contains(JOB_IN_PROGRESS)) return line;
            throw refused;
        }
    }

    /** etcd's words (ErrDowngradeInProcess) when a downgrade VALIDATE meets a running job. */
    private static final String JOB_IN_PROGRESS = "cluster has a downgrade job in progress";

    /** The line of a version etcd reports ("3.6.0", "3.6.0-alpha.0"); empty for none or one it cannot parse. */
    static Optional<MinorLine> line(String version) {
        try {
            return version.isEmpty()
                    ? Optional.empty()
                    : Optional.of(EtcdVersion.parse(version.split("-", 2)[0]).line());
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    /** A key or value as the gateway takes it. */
    static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    /** A key or value as the gateway gives it. */
    static String fromB64(String s) {
        return new String(Base64.getDecoder().decode(s), StandardCharsets.UTF_8);
    }

    /** The URL is not served: an etcd of another line (a different gateway prefix). */
    static final class NotFound extends IOException {
        NotFound(String message) {
            super(message);
        }
    }
}
