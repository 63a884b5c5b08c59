package dev.etcdmigrate.it.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.cluster.ClusterView.Status;
import dev.etcdmigrate.etcd.client.ClusterClient;
import dev.etcdmigrate.etcd.client.GatewayClient;
import dev.etcdmigrate.etcd.server.PrivateEtcd;
import dev.etcdmigrate.it.support.EtcdFixture;
import dev.etcdmigrate.it.support.Poll;
import dev.etcdmigrate.version.MinorLine;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A downgrade job on a line whose Maintenance/Status does not report one (3.5), as the rollout's cluster port sees
 * it on real etcd: a member whose leader has not yet ended the finished job shows it, and once the leader's check
 * ended it, none. Without it a runner moved its member up while the job still ran, and the job, and every member
 * waiting for it, waited for ever.
 */
class UnreportedDowngradeJobIT {

    @RegisterExtension
    final EtcdFixture etcd = new EtcdFixture();

    private static final Release NEWER = EtcdFixture.release("3.6.16");
    private static final Release OLDER = EtcdFixture.release("3.5.35");

    @Test
    void aJobTheLeaderHasNotEndedIsSeenAndItsEndToo(@TempDir Path dir) throws Exception {
        Path data = dir.resolve("member");
        // a one-member cluster downgraded to 3.5: the job enabled on 3.6 (it lowers cluster and storage versions)
        try (PrivateEtcd newer = etcd.start(NEWER, data)) {
            post(newer, "/v3/maintenance/downgrade", "{\"action\":\"ENABLE\",\"version\":\"3.5.0\"}");
            Poll.untilTrue(
                    Duration.ofSeconds(30),
                    Duration.ofMillis(100),
                    "3.6 reports storage version 3.5",
                    () -> newer.gateway().version().path("storage").asText("").startsWith("3.5"));
            newer.stop(Duration.ofSeconds(20));
        }
        String check = OLDER.line().downgradeCheckFlag();
        // 3.5 serves it; its leader checks only once an hour: the finished job stays
        try (PrivateEtcd older = etcd.start(OLDER, data, check + "=1h")) {
            assertFalse(older.gateway().status().has("downgradeInfo"), "3.5's status reports no job");
            assertEquals(Optional.of(MinorLine.parse("3.5")), status(older).downgradeTarget());
            older.stop(Duration.ofSeconds(20));
        }
        // checked every 100 ms: the leader ends it, and the port sees none
        try (PrivateEtcd older = etcd.start(OLDER, data, check + "=100ms")) {
            Poll.untilTrue(
                    Duration.ofSeconds(30),
                    Duration.ofMillis(100),
                    "the leader ends the job",
                    () -> status(older).downgradeTarget().isEmpty());
            older.stop(Duration.ofSeconds(20));
        }
    }

    private static Status status(PrivateEtcd member) throws Exception {
        ClusterClient cluster = new ClusterClient(
                GatewayClient.newHttpClient(), List.of(member.gateway().baseUrl()), "/v3");
        return cluster.members().getFirst().status().orElseThrow();
    }

    private static void post(PrivateEtcd member, String path, String body) throws Exception {
        URI base = member.gateway().baseUrl();
        HttpResponse<String> r = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(base.resolve(path))
                                .POST(HttpRequest.BodyPublishers.ofString(body))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
    }
}
