package dev.etcdmigrate.config;

import dev.etcdmigrate.version.MinorLine;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * What {@code etcd-migrate status} asks, from its flags ({@code cli/StatusFlags}): where to ask, the target line, the stuck threshold, the format,
 * the client TLS files from etcd's own flags after {@code --} (or ETCD_*), as the runner reads them, and the SHA-256
 * of a restore's snapshot whose members are to be told from the rest (lower-case hex).
 */
public record StatusConfig(
        List<URI> endpoints,
        Optional<MinorLine> target,
        Duration stuckAfter,
        String format,
        Optional<Path> certFile,
        Optional<Path> keyFile,
        Optional<Path> trustedCaFile,
        Optional<String> restoreSha256) {}
