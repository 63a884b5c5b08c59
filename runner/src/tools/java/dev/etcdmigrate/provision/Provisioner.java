package dev.etcdmigrate.provision;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.event.ProvisionEvent;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.ToolRunner;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Installs a release's binaries into the bin dir as tool-&lt;version&gt;: from the first source that
 * delivers, checked to report the expected version, then moved in. Work happens in a staging dir
 * inside the bin dir, so a failure leaves nothing half-written; a stamp written last marks the
 * install complete and makes reruns instant. A rerun checks the installed binaries against their pins
 * again, reading only those that changed since their last full hash ({@link VerifiedHashes}).
 */
final class Provisioner {

    private static final Pattern REPORTED = Pattern.compile("(?m)^(?:etcd|etcdctl|etcdutl) [Vv]ersion:? (\\S+)\\s*$");

    private final Path binDir;
    private final List<BinarySource> sources;
    private final List<String> runPrefix;
    private final ToolRunner tools;
    private final Log log;
    private final PinSource pinSource;
    private final Clock clock;
    private int recalled;

    /** The pins of a release for the platform being provisioned. */
    interface PinSource {
        Pins pins(Release release) throws ProvisionException;
    }

    /** runPrefix: what runs a binary of the target platform here (empty, or qemu-user-static's emulator). */
    Provisioner(
            Path binDir,
            List<BinarySource> sources,
            List<String> runPrefix,
            ToolRunner tools,
            Log log,
            PinSource pinSource) {
        this(binDir, sources, runPrefix, tools, log, pinSource, Clock.systemUTC());
    }

    /** clock: when a hash begins, to tell a settled file from one written in the same tick. */
    Provisioner(
            Path binDir,
            List<BinarySource> sources,
            List<String> runPrefix,
            ToolRunner tools,
            Log log,
            PinSource pinSource,
            Clock clock) {
        this.clock = clock;
        this.pinSource = pinSource;
        this.binDir = binDir;
        this.sources = List.copyOf(sources);
        this.runPrefix = List.copyOf(runPrefix);
        this.tools = tools;
        this.log = log;
    }

    /** Returns the release's pins, with what was checked (or recorded) in them. */
    Pins provision(Release release) throws ProvisionException {
        String v = release.version();
        Pins pins = pinSource.pins(release);
        if (!pins.recording() && installed(release, pins)) {
            log.emit(new ProvisionEvent.Provisioned(
                    v,
                    binDir.toString(),
                    binaries(release),
                    "already",
                    stamp(release).getFileName().toString()));
            return pins;
        }
        Path staging = binDir.resolve(".staging-" + v);
        try {
            Trees.deleteRecursively(staging);
            Files.createDirectories(staging);
            BinarySource from = fetch(release, staging, pins);
            for (String tool : release.toolNames()) {
                checkReportedVersion(release, tool, staging.resolve(tool));
            }
            if (from.pinned()) {
                // a different compiler, a non-reproducible step or a changed input the pins missed shows here
                for (String tool : release.toolNames()) {
                    pins.check("bin", tool, "sha256:" + GoHash.sha256(staging.resolve(tool)));
                }
            }
            VerifiedHashes.forget(verified(release));
            for (String tool : release.toolNames()) {
                Path source = staging.resolve(tool);
                Files.setPosixFilePermissions(source, PosixFilePermissions.fromString("rwxr-xr-x"));
                Files.move(
                        source,
                        binDir.resolve(tool + "-" + v),
                        StandardCopyOption.ATOMIC_MOVE,
                        StandardCopyOption.REPLACE_EXISTING);
            }
            Files.createDirectories(stamp(release).getParent());
            Files.writeString(stamp(release), stampText(from), StandardCharsets.UTF_8);
            log.emit(new ProvisionEvent.Provisioned(v, binDir.toString(), binaries(release), "installed", from.name()));
            if (from.pinned()) {
                log.emit(new ProvisionEvent.ProvisionPins(
                        v,
                        pins.platform(),
                        pins.recording() ? pins.recordedCount() : pins.checked(),
                        pins.recording()));
            }
            return pins;
        } catch (IOException e) {
            throw new ProvisionException("could not install into " + binDir + ": " + e.getMessage(), e);
        } finally {
            try {
                Trees.deleteRecursively(staging);
            } catch (IOException e) {
                log.warn("could not remove " + staging + ": " + e.getMessage());
            }
        }
    }

