package dev.etcdmigrate.catalog;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.MinorLine;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One bundled etcd release as the catalog (versions/catalog.yaml) describes it: where it comes from
 * and what its release line can do. This is the runner's only model of etcd version differences;
 * code asks these facts instead of comparing version numbers.
 */
public record Release(String version, Upstream upstream, List<Source> sources, Line line) {

    public Release {
        EtcdVersion.parse(require(version, "version"));
        require(upstream, "upstream");
        sources = List.copyOf(require(sources, "sources"));
        require(line, "line");
        MinorLine own = EtcdVersion.parse(version).line();
        if (!line.upgrade().fromLine().isOlderThan(own)
                || !line.downgrade().toLine().isOlderThan(own)) {
            throw new IllegalArgumentException(
                    "release " + version + ": upgrade.from and downgrade.to must name older lines");
        }
    }

    public EtcdVersion etcdVersion() {
        return EtcdVersion.parse(version);
    }

    public MinorLine minorLine() {
        return etcdVersion().line();
    }

    /** The release's offline source of the given kind, if the catalog lists one. */
    public <S extends Source> Optional<S> source(Class<S> kind) {
        return sources.stream().filter(kind::isInstance).map(kind::cast).findFirst();
    }

    /** The tools installed for this release: etcd and etcdctl always, etcdutl where the line has it. */
    public List<String> toolNames() {
        return line.tools().etcdutl() ? List.of("etcd", "etcdctl", "etcdutl") : List.of("etcd", "etcdctl");
    }

    public record Upstream(String tag, List<Tarball> tarballs) {
        public Upstream {
            require(tag, "upstream.tag");
            tarballs = List.copyOf(require(tarballs, "upstream.tarballs"));
        }

        public Optional<Tarball> tarballFor(String platform) {
            return tarballs.stream().filter(t -> t.platform().equals(platform)).findFirst();
        }
    }

    /** An official release tarball; an empty sha256 means the project has not confirmed one. */
    public record Tarball(String platform, String url, String sha256) {
        public Tarball {
            require(platform, "tarball.platform");
            require(url, "tarball.url");
            sha256 = sha256 == null ? "" : sha256;
            if (!sha256.isEmpty() && !sha256.matches("[0-9a-f]{64}")) {
                throw new IllegalArgumentException(
                        "tarball.sha256 must be 64 lowercase hex digits or empty: " + sha256);
            }
        }

        public boolean verified() {
            return !sha256.isEmpty();
        }
    }

    /** An offline way to obtain the binaries. */
    @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
    @JsonSubTypes({
        @JsonSubTypes.Type(value = GoModules.class, name = "go-modules"),
        @JsonSubTypes.Type(value = GoLegacy.class, name = "go-legacy"),
        @JsonSubTypes.Type(value = DebianPackages.class, name = "debian")
    })
    public sealed interface Source permits GoModules, GoLegacy, DebianPackages {}

    /**
     * Build from the Go module proxy: all modules at one version, each main package built, with the Go
     * toolchain module golang.org/toolchain@v0.0.1-{@code toolchain}.linux-ARCH.
     */
    public record GoModules(String toolchain, String moduleVersion, List<String> modules, Map<String, String> mains)
            implements Source {
        public GoModules {
            require(toolchain, "go-modules.toolchain");
            require(moduleVersion, "go-modules.moduleVersion");
            modules = List.copyOf(require(modules, "go-modules.modules"));
            mains = Map.copyOf(require(mains, "go-modules.mains"));
        }
    }

    /**
     * Build a pre-module release (2.x, 3.0-3.3) from its tagged source (a module zip of
     * {@code module@moduleVersion}) with an old Go toolchain from the module proxy. Layout
     * {@code gopath}: dependencies come with the source (Godeps/_workspace); layout {@code module}:
     * the catalog's pinned go.mod and go.sum (versions/legacy/&lt;version&gt;/) replace the vendor tree
     * module zips omit. mains are package paths relative to the source root.
     */
    public record GoLegacy(
            String toolchain,
            String module,
            String moduleVersion,
            String layout,
            String gitSha,
            Map<String, String> mains)
            implements Source {
        public GoLegacy {
            require(toolchain, "go-legacy.toolchain");
            require(module, "go-legacy.module");
            require(moduleVersion, "go-legacy.moduleVersion");
            require(gitSha, "go-legacy.gitSha");
            if (!"gopath".equals(layout) && !"module".equals(layout)) {
                throw new IllegalArgumentException("go-legacy.layout must be gopath or module, got " + layout);
            }
            mains = Map.copyOf(require(mains, "go-legacy.mains"));
        }
    }

