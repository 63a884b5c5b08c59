package dev.etcdmigrate.it.faults;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * What a finished migration may leave in a data dir, as an allow-list: etcd's member/ (its content is
 * etcd's), version.txt, and in .etcd-migrate/ the lock file, the remembered binary checks (binaries), the
 * last run's etcd output (etcd-output.log) and backups/NAME/{member/,version.txt}. Anything else
 * (staging, snapshot or work dirs, version.txt.tmp, *.partial) is a leftover of an unfinished step.
 */
final class DataDirLeftovers {

    private DataDirLeftovers() {}

    /** The paths (relative to the data dir) that are not allowed; empty when it is clean. */
    static List<String> unexpected(Path data) throws IOException {
        List<String> bad = new ArrayList<>();
        for (Path p : list(data)) {
            String name = p.getFileName().toString();
            switch (name) {
                case "member" -> expectDirectory(data, p, bad);
                case "version.txt" -> expectFile(data, p, bad);
                case ".etcd-migrate" -> ownDir(data, p, bad);
                default -> bad.add(data.relativize(p).toString());
            }
        }
        return bad;
    }

    private static void ownDir(Path data, Path own, List<String> bad) throws IOException {
        if (!expectDirectory(data, own, bad)) return;
        for (Path p : list(own)) {
            switch (p.getFileName().toString()) {
                case "lock", "binaries", "etcd-output.log" -> expectFile(data, p, bad);
                case "backups" -> {
                    if (!expectDirectory(data, p, bad)) continue;
                    for (Path backup : list(p)) {
                        if (!expectDirectory(data, backup, bad)) continue;
                        for (Path inBackup : list(backup)) {
                            switch (inBackup.getFileName().toString()) {
                                case "member" -> expectDirectory(data, inBackup, bad);
                                case "version.txt" -> expectFile(data, inBackup, bad);
                                default -> bad.add(data.relativize(inBackup).toString());
                            }
                        }
                    }
                }
                default -> bad.add(data.relativize(p).toString());
            }
        }
    }

    private static boolean expectDirectory(Path data, Path p, List<String> bad) {
        if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) return true;
        bad.add(data.relativize(p) + " (not a directory)");
        return false;
    }

    private static void expectFile(Path data, Path p, List<String> bad) {
        if (!Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) bad.add(data.relativize(p) + " (not a regular file)");
    }

    private static List<Path> list(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.sorted().toList();
        }
    }

    /** Every path under the data dir outside member/ trees, for a failure report. */
    static String describe(Path data) throws IOException {
        StringBuilder b = new StringBuilder();
        try (Stream<Path> walk = Files.walk(data)) {
            walk.filter(p -> !data.relativize(p).toString().contains("member/"))
                    .sorted()
                    .forEach(p -> b.append("\n  ").append(data.relativize(p)).append(Files.isDirectory(p) ? "/" : ""));
        }
        Path version = data.resolve("version.txt");
        if (Files.exists(version)) b.append("\n  version.txt = ").append(Files.readString(version));
        return b.toString();
    }
}
