package dev.etcdmigrate.etcd.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.config.EtcdCommandLine;
import dev.etcdmigrate.version.EtcdVersion;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BackendQuotaTest {

    private static final long GIB = 1L << 30;
    private static final long MIB = 1L << 20;

    private static OptionalLong requested(List<String> args, Map<String, String> env) {
        return BackendQuota.requested(EtcdCommandLine.read(args, env));
    }

    @Test
    void theOperatorsFlagWinsOverTheEnvironmentAndTheLastFlagWins() {
        Map<String, String> env = Map.of("ETCD_QUOTA_BACKEND_BYTES", "3000000000");
        assertEquals(
                OptionalLong.of(5), requested(List.of("--quota-backend-bytes=4", "--quota-backend-bytes", "5"), env));
        assertEquals(OptionalLong.of(7), requested(List.of("-quota-backend-bytes=7"), env));
        assertEquals(OptionalLong.of(3000000000L), requested(List.of("--name", "m1"), env));
        assertEquals(OptionalLong.empty(), requested(List.of("--name", "m1"), Map.of()));
    }

    @Test
    void aQuotaThatIsNoNumberIsRefused() {
        var e = assertThrows(
                IllegalArgumentException.class, () -> requested(List.of("--quota-backend-bytes=8G"), Map.of()));
        assertEquals("etcd's --quota-backend-bytes after -- must be a number of bytes, not '8G'", e.getMessage());
        assertThrows(
                IllegalArgumentException.class, () -> requested(List.of(), Map.of("ETCD_QUOTA_BACKEND_BYTES", "-1")));
    }

    @Test
    void theOperatorsQuotaGoesLastSoItOverridesOneInTheCredentialFlags() {
        assertEquals(
                List.of("--quota-backend-bytes=1", "--quota-backend-bytes=9"),
                BackendQuota.withRequested(
                        List.of("--quota-backend-bytes=1"),
                        EtcdCommandLine.read(List.of("--quota-backend-bytes=9"), Map.of())));
        assertEquals(
                List.of("--cert-file=x"),
                BackendQuota.withRequested(List.of("--cert-file=x"), EtcdCommandLine.read(List.of(), Map.of())));
    }

    @Test
    void theQuotaIsNeverBelowTheDbPlusHeadroom() {
        assertEquals(
                2 * GIB,
                BackendQuota.effective(0, 100 * MIB),
                "etcd's default when nothing is asked and the db is small");
        assertEquals(8 * GIB, BackendQuota.effective(8 * GIB, 4 * GIB), "the operator's, when it leaves room");
        assertEquals(5 * GIB, BackendQuota.effective(0, 4 * GIB), "4 GiB db + a quarter");
        assertEquals(
                3 * GIB + 768 * MIB,
                BackendQuota.effective(GIB, 3 * GIB),
                "above the operator's quota: db + a quarter");
        assertEquals(
                1800 * MIB + 512 * MIB, BackendQuota.effective(2 * GIB, 1800 * MIB), "at least 512 MiB of headroom");
    }

    @Test
    void theFlagComesFromTheDbFileOnDiskAndOnlyForLinesWithAV3Backend(@TempDir Path dir) throws Exception {
        Path db = Files.createDirectories(dir.resolve("member/snap")).resolve("db");
        try (RandomAccessFile file = new RandomAccessFile(db.toFile(), "rw")) {
            file.setLength(3 * GIB); // sparse: only the size matters
        }
        var catalog = Catalog.bundled();
        var v34 = catalog.release(EtcdVersion.parse("3.4.23")).orElseThrow();
        var v23 = catalog.release(EtcdVersion.parse("2.3.8")).orElseThrow();
        assertEquals(
                List.of("--quota-backend-bytes=" + (3 * GIB + 768 * MIB)),
                BackendQuota.flags(v34, dir, List.of("--name", "x")));
        assertEquals(
                List.of("--quota-backend-bytes=" + 8 * GIB),
                BackendQuota.flags(v34, dir, List.of("--quota-backend-bytes=" + 8 * GIB)));
        assertEquals(List.of(), BackendQuota.flags(v23, dir, List.of()));
        assertEquals(
                List.of("--quota-backend-bytes=" + 2 * GIB), BackendQuota.flags(v34, dir.resolve("absent"), List.of()));
    }
}
