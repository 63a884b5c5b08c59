package dev.etcdmigrate.it.cluster;

import dev.etcdmigrate.it.support.EtcdGateway;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;

/**
 * A client of the HA test cluster that runs in a network namespace of its own (started with
 * {@code ip netns exec}), speaking etcd's JSON gateway over HTTPS with a client certificate through
 * {@link EtcdGateway}.
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
                .sslContext(EtcdGateway.sslContext(Path.of(args[1]), Path.of(args[2]), Path.of(args[3])))
                .connectTimeout(Duration.ofSeconds(20))
                .build();
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        switch (args[0]) {
            case "write" ->
                write(
                        gateways(http, args[4], Duration.ofSeconds(3)),
                        out,
                        args[5],
                        Long.parseLong(args[6]),
                        Duration.ofSeconds(Long.parseLong(args[7])));
            case "post" ->
                out.println(gateway(http, args[4], Duration.ofSeconds(20)).post(args[5], args[6]));
            case "sample" -> sample(gateways(http, args[4], Duration.ofSeconds(3)), out);
            case "get" ->
                out.println(gateway(http, args[4], Duration.ofSeconds(20)).getPath(args[5]));
            default -> throw new IllegalArgumentException(args[0]);
        }
    }

    private static EtcdGateway gateway(HttpClient http, String endpoint, Duration perRequest) {
        return new EtcdGateway(URI.create(endpoint), http, perRequest);
    }

    private static List<EtcdGateway> gateways(HttpClient http, String endpoints, Duration perRequest) {
        List<EtcdGateway> all = new ArrayList<>();
        for (String endpoint : endpoints.split(",")) all.add(gateway(http, endpoint, perRequest));
        return all;
    }

    private static void write(
            List<EtcdGateway> endpoints, PrintStream out, String prefix, long maxCount, Duration maxTime) {
        AtomicBoolean stop = stopAtEndOfInput(); // the test closes stdin to stop the writer
        long end = System.nanoTime() + maxTime.toNanos();
        long acked = 0;
        long failed = 0;
        for (long n = 0; !stop.get() && acked < maxCount && System.nanoTime() < end; n++) {
            int e = (int) (n % endpoints.size());
            String key = prefix + acked;
            try {
                long revision = endpoints.get(e).put(key, "v-" + key);
                out.println("ACK " + e + " " + key + " " + revision + " " + System.currentTimeMillis());
                acked++;
            } catch (Exception ex) {
                failed++; // that member is down or has no leader: the next write goes to the next member
                out.println("FAIL " + e + " " + key + " " + System.currentTimeMillis());
            }
        }
        out.println("DONE " + acked + " " + failed);
    }

    private static void sample(List<EtcdGateway> endpoints, PrintStream out) throws Exception {
        AtomicBoolean stop = stopAtEndOfInput();
        Pattern server = Pattern.compile("\"etcdserver\":\"([^\"]*)\"");
        Pattern clusterVersion = Pattern.compile("\"etcdcluster\":\"([^\"]*)\"");
        while (!stop.get()) {
            long at = System.currentTimeMillis();
            List<CompletableFuture<String>> answers = new ArrayList<>();
            for (EtcdGateway endpoint : endpoints) answers.add(endpoint.versionAsync(Duration.ofMillis(800)));
            StringBuilder line = new StringBuilder("S ").append(at);
            Map<String, Integer> views = new HashMap<>();
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
                    .filter(v -> v.getValue() > endpoints.size() / 2)
                    .map(Map.Entry::getKey)
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
}
