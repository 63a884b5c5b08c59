package dev.etcdmigrate.etcd.client;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * An HTTP client made at its first request. Building the JDK's client costs tens of ms of CPU (its debug loggers look
 * up a logging backend across every jar of the class path); made when a private etcd is already starting, that work
 * overlaps etcd's own start instead of the reads and checks before it. Until then it answers its settings from the
 * client it will make, and closing it before any request closes nothing.
 */
public final class FirstUseHttpClient extends HttpClient {

    private final Supplier<HttpClient> make;
    private volatile HttpClient made;

    public FirstUseHttpClient(Supplier<HttpClient> make) {
        this.make = make;
    }

    private HttpClient client() {
        HttpClient c = made;
        if (c == null) {
            synchronized (this) {
                c = made;
                if (c == null) made = c = make.get();
            }
        }
        return c;
    }

    private Optional<HttpClient> ifMade() {
        return Optional.ofNullable(made);
    }

    @Override
    public Optional<CookieHandler> cookieHandler() {
        return client().cookieHandler();
    }

    @Override
    public Optional<Duration> connectTimeout() {
        return client().connectTimeout();
    }

    @Override
    public Redirect followRedirects() {
        return client().followRedirects();
    }

    @Override
    public Optional<ProxySelector> proxy() {
        return client().proxy();
    }

    @Override
    public SSLContext sslContext() {
        return client().sslContext();
    }

    @Override
    public SSLParameters sslParameters() {
        return client().sslParameters();
    }

    @Override
    public Optional<Authenticator> authenticator() {
        return client().authenticator();
    }

    @Override
    public Version version() {
        return client().version();
    }

    @Override
    public Optional<Executor> executor() {
        return client().executor();
    }

    @Override
    public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
            throws IOException, InterruptedException {
        return client().send(request, handler);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        return client().sendAsync(request, handler);
    }

    @Override
    public <T> CompletableFuture<HttpResponse<T>> sendAsync(
            HttpRequest request,
            HttpResponse.BodyHandler<T> handler,
            HttpResponse.PushPromiseHandler<T> pushPromiseHandler) {
        return client().sendAsync(request, handler, pushPromiseHandler);
    }

    @Override
    public void shutdown() {
        ifMade().ifPresent(HttpClient::shutdown);
    }

    @Override
    public boolean awaitTermination(Duration duration) throws InterruptedException {
        HttpClient c = made;
        return c == null || c.awaitTermination(duration);
    }

    @Override
    public boolean isTerminated() {
        HttpClient c = made;
        return c == null || c.isTerminated();
    }

    @Override
    public void shutdownNow() {
        ifMade().ifPresent(HttpClient::shutdownNow);
    }

    @Override
    public void close() {
        ifMade().ifPresent(HttpClient::close);
    }
}
