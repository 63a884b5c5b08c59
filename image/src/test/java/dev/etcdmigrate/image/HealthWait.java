package dev.etcdmigrate.image;

import dev.etcdmigrate.it.support.Poll;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.testcontainers.containers.ContainerLaunchException;
import org.testcontainers.containers.wait.strategy.AbstractWaitStrategy;

/**
 * Waits from the host (the image has no shell for Testcontainers' in-container checks) until etcd's
 * /health on the mapped port 2379 answers 200, and fails at once, with the container's log, when the
 * container exits first (a refused or failed migration) instead of waiting out the timeout.
 */
final class HealthWait extends AbstractWaitStrategy {

    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    HealthWait(Duration timeout) {
        withStartupTimeout(timeout);
    }

    @Override
    protected void waitUntilReady() {
        URI health = URI.create(
                "http://" + waitStrategyTarget.getHost() + ":" + waitStrategyTarget.getMappedPort(2379) + "/health");
        HttpRequest request =
                HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(2)).build();
        try {
            Poll.untilTrue(startupTimeout, Duration.ofMillis(100), "etcd serving " + health, () -> {
                if (!waitStrategyTarget.isRunning()) {
                    throw new AssertionError("the container exited before etcd served");
                }
                return HTTP.send(request, HttpResponse.BodyHandlers.discarding())
                                .statusCode()
                        == 200;
            });
        } catch (AssertionError e) {
            throw new ContainerLaunchException(e.getMessage() + "; its log:\n" + waitStrategyTarget.getLogs(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ContainerLaunchException("interrupted", e);
        }
    }
}