    /**
     * Installed when the stamp exists, every tool is there, and the source that wrote the stamp would
     * make the binaries the same way today (a stamp without a recipe line marks Go builds that were
     * not stripped, so they are rebuilt), and, from a pinned source, every binary
     * still has its pinned SHA-256 (one that does not is provisioned again).
     */
    private boolean installed(Release release, Pins pins) {
        if (!Files.isRegularFile(stamp(release))
                || !release.toolNames().stream()
                        .allMatch(tool -> Files.isExecutable(binDir.resolve(tool + "-" + release.version())))) {
            return false;
        }
        String written;
        try {
            written = Files.readString(stamp(release), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return false;
        }
        String sourceName = written.lines().findFirst().orElse("");
        for (BinarySource source : sources) {
            if (source.name().equals(sourceName)) {
                if (written.equals(stampText(source))) {
                    return !source.pinned() || binariesMatch(release, pins);
                }
                log.info("etcd " + release.version() + ": installed by an older recipe of " + sourceName
                        + ", provisioning again");
                return false;
            }
        }
        return true; // written by a source this run does not use (e.g. another platform's tarball): keep it
    }

    private boolean binariesMatch(Release release, Pins pins) {
        VerifiedHashes hashes = VerifiedHashes.read(verified(release), clock);
        try {
            for (String tool : release.toolNames()) {
                Optional<String> pinned = pins.value("bin", tool)
                        .filter(p -> p.startsWith("sha256:"))
                        .map(p -> p.substring(7));
                String sha = hashes.sha256(tool, binDir.resolve(tool + "-" + release.version()), pinned);
                pins.check("bin", tool, "sha256:" + sha);
            }
            recalled += hashes.recalled();
            saveQuietly(hashes);
            log.emit(new ProvisionEvent.ProvisionPins(release.version(), pins.platform(), pins.checked(), false));
            return true;
        } catch (ProvisionException | IOException e) {
            log.info("etcd " + release.version()
                    + ": the installed binaries do not match their pins, provisioning again: " + e.getMessage());
            pins.reset(); // the new build's hashes are compared afresh
            return false;
        }
    }

    /** The records only spare work: one that cannot be written costs the next run a full hash. */
    private void saveQuietly(VerifiedHashes hashes) {
        try {
            hashes.save();
        } catch (IOException e) {
            log.warn("could not record the binaries' hashes in " + binDir + ": " + e.getMessage());
        }
    }

    /** How many binaries' hashes came from their records (unchanged since a full hash) rather than a read. */
    int recalled() {
        return recalled;
    }

    static String stampText(BinarySource source) {
        return source.recipe().isEmpty() ? source.name() + "\n" : source.name() + "\nrecipe: " + source.recipe() + "\n";
    }

    private static List<String> binaries(Release release) {
        return release.toolNames().stream()
                .map(t -> t + "-" + release.version())
                .toList();
    }

    private Path stamp(Release release) {
        return binDir.resolve(".provisioned").resolve(release.version());
    }

    private Path verified(Release release) {
        return binDir.resolve(".provisioned").resolve(release.version() + ".verified");
    }

    private BinarySource fetch(Release release, Path staging, Pins pins) throws ProvisionException, IOException {
        List<String> skipped = new ArrayList<>();
        for (BinarySource source : sources) {
            try {
                log.emit(new ProvisionEvent.ProvisionSource(release.version(), source.name(), "trying", ""));
                source.fetch(release, staging, pins);
                for (String tool : release.toolNames()) {
                    if (!Files.isRegularFile(staging.resolve(tool))) {
                        throw new BinarySource.Skipped(source.name() + " delivered no " + tool);
                    }
                }
                return source;
            } catch (BinarySource.Skipped e) {
                log.emit(new ProvisionEvent.ProvisionSource(
                        release.version(), source.name(), "skipped", e.getMessage()));
                skipped.add(source.name() + ": " + e.getMessage());
                Trees.deleteRecursively(staging);
                Files.createDirectories(staging);
            }
        }
        throw new ProvisionException("no source could provide it (" + String.join("; ", skipped) + ")");
    }

    /**
     * The binary must say it is the release: etcd answers --version; etcdctl and etcdutl answer
     * `version`, except the v2-era etcdctl (2.x, and 3.0-3.3 without ETCDCTL_API=3), which answers --version.
     */
    private void checkReportedVersion(Release release, String tool, Path binary)
            throws ProvisionException, IOException {
        Files.setPosixFilePermissions(binary, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<List<String>> asks =
                tool.equals("etcd") ? List.of(List.of("--version")) : List.of(List.of("version"), List.of("--version"));
        String reported = "nothing recognizable";
        for (List<String> ask : asks) {
            List<String> command = new ArrayList<>(runPrefix);
            command.add(binary.toString());
            command.addAll(ask);
            ToolRunner.Result result;
            try {
                result = tools.runAllowingFailure(
                        tool + "-" + release.version(),
                        command,
                        Map.of("PATH", "/usr/bin:/bin"),
                        binary.getParent(),
                        Duration.ofSeconds(30));
            } catch (ToolRunner.ToolFailedException e) {
                throw new ProvisionException(tool + " does not run: " + e.getMessage(), e);
            }
            Matcher m = REPORTED.matcher(result.output());
            if (result.exitCode() == 0 && m.find()) {
                reported = m.group(1);
                break;
            }
        }
        if (!reported.equals(release.version())) {
            throw new ProvisionException(tool + " reports version " + reported + ", expected " + release.version());
        }
    }
}
