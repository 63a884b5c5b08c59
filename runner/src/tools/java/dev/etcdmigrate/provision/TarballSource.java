package dev.etcdmigrate.provision;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.log.Log;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Set;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.gzip.GzipCompressorInputStream;

/**
 * The official release tarball: downloaded (http(s) or file URL), its SHA-256 checked against the
 * catalog before anything is unpacked, then the tools taken out of it with commons-compress.
 */
final class TarballSource implements BinarySource {

    private final String platform;
    private final boolean allowUnverified;
    private final Log log;

    TarballSource(String platform, boolean allowUnverified, Log log) {
        this.platform = platform;
        this.allowUnverified = allowUnverified;
        this.log = log;
    }

    @Override
    public String name() {
        return "the official " + platform + " tarball";
    }

    @Override
    public boolean pinned() {
        return false;
    }

    @Override
    public void fetch(Release release, Path into, Pins pins) throws Skipped, ProvisionException {
        Release.Tarball tarball = release.upstream()
                .tarballFor(platform)
                .orElseThrow(() -> new Skipped("the catalog lists no " + platform + " tarball"));
        if (!tarball.verified() && !allowUnverified) {
            throw new Skipped("the catalog has no confirmed SHA-256 for " + tarball.url()
                    + " (unverified; --allow-unverified-download would use it)");
        }
        Path file = into.resolve("release.tar.gz");
        String actual = download(URI.create(tarball.url()), file);
        if (tarball.verified() && !actual.equals(tarball.sha256())) {
            throw new ProvisionException("SHA-256 mismatch for " + tarball.url() + ": expected " + tarball.sha256()
                    + ", got " + actual + "; refusing it");
        }
        if (!tarball.verified()) {
            log.warn("etcd " + release.version() + ": using an UNVERIFIED tarball, SHA-256 " + actual);
        }
        try {
            unpack(file, into, Set.copyOf(release.toolNames()));
            Files.delete(file);
        } catch (IOException e) {
            throw new ProvisionException("cannot unpack " + tarball.url() + ": " + e.getMessage(), e);
        }
    }

    /** Streams the URL to file and returns its SHA-256; an unreachable URL is a skip, not an error. */
    private static String download(URI uri, Path file) throws Skipped {
        MessageDigest sha;
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        try (InputStream raw = open(uri);
                InputStream in = new DigestInputStream(new BufferedInputStream(raw), sha)) {
            Files.copy(in, file);
        } catch (IOException e) {
            throw new Skipped("cannot download " + uri + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Skipped("interrupted while downloading " + uri, e);
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    private static InputStream open(URI uri) throws IOException, InterruptedException {
        if ("file".equals(uri.getScheme())) {
            return Files.newInputStream(Path.of(uri));
        }
        HttpClient http = HttpClient.newBuilder()
                .followRedirects(HttpClient.Redirect.NORMAL)
                .connectTimeout(Duration.ofSeconds(10))
                .build();
        HttpResponse<InputStream> response =
                http.send(HttpRequest.newBuilder(uri).GET().build(), HttpResponse.BodyHandlers.ofInputStream());
        if (response.statusCode() != 200) {
            response.body().close();
            throw new IOException("HTTP " + response.statusCode());
        }
        return response.body();
    }

    /** Extracts entries whose file name is one of the tools, by file name only (no paths from the archive). */
    static void unpack(Path tarGz, Path into, Set<String> tools) throws IOException {
        try (InputStream in = Files.newInputStream(tarGz);
                TarArchiveInputStream tar =
                        new TarArchiveInputStream(new GzipCompressorInputStream(new BufferedInputStream(in)))) {
            for (TarArchiveEntry entry; (entry = tar.getNextEntry()) != null; ) {
                if (!entry.isFile()) continue;
                String name = Path.of(entry.getName()).getFileName().toString();
                if (tools.contains(name)) {
                    Files.copy(tar, into.resolve(name));
                }
            }
        }
    }
}
