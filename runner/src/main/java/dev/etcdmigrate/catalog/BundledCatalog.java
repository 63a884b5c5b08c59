package dev.etcdmigrate.catalog;

import java.util.List;
import java.util.Map;

/**
 * GENERATED from versions/catalog.yaml by CatalogSourceGenerator (test sources); do not edit. The bundled
 * catalog as constructor calls: no YAML parse at start. BundledCatalogTest fails when it is stale.
 */
final class BundledCatalog {

    private BundledCatalog() {}

    static List<Release> releases() {
        return List.of(
            new Release(
                "2.2.5",
                new Release.Upstream(
                    "v2.2.5",
                    List.of(new Release.Tarball(
                            "linux/amd64",
                            "https://github.com/etcd-io/etcd/releases/download/v2.2.5/etcd-v2.2.5-linux-amd64.tar.gz",
                            ""))),
                List.of(new Release.GoLegacy(
                        "go1.14.15",
                        "github.com/coreos/etcd",
                        "v2.2.5+incompatible",
                        "gopath",
                        "bc9ddf2",
                        Map.ofEntries(Map.entry("etcd", "."), Map.entry("etcdctl", "./etcdctl")))),
                new Release.Line(
                    Boolean.FALSE,
                    Release.V2Api.ALWAYS,
                    List.of(),
                    Boolean.FALSE,
                    "",
                    List.of(),
                    Map.ofEntries(),
                    Boolean.FALSE,
                    "",
                    Boolean.FALSE,
                    new Release.Tools(
                        Boolean.FALSE,
                        Boolean.FALSE,
                        Boolean.FALSE,
                        Release.RestoreTool.NONE,
                        Boolean.FALSE,
                        Boolean.FALSE),
                    new Release.Upgrade(
                        "2.1",
                        "",
                        Boolean.FALSE),
                    new Release.Downgrade(
                        "2.1",
                        Release.DowngradeMethod.NONE),
                    Map.ofEntries(),
                    List.of(),
                    List.of(),
                    List.of(Release.DataRecord.V2_CLUSTER_VERSION, Release.DataRecord.WAL_CLUSTER_VERSION))),
            new Release(
                "2.3.8",
                new Release.Upstream(
                    "v2.3.8",
                    List.of(new Release.Tarball(
                            "linux/amd64",
                            "https://github.com/etcd-io/etcd/releases/download/v2.3.8/etcd-v2.3.8-linux-amd64.tar.gz",
                            ""))),
                List.of(new Release.GoLegacy(
                        "go1.14.15",
                        "github.com/coreos/etcd",
                        "v2.3.8+incompatible",
                        "gopath",
                        "7e4fc7e",
                        Map.ofEntries(Map.entry("etcd", "."), Map.entry("etcdctl", "./etcdctl")))),
                new Release.Line(
                    Boolean.FALSE,
                    Release.V2Api.ALWAYS,
                    List.of(),
                    Boolean.FALSE,
                    "",
                    List.of(),
                    Map.ofEntries(),
                    Boolean.FALSE,
                    "",
                    Boolean.FALSE,
                    new Release.Tools(
                        Boolean.FALSE,
                        Boolean.FALSE,
                        Boolean.FALSE,
                        Release.RestoreTool.NONE,
                        Boolean.FALSE,
                        Boolean.FALSE),
                    new Release.Upgrade(
                        "2.2",
                        "",
                        Boolean.FALSE),
                    new Release.Downgrade(
                        "2.2",
                        Release.DowngradeMethod.NONE),
                    Map.ofEntries(),
                    List.of(),
                    List.of(),
                    List.of(Release.DataRecord.V2_CLUSTER_VERSION, Release.DataRecord.WAL_CLUSTER_VERSION))),
            new Release(
                "3.0.17",
                new Release.Upstream(
                    "v3.0.17",
                    List.of(new Release.Tarball(
                            "linux/amd64",
                            "https://github.com/etcd-io/etcd/releases/download/v3.0.17/etcd-v3.0.17-linux-amd64.tar.gz",
                            ""))),
                List.of(new Release.GoLegacy(
                        "go1.14.15",
                        "github.com/coreos/etcd",
                        "v3.0.17+incompatible",
                        "module",
                        "cc198e2",
                        Map.ofEntries(Map.entry("etcd", "."), Map.entry("etcdctl", "./etcdctl")))),
                new Release.Line(
                    Boolean.TRUE,
                    Release.V2Api.ALWAYS,
                    List.of(),
                    Boolean.FALSE,
                    "/v3alpha",
                    List.of(),
                    Map.ofEntries(Map.entry("ETCDCTL_API", "3")),
                    Boolean.FALSE,
                    "",
                    Boolean.FALSE,
                    new Release.Tools(
                        Boolean.FALSE,
                        Boolean.TRUE,
                        Boolean.FALSE,
                        Release.RestoreTool.ETCDCTL,
                        Boolean.FALSE,
                        Boolean.FALSE),
                    new Release.Upgrade(
                        "2.3",
                        "",
                        Boolean.FALSE),
                    new Release.Downgrade(
                        "2.3",
                        Release.DowngradeMethod.NONE),
                    Map.ofEntries(),
                    List.of(),
                    List.of(),
                    List.of(Release.DataRecord.V2_CLUSTER_VERSION, Release.DataRecord.WAL_CLUSTER_VERSION, Release.DataRecord.BACKEND_CLUSTER_VERSION))),
            new Release(
                "3.1.20",
                new Release.Upstream(
                    "v3.1.20",
                    List.of(new Release.Tarball(
                            "linux/amd64",
                            "https://github.com/etcd-io/etcd/releases/download/v3.1.20/etcd-v3.1.20-linux-amd64.tar.gz",
                            ""))),
                List.of(new Release.GoLegacy(
                        "go1.14.15",
                        "github.com/coreos/etcd",
                        "v3.1.20+incompatible",
                        "module",
                        "992dbd4",
                        Map.ofEntries(Map.entry("etcd", "."), Map.entry("etcdctl", "./etcdctl")))),
                new Release.Line(
                    Boolean.TRUE,
                    Release.V2Api.ALWAYS,
                    List.of(),
                    Boolean.FALSE,
                    "/v3alpha",
                    List.of(),
                    Map.ofEntries(Map.entry("ETCDCTL_API", "3")),
                    Boolean.FALSE,
                    "",
                    Boolean.FALSE,
                    new Release.Tools(
                        Boolean.FALSE,
                        Boolean.TRUE,
                        Boolean.FALSE,
                        Release.RestoreTool.ETCDCTL,
                        Boolean.FALSE,
                        Boolean.FALSE),
                    new Release.Upgrade(
                        "3.0",
                        "",
                        Boolean.FALSE),
                    new Release.Downgrade(
                        "3.0",
                        Release.DowngradeMethod.SNAPSHOT_RESTORE),
                    Map.ofEntries(),
                    List.of(),
                    List.of(),
                    List.of(Release.DataRecord.V2_CLUSTER_VERSION, Release.DataRecord.WAL_CLUSTER_VERSION, Release.DataRecord.BACKEND_CLUSTER_VERSION))),
            new Release(
                "3.2.32",
                new Release.Upstream(
                    "v3.2.32",
                    List.of(new Release.Tarball(
                            "linux/amd64",
                            "https://github.com/etcd-io/etcd/releases/download/v3.2.32/etcd-v3.2.32-linux-amd64.tar.gz",
                            ""))),
                List.of(new Release.GoLegacy(
                        "go1.14.15",
                        "github.com/coreos/etcd",
                        "v3.2.32+incompatible",
                        "module",
                        "7dc07f2",
                        Map.ofEntries(Map.entry("etcd", "."), Map.entry("etcdctl", "./etcdctl")))),
                new Release.Line(
                    Boolean.TRUE,
                    Release.V2Api.FLAG,
                    List.of("--enable-v2=true"),
                    Boolean.FALSE,
                    "/v3alpha",
                    List.of(),
                    Map.ofEntries(Map.entry("ETCDCTL_API", "3")),
                    Boolean.FALSE,
                    "",
                    Boolean.FALSE,
                    new Release.Tools(
                        Boolean.FALSE,
                        Boolean.TRUE,
                        Boolean.FALSE,
                        Release.RestoreTool.ETCDCTL,
                        Boolean.FALSE,
                        Boolean.FALSE),
                    new Release.Upgrade(
                        "3.1",
                        "",
                        Boolean.FALSE),
                    new Release.Downgrade(
                        "3.1",
                        Release.DowngradeMethod.SNAPSHOT_RESTORE),
                    Map.ofEntries(),
                    List.of(),
                    List.of(),
                    List.of(Release.DataRecord.V2_CLUSTER_VERSION, Release.DataRecord.WAL_CLUSTER_VERSION, Release.DataRecord.BACKEND_CLUSTER_VERSION))),
            new Release(
                "3.3.27",
                new Release.Upstream(
                    "v3.3.27",
                    List.of(new Release.Tarball(
                            "linux/amd64",
                            "https://github.com/etcd-io/etcd/releases/download/v3.3.27/etcd-v3.3.27-linux-amd64.tar.gz",
                            ""))),
                List.of(new Release.GoLegacy(
                        "go1.14.15",
                        "github.com/coreos/etcd",
                        "v3.3.27+incompatible",
                        "module",
                        "973882f",
                        Map.ofEntries(Map.entry("etcd", "."), Map.entry("etcdctl", "./etcdctl")))),
                new Release.Line(
                    Boolean.TRUE,
                    Release.V2Api.FLAG,
                    List.of("--enable-v2=true"),
                    Boolean.FALSE,
                    "/v3beta",
                    List.of(),
                    Map.ofEntries(Map.entry("ETCDCTL_API", "3")),
                    Boolean.FALSE,
                    "",
                    Boolean.FALSE,
                    new Release.Tools(
                        Boolean.FALSE,
                        Boolean.TRUE,
                        Boolean.FALSE,
                        Release.RestoreTool.ETCDCTL,
                        Boolean.FALSE,
                        Boolean.FALSE),
                    new Release.Upgrade(
                        "3.2",
                        "",
                        Boolean.FALSE),
                    new Release.Downgrade(
                        "3.2",
                        Release.DowngradeMethod.SNAPSHOT_RESTORE),
                    Map.ofEntries(),
                    List.of(),
                    List.of(),
                    List.of(Release.DataRecord.V2_CLUSTER_VERSION, Release.DataRecord.WAL_CLUSTER_VERSION, Release.DataRecord.BACKEND_CLUSTER_VERSION))),
            new Release(
                "3.4.23",
                new Release.Upstream(
                    "v3.4.23",
                    List.of(new Release.Tarball(
                            "linux/amd64",
                            "https://github.com/etcd-io/etcd/releases/download/v3.4.23/etcd-v3.4.23-linux-amd64.tar.gz",
                            ""), new Release.Tarball(
                            "linux/arm64",
                            "https://github.com/etcd-io/etcd/releases/download/v3.4.23/etcd-v3.4.23-linux-arm64.tar.gz",
                            ""))),
                List.of(new Release.DebianPackages(
                        Map.ofEntries(Map.entry("etcd", "etcd-server"), Map.entry("etcdctl", "etcd-client")),
                        Map.ofEntries(Map.entry("etcd", "usr/bin/etcd"), Map.entry("etcdctl", "usr/bin/etcdctl")))),
                new Release.Line(
                    Boolean.TRUE,
                    Release.V2Api.FLAG,
                    List.of("--enable-v2=true"),
                    Boolean.FALSE,
                    "/v3",
                    List.of("--logger=zap", "--log-outputs=stderr"),
                    Map.ofEntries(),
                    Boolean.TRUE,
                    "",
                    Boolean.FALSE,
                    new Release.Tools(
                        Boolean.FALSE,
                        Boolean.TRUE,
                        Boolean.FALSE,
                        Release.RestoreTool.ETCDCTL,
                        Boolean.FALSE,
                        Boolean.FALSE),
                    new Release.Upgrade(
                        "3.3",
                        "",
                        Boolean.FALSE),
                    new Release.Downgrade(
                        "3.3",
                        Release.DowngradeMethod.SNAPSHOT_RESTORE),
                    Map.ofEntries(Map.entry("--compaction-batch-limit", "--experimental-compaction-batch-limit"), Map.entry("--corrupt-check-time", "--experimental-corrupt-check-time"), Map.entry("--feature-gates", "the --experimental-* flag of each gate: InitialCorruptCheck=true is --experimental-initial-corrupt-check=true, LeaseCheckpoint=true is --experimental-enable-lease-checkpoint=true, LeaseCheckpointPersist=true is --experimental-enable-lease-checkpoint-persist=true; 3.4 has none of the other gates"), Map.entry("--feature-gates=InitialCorruptCheck", "--experimental-initial-corrupt-check"), Map.entry("--feature-gates=LeaseCheckpoint", "--experimental-enable-lease-checkpoint"), Map.entry("--feature-gates=LeaseCheckpointPersist", "--experimental-enable-lease-checkpoint-persist"), Map.entry("--peer-skip-client-san-verification", "--experimental-peer-skip-client-san-verification"), Map.entry("--warning-apply-duration", "--experimental-warning-apply-duration"), Map.entry("--watch-progress-notify-interval", "--experimental-watch-progress-notify-interval")),
                    List.of(),
                    List.of(),
                    List.of(Release.DataRecord.V2_CLUSTER_VERSION, Release.DataRecord.WAL_CLUSTER_VERSION, Release.DataRecord.BACKEND_CLUSTER_VERSION))),
            new Release(
                "3.5.35",
                new Release.Upstream(
                    "v3.5.35",
                    List.of(new Release.Tarball(
                            "linux/amd64",
                            "https://github.com/etcd-io/etcd/releases/download/v3.5.35/etcd-v3.5.35-linux-amd64.tar.gz",
                            ""), new Release.Tarball(
                            "linux/arm64",
                            "https://github.com/etcd-io/etcd/releases/download/v3.5.35/etcd-v3.5.35-linux-arm64.tar.gz",
                            ""))),
                List.of(new Release.GoModules(
                        "go1.26.8",
                        "v3.5.35",
                        List.of("go.etcd.io/etcd/api/v3", "go.etcd.io/etcd/client/pkg/v3", "go.etcd.io/etcd/client/v3", "go.etcd.io/etcd/pkg/v3", "go.etcd.io/etcd/server/v3", "go.etcd.io/etcd/etcdctl/v3", "go.etcd.io/etcd/etcdutl/v3"),
                        Map.ofEntries(Map.entry("etcd", "go.etcd.io/etcd/server/v3"), Map.entry("etcdctl", "go.etcd.io/etcd/etcdctl/v3"), Map.entry("etcdutl", "go.etcd.io/etcd/etcdutl/v3")))),
                new Release.Line(
                    Boolean.TRUE,
                    Release.V2Api.FLAG,
                    List.of("--enable-v2=true"),
                    Boolean.FALSE,
                    "/v3",
                    List.of("--log-outputs=stderr"),
                    Map.ofEntries(),
                    Boolean.TRUE,
                    "--experimental-downgrade-check-time",
                    Boolean.FALSE,
                    new Release.Tools(
                        Boolean.TRUE,
                        Boolean.FALSE,
                        Boolean.TRUE,
                        Release.RestoreTool.ETCDUTL,
                        Boolean.FALSE,
                        Boolean.TRUE),
                    new Release.Upgrade(
                        "3.4",
                        "",
                        Boolean.FALSE),
                    new Release.Downgrade(
                        "3.4",
                        Release.DowngradeMethod.SNAPSHOT_RESTORE),
                    Map.ofEntries(Map.entry("--bootstrap-defrag-threshold-megabytes", "--experimental-bootstrap-defrag-threshold-megabytes"), Map.entry("--compact-hash-check-time", "--experimental-compact-hash-check-time"), Map.entry("--compaction-batch-limit", "--experimental-compaction-batch-limit"), Map.entry("--compaction-sleep-interval", "--experimental-compaction-sleep-interval"), Map.entry("--corrupt-check-time", "--experimental-corrupt-check-time"), Map.entry("--distributed-tracing-address", "--experimental-distributed-tracing-address"), Map.entry("--distributed-tracing-instance-id", "--experimental-distributed-tracing-instance-id"), Map.entry("--distributed-tracing-sampling-rate", "--experimental-distributed-tracing-sampling-rate"), Map.entry("--distributed-tracing-service-name", "--experimental-distributed-tracing-service-name"), Map.entry("--downgrade-check-time", "--experimental-downgrade-check-time"), Map.entry("--enable-distributed-tracing", "--experimental-enable-distributed-tracing"), Map.entry("--feature-gates", "the --experimental-* flag of each gate: InitialCorruptCheck=true is --experimental-initial-corrupt-check=true, CompactHashCheck=true is --experimental-compact-hash-check-enabled=true, LeaseCheckpoint=true is --experimental-enable-lease-checkpoint=true, TxnModeWriteWithSharedBuffer=true is --experimental-txn-mode-write-with-shared-buffer=true, LeaseCheckpointPersist=true is --experimental-enable-lease-checkpoint-persist=true, StopGRPCServiceOnDefrag=true is --experimental-stop-grpc-service-on-defrag=true"), Map.entry("--feature-gates=CompactHashCheck", "--experimental-compact-hash-check-enabled"), Map.entry("--feature-gates=InitialCorruptCheck", "--experimental-initial-corrupt-check"), Map.entry("--feature-gates=LeaseCheckpoint", "--experimental-enable-lease-checkpoint"), Map.entry("--feature-gates=LeaseCheckpointPersist", "--experimental-enable-lease-checkpoint-persist"), Map.entry("--feature-gates=StopGRPCServiceOnDefrag", "--experimental-stop-grpc-service-on-defrag"), Map.entry("--feature-gates=TxnModeWriteWithSharedBuffer", "--experimental-txn-mode-write-with-shared-buffer"), Map.entry("--memory-mlock", "--experimental-memory-mlock"), Map.entry("--peer-skip-client-san-verification", "--experimental-peer-skip-client-san-verification"), Map.entry("--snapshot-catchup-entries", "--experimental-snapshot-catchup-entries"), Map.entry("--warning-apply-duration", "--experimental-warning-apply-duration"), Map.entry("--warning-unary-request-duration", "--experimental-warning-unary-request-duration"), Map.entry("--watch-progress-notify-interval", "--experimental-watch-progress-notify-interval")),
                    List.of(),
                    List.of(),
                    List.of(Release.DataRecord.V2_CLUSTER_VERSION, Release.DataRecord.WAL_CLUSTER_VERSION, Release.DataRecord.BACKEND_CLUSTER_VERSION, Release.DataRecord.BACKEND_TERM, Release.DataRecord.BACKEND_CONF_STATE))),
            new Release(
                "3.6.16",
                new Release.Upstream(
                    "v3.6.16",
                    List.of(new Release.Tarball(
                            "linux/amd64",
                            "https://github.com/etcd-io/etcd/releases/download/v3.6.16/etcd-v3.6.16-linux-amd64.tar.gz",
                            ""), new Release.Tarball(
                            "linux/arm64",
                            "https://github.com/etcd-io/etcd/releases/download/v3.6.16/etcd-v3.6.16-linux-arm64.tar.gz",
                            ""))),
                List.of(new Release.GoModules(
                        "go1.26.8",
                        "v3.6.16",
                        List.of("go.etcd.io/etcd/api/v3", "go.etcd.io/etcd/client/pkg/v3", "go.etcd.io/etcd/client/v3", "go.etcd.io/etcd/pkg/v3", "go.etcd.io/etcd/server/v3", "go.etcd.io/etcd/etcdctl/v3", "go.etcd.io/etcd/etcdutl/v3"),
                        Map.ofEntries(Map.entry("etcd", "go.etcd.io/etcd/server/v3"), Map.entry("etcdctl", "go.etcd.io/etcd/etcdctl/v3"), Map.entry("etcdutl", "go.etcd.io/etcd/etcdutl/v3")))),
                new Release.Line(
                    Boolean.TRUE,
                    Release.V2Api.NEVER,
                    List.of(),
                    Boolean.TRUE,
                    "/v3",
                    List.of("--log-outputs=stderr"),
                    Map.ofEntries(),
                    Boolean.TRUE,
                    "--downgrade-check-time",
                    Boolean.TRUE,
                    new Release.Tools(
                        Boolean.TRUE,
                        Boolean.FALSE,
                        Boolean.TRUE,
                        Release.RestoreTool.ETCDUTL,
                        Boolean.TRUE,
                        Boolean.TRUE),
                    new Release.Upgrade(
                        "3.5",
                        "3.5.32",
                        Boolean.FALSE),
                    new Release.Downgrade(
                        "3.5",
                        Release.DowngradeMethod.DOWNGRADE_API),
                    Map.ofEntries(),
                    List.of("detected disallowed custom content in v2store", "detected disallowed v2 WAL"),
                    List.of("error scanning unapplied entries"),
                    List.of(Release.DataRecord.V2_CLUSTER_VERSION, Release.DataRecord.WAL_CLUSTER_VERSION, Release.DataRecord.BACKEND_CLUSTER_VERSION, Release.DataRecord.BACKEND_TERM, Release.DataRecord.BACKEND_CONF_STATE, Release.DataRecord.STORAGE_VERSION))),
            new Release(
                "3.7.3",
                new Release.Upstream(
                    "v3.7.3",
                    List.of(new Release.Tarball(
                            "linux/amd64",
                            "https://github.com/etcd-io/etcd/releases/download/v3.7.3/etcd-v3.7.3-linux-amd64.tar.gz",
                            ""), new Release.Tarball(
                            "linux/arm64",
                            "https://github.com/etcd-io/etcd/releases/download/v3.7.3/etcd-v3.7.3-linux-arm64.tar.gz",
                            ""))),
                List.of(new Release.GoModules(
                        "go1.26.8",
                        "v3.7.3",
                        List.of("go.etcd.io/etcd/api/v3", "go.etcd.io/etcd/client/pkg/v3", "go.etcd.io/etcd/client/v3", "go.etcd.io/etcd/pkg/v3", "go.etcd.io/etcd/server/v3", "go.etcd.io/etcd/etcdctl/v3", "go.etcd.io/etcd/etcdutl/v3"),
                        Map.ofEntries(Map.entry("etcd", "go.etcd.io/etcd/server/v3"), Map.entry("etcdctl", "go.etcd.io/etcd/etcdctl/v3"), Map.entry("etcdutl", "go.etcd.io/etcd/etcdutl/v3")))),
                new Release.Line(
                    Boolean.TRUE,
                    Release.V2Api.NEVER,
                    List.of(),
                    Boolean.TRUE,
                    "/v3",
                    List.of("--log-outputs=stderr"),
                    Map.ofEntries(),
                    Boolean.TRUE,
                    "--downgrade-check-time",
                    Boolean.TRUE,
                    new Release.Tools(
                        Boolean.TRUE,
                        Boolean.FALSE,
                        Boolean.TRUE,
                        Release.RestoreTool.ETCDUTL,
                        Boolean.TRUE,
                        Boolean.TRUE),
                    new Release.Upgrade(
                        "3.6",
                        "3.6.11",
                        Boolean.TRUE),
                    new Release.Downgrade(
                        "3.6",
                        Release.DowngradeMethod.DOWNGRADE_API),
                    Map.ofEntries(Map.entry("--experimental-bootstrap-defrag-threshold-megabytes", "--bootstrap-defrag-threshold-megabytes"), Map.entry("--experimental-compact-hash-check-enabled", "--feature-gates=CompactHashCheck=true"), Map.entry("--experimental-compact-hash-check-time", "--compact-hash-check-time"), Map.entry("--experimental-compaction-batch-limit", "--compaction-batch-limit"), Map.entry("--experimental-compaction-sleep-interval", "--compaction-sleep-interval"), Map.entry("--experimental-corrupt-check-time", "--corrupt-check-time"), Map.entry("--experimental-distributed-tracing-address", "--distributed-tracing-address"), Map.entry("--experimental-distributed-tracing-instance-id", "--distributed-tracing-instance-id"), Map.entry("--experimental-distributed-tracing-sampling-rate", "--distributed-tracing-sampling-rate"), Map.entry("--experimental-distributed-tracing-service-name", "--distributed-tracing-service-name"), Map.entry("--experimental-downgrade-check-time", "--downgrade-check-time"), Map.entry("--experimental-enable-distributed-tracing", "--enable-distributed-tracing"), Map.entry("--experimental-enable-lease-checkpoint", "--feature-gates=LeaseCheckpoint=true"), Map.entry("--experimental-enable-lease-checkpoint-persist", "--feature-gates=LeaseCheckpointPersist=true"), Map.entry("--experimental-initial-corrupt-check", "--feature-gates=InitialCorruptCheck=true"), Map.entry("--experimental-memory-mlock", "--memory-mlock"), Map.entry("--experimental-peer-skip-client-san-verification", "--peer-skip-client-san-verification"), Map.entry("--experimental-snapshot-catchup-entries", "--snapshot-catchup-entries"), Map.entry("--experimental-stop-grpc-service-on-defrag", "--feature-gates=StopGRPCServiceOnDefrag=true"), Map.entry("--experimental-txn-mode-write-with-shared-buffer", "--feature-gates=TxnModeWriteWithSharedBuffer=true"), Map.entry("--experimental-warning-apply-duration", "--warning-apply-duration"), Map.entry("--experimental-warning-unary-request-duration", "--warning-unary-request-duration"), Map.entry("--experimental-watch-progress-notify-interval", "--watch-progress-notify-interval")),
                    List.of(),
                    List.of("error scanning unapplied entries"),
                    List.of(Release.DataRecord.V2_CLUSTER_VERSION, Release.DataRecord.WAL_CLUSTER_VERSION, Release.DataRecord.BACKEND_CLUSTER_VERSION, Release.DataRecord.BACKEND_TERM, Release.DataRecord.BACKEND_CONF_STATE, Release.DataRecord.STORAGE_VERSION))));
    }
}