    /** Debian packages holding the binaries, and each binary's path inside its package. */
    public record DebianPackages(Map<String, String> packages, Map<String, String> paths) implements Source {
        public DebianPackages {
            packages = Map.copyOf(require(packages, "debian.packages"));
            paths = Map.copyOf(require(paths, "debian.paths"));
        }
    }

    /** What a release line can do; see the comments in versions/catalog.yaml. */
    public record Line(
            Boolean v3Api,
            V2Api v2Api,
            List<String> v2EnableFlags,
            Boolean v2ResidueRefused,
            String jsonGateway,
            List<String> logFlags,
            Map<String, String> etcdctlEnv,
            Boolean envDuplicateRefused,
            String downgradeCheckFlag,
            Boolean statusReportsDowngrade,
            Tools tools,
            Upgrade upgrade,
            Downgrade downgrade,
            Map<String, String> flagReplacements,
            List<String> v2Refusals,
            List<String> startRaces,
            List<DataRecord> records) {
        public Line {
            // optional: most lines rename nothing, and only 3.6 says why it refuses v2 content
            flagReplacements = flagReplacements == null ? Map.of() : Map.copyOf(flagReplacements);
            v2Refusals = v2Refusals == null ? List.of() : List.copyOf(v2Refusals);
            startRaces = startRaces == null ? List.of() : List.copyOf(startRaces);
            records = records == null ? List.of() : List.copyOf(records);
            require(v3Api, "line.v3Api");
            require(v2Api, "line.v2Api");
            v2EnableFlags = List.copyOf(require(v2EnableFlags, "line.v2EnableFlags"));
            require(v2ResidueRefused, "line.v2ResidueRefused");
            require(jsonGateway, "line.jsonGateway");
            logFlags = List.copyOf(require(logFlags, "line.logFlags"));
            etcdctlEnv = Map.copyOf(require(etcdctlEnv, "line.etcdctlEnv"));
            require(envDuplicateRefused, "line.envDuplicateRefused");
            require(downgradeCheckFlag, "line.downgradeCheckFlag");
            require(statusReportsDowngrade, "line.statusReportsDowngrade");
            require(tools, "line.tools");
            require(upgrade, "line.upgrade");
            require(downgrade, "line.downgrade");
            if (v3Api == jsonGateway.isEmpty()) {
                throw new IllegalArgumentException("line.jsonGateway must be set exactly when the line has the v3 API");
            }
            if (!v3Api && v2Api == V2Api.NEVER) {
                throw new IllegalArgumentException("a line must serve the v2 or the v3 API");
            }
            if (statusReportsDowngrade && downgradeCheckFlag.isEmpty()) {
                throw new IllegalArgumentException("line.statusReportsDowngrade needs a downgradeCheckFlag");
            }
            if (!v2Refusals.isEmpty() && !v2ResidueRefused) {
                throw new IllegalArgumentException(
                        "line.v2Refusals are for a line that refuses v2 content (v2ResidueRefused)");
            }
            if (v2Refusals.stream().anyMatch(String::isBlank)) {
                throw new IllegalArgumentException(
                        "line.v2Refusals must not hold a blank line: it would match any output");
            }
            if (startRaces.stream().anyMatch(String::isBlank)) {
                throw new IllegalArgumentException(
                        "line.startRaces must not hold a blank line: it would match any output");
            }
            if (v2Api == V2Api.FLAG && v2EnableFlags.isEmpty()) {
                throw new IllegalArgumentException("line.v2EnableFlags must name the flags when v2Api is 'flag'");
            }
        }
    }

    /**
     * What a line writes into a data dir that an offline reader can find, and so tells which line wrote
     * the data (versions/catalog.yaml documents each).
     */
    public enum DataRecord {
        @JsonProperty("v2ClusterVersion")
        V2_CLUSTER_VERSION,
        @JsonProperty("walClusterVersion")
        WAL_CLUSTER_VERSION,
        @JsonProperty("backendClusterVersion")
        BACKEND_CLUSTER_VERSION,
        @JsonProperty("backendTerm")
        BACKEND_TERM,
        @JsonProperty("backendConfState")
        BACKEND_CONF_STATE,
        @JsonProperty("storageVersion")
        STORAGE_VERSION
    }

