package dev.etcdmigrate.it.cluster;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A client of the HA test cluster that runs in a network namespace of its own (started with
 * {@code ip netns exec}), speaking etcd's JSON gateway over HTTPS with a client certificate.
 *
 * <pre>
 * write CA CERT KEY ENDPOINTS PREFIX MAX_COUNT MAX_SECONDS   writes PREFIX0, PREFIX1, ... round-robin over the
 *        endpoints until stdin closes, MAX_COUNT writes were acknowledged or MAX_SECONDS passed; prints
 *        "ACK endpointIndex key revision epochMillis" per acknowledged write, "FAIL endpointIndex key epochMillis" per
 *        failed one (it may still commit: the next try writes the same key and value), then "DONE acked failed"
 * post CA CERT KEY ENDPOINT PATH BODY      one POST, prints the response body
 * get  CA CERT KEY ENDPOINT PATH           one GET, prints the response body
 * sample CA CERT KEY ENDPOINTS             every 100 ms until stdin closes, asks each endpoint's /version at once
 *        (800 ms timeout) and prints "S epochMillis v0 v1 ... cluster" where vN is the member's etcdserver
 *        version or "-" when it did not answer (out of service), and cluster the etcdcluster a majority of the
 *        endpoints answered ("-" when none did)
 * </pre>
 */
public final class HaClient {

    private HaClient() {}

    public static void main(String[] args) throws Exception {
        // generous: the connect timeout includes the TLS handshake of a cold JVM, slow on a loaded machine;
        // a member that is down refuses at once anyway
        HttpClient http = HttpClient.newBuilder()
                .sslContext(tls(Path.of(args[1]), Path.of(args[2]), Path.of(args[3])))
                .connectTimeout(Duration.ofSeconds(20))
                .build();
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        switch (args[0]) {
            case "write" ->
                write(
                        http,
                        out,
                        args[4].split(","),
                        args[5],
                        Long.parseLong(args[6]),
                        Duration.ofSeconds(Long.parseLong(args[7])));
            case "post" ->
                out.println(send(
                        http,
                        HttpRequest.newBuilder(URI.create(args[4] + args[5]))
                                .timeout(Duration.ofSeconds(20))
                                .POST(HttpRequest.BodyPublishers.ofString(args[6]))));
            case "sample" -> sample(http, out, args[4].split(","));
            case "get" ->
                out.println(send(
                        http,
                        HttpRequest.newBuilder(URI.create(args[4] + args[5]))
                                .timeout(Duration.ofSeconds(20))
                                .GET()));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    private static void write(
            HttpClient http, PrintStream out, String[] endpoints, String prefix, long maxCount, Duration maxTime)
            throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        Thread.ofVirtual()
                .start(
                        () -> { // the test closes stdin to stop the writer
                            try (BufferedReader in =
                                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                                while (in.readLine() != null) {
                                    /* nothing to read but the end */
                                }
                            } catch (Exception e) {
                                // stdin gone: stop as well
                            }
                            stop.set(true);
                        });
        long end = System.nanoTime() + maxTime.toNanos();
        long acked = 0;
        long failed = 0;
        for (long n = 0; !stop.get() && acked < maxCount && System.nanoTime() < end; n++) {
            int e = (int) (n % endpoints.length);
            String key = prefix + acked;
            String body = "{\"key\":\"" + b64(key) + "\",\"value\":\"" + b64("v-" + key) + "\"}";
            try {
                String response = send(
                        http,
                        HttpRequest.newBuilder(URI.create(endpoints[e] + "/v3/kv/put"))
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .timeout(Duration.ofSeconds(3)));
                int at = response.indexOf("\"revision\":\"");
                String revision = at < 0 ? "?" : response.substring(at + 12, response.indexOf('"', at + 12));
                out.println("ACK " + e + " " + key + " " + revision + " " + System.currentTimeMillis());
                acked++;
            } catch (Exception ex) {
                failed++; // that member is down or has no leader: the next write goes to the next member
                out.println("FAIL " + e + " " + key + " " + System.currentTimeMillis());
            }
        }
        out.println("DONE " + acked + " " + failed);
    }

    private static void sample(HttpClient http, PrintStream out, String[] endpoints) throws Exception {
        AtomicBoolean stop = stopAtEndOfInput();
        java.util.regex.Pattern server = java.util.regex.Pattern.compile("\"etcdserver\":\"([^\"]*)\"");
        java.util.regex.Pattern clusterVersion = java.util.regex.Pattern.compile("\"etcdcluster\":\"([^\"]*)\"");
        while (!stop.get()) {
            long at = System.currentTimeMillis();
            java.util.List<java.util.concurrent.CompletableFuture<String>> answers = new java.util.ArrayList<>();
            for (String endpoint : endpoints) {
                answers.add(http.sendAsync(
                                HttpRequest.newBuilder(URI.create(endpoint + "/version"))
                                        .timeout(Duration.ofMillis(800))
                                        .GET()
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .thenApply(r -> r.statusCode() == 200 ? r.body() : null)
                        .exceptionally(t -> null));
            }
            StringBuilder line = new StringBuilder("S ").append(at);
            java.util.Map<String, Integer> views = new java.util.HashMap<>();
            for (var answer : answers) {
                String body = answer.get();
                if (body == null) {
                    line.append(" -");
                    continue;
                }
                var s = server.matcher(body);
                line.append(' ').append(s.find() ? s.group(1) : "?");
                var c = clusterVersion.matcher(body);
                if (c.find() && !c.group(1).isEmpty()) views.merge(c.group(1), 1, Integer::sum);
            }
            // each member reports the cluster version it has applied: one cut off from its peers still reports the
            // old one after the leader raised it, so only a majority's answer is the cluster's
            String cluster = views.entrySet().stream()
                    .filter(v -> v.getValue() > endpoints.length / 2)
                    .map(java.util.Map.Entry::getKey)
                    .findFirst()
                    .orElse("-");
            out.println(line.append(' ').append(cluster));
            long left = 100 - (System.currentTimeMillis() - at);
            if (left > 0) Thread.sleep(left); // the sampling period
        }
    }

    private static AtomicBoolean stopAtEndOfInput() {
        AtomicBoolean stop = new AtomicBoolean();
        Thread.ofVirtual().start(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                while (in.readLine() != null) {
                    /* nothing to read but the end */
                }
            } catch (Exception e) {
                // stdin gone: stop as well
            }
            stop.set(true);
        });
        return stop;
    }

    private static String send(HttpClient http, HttpRequest.Builder request) throws Exception {
        HttpResponse<String> response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IllegalStateException("HTTP " + response.statusCode() + ": " + response.body());
        }
        return response.body();
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    /** Trusts only the test CA; presents the client certificate (client-cert auth on the members). */
    static SSLContext tls(Path ca, Path cert, Path key) throws Exception {
        CertificateFactory x509 = CertificateFactory.getInstance("X.509");
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (var in = Files.newInputStream(ca)) {
            trust.setCertificateEntry("ca", x509.generateCertificate(in));
        }
        String pem = Files.readString(key).replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        var privateKey = KeyFactory.getInstance("EC")
                .generatePrivate(new PKCS8EncodedKeySpec(Base64.getDecoder().decode(pem)));
        Certificate certificate;
        try (var in = Files.newInputStream(cert)) {
            certificate = x509.generateCertificate(in);
        }
        KeyStore keys = KeyStore.getInstance("PKCS12");
        keys.load(null, null);
        keys.setKeyEntry("client", privateKey, new char[0], new Certificate[] {certificate});
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(keys, new char[0]);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), null);
        return context;
    }
}
