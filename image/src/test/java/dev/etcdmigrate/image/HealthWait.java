package dev.etcdmigrate.image;

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
        long deadline = System.nanoTime() + startupTimeout.toNanos();
        URI health = URI.create(
                "http://" + waitStrategyTarget.getHost() + ":" + waitStrategyTarget.getMappedPort(2379) + "/health");
        while (System.nanoTime() < deadline) {
            if (!waitStrategyTarget.isRunning()) {
                throw new ContainerLaunchException(
                        "the container exited before etcd served; its log:\n" + waitStrategyTarget.getLogs());
            }
            try {
                HttpResponse<Void> response = HTTP.send(
                        HttpRequest.newBuilder(health)
                                .timeout(Duration.ofSeconds(2))
                                .build(),
                        HttpResponse.BodyHandlers.discarding());
                if (response.statusCode() == 200) {
                    return;
                }
            } catch (java.io.IOException e) {
                // not listening yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ContainerLaunchException("interrupted", e);
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new ContainerLaunchException("interrupted", e);
            }
        }
        throw new ContainerLaunchException(
                "etcd did not serve /health within " + startupTimeout + "; log:\n" + waitStrategyTarget.getLogs());
    }
}