    public enum V2Api {
        @JsonProperty("always")
        ALWAYS,
        @JsonProperty("flag")
        FLAG,
        @JsonProperty("never")
        NEVER
    }

    /**
     * statusReportsStorageVersion: {@code etcdutl snapshot status DB -w json} reports the storage version
     * the backend records (3.6+), read-only and offline, so version.txt can be checked against it.
     * restoreBumpsRevision: the line's snapshot restore takes {@code --bump-revision} and {@code --mark-compacted}
     * (3.5+), so a restored cluster's revisions start above every earlier one (docs/restore.md).
     */
    public record Tools(
            Boolean etcdutl,
            Boolean etcdctlMigrate,
            Boolean checkV2Store,
            RestoreTool snapshotRestore,
            Boolean statusReportsStorageVersion,
            Boolean restoreBumpsRevision) {
        public Tools {
            statusReportsStorageVersion = statusReportsStorageVersion != null && statusReportsStorageVersion;
            restoreBumpsRevision = restoreBumpsRevision != null && restoreBumpsRevision;
            require(etcdutl, "tools.etcdutl");
            require(etcdctlMigrate, "tools.etcdctlMigrate");
            require(checkV2Store, "tools.checkV2Store");
            require(snapshotRestore, "tools.snapshotRestore");
            if (checkV2Store && !etcdutl) {
                throw new IllegalArgumentException("tools.checkV2Store needs etcdutl");
            }
        }
    }

    public enum RestoreTool {
        @JsonProperty("etcdctl")
        ETCDCTL,
        @JsonProperty("etcdutl")
        ETCDUTL,
        /** 2.x: no v3 snapshots. */
        @JsonProperty("none")
        NONE;

        public String toolName() {
            return switch (this) {
                case ETCDCTL -> "etcdctl";
                case ETCDUTL -> "etcdutl";
                case NONE -> throw new IllegalStateException("this line has no snapshot restore");
            };
        }
    }

    /**
     * This line opens data of line {@code from} in place, once that line ran at least
     * previousMinimumPatch; with previousSnapshotFirst, only after the previous line took a snapshot
     * following its last write (3.7 cannot replay WAL entries in the v2 request format older lines wrote).
     */
    public record Upgrade(String from, String previousMinimumPatch, Boolean previousSnapshotFirst) {
        public Upgrade {
            MinorLine.parse(require(from, "upgrade.from"));
            require(previousSnapshotFirst, "upgrade.previousSnapshotFirst");
            previousMinimumPatch = previousMinimumPatch == null ? "" : previousMinimumPatch;
            if (!previousMinimumPatch.isEmpty()
                    && !EtcdVersion.parse(previousMinimumPatch).line().equals(MinorLine.parse(from))) {
                throw new IllegalArgumentException("upgrade.previousMinimumPatch must be a " + from + ".x version");
            }
        }

        public MinorLine fromLine() {
            return MinorLine.parse(from);
        }

        public Optional<EtcdVersion> minimumPatch() {
            return previousMinimumPatch.isEmpty()
                    ? Optional.empty()
                    : Optional.of(EtcdVersion.parse(previousMinimumPatch));
        }
    }

    public record Downgrade(String to, DowngradeMethod method) {
        public Downgrade {
            MinorLine.parse(require(to, "downgrade.to"));
            require(method, "downgrade.method");
        }

        public MinorLine toLine() {
            return MinorLine.parse(to);
        }
    }

    public enum DowngradeMethod {
        /** etcd's own downgrade API on the running newer member, then a start of the older binary. */
        @JsonProperty("downgrade-api")
        DOWNGRADE_API,
        /** snapshot save with the newer version, restore with the older one's tool into a fresh dir. */
        @JsonProperty("snapshot-restore")
        SNAPSHOT_RESTORE,
        @JsonProperty("none")
        NONE
    }

    private static <T> T require(T value, String field) {
        return Objects.requireNonNull(value, () -> "catalog entry is missing '" + field + "'");
    }
}
