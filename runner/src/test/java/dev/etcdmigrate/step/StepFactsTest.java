package dev.etcdmigrate.step;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.DiskSpace;
import dev.etcdmigrate.version.EtcdVersion;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every step kind's facts as a table: result, programs, member dir swap, disk peak, what it keeps. */
class StepFactsTest {

    private static final Catalog CATALOG = Catalog.bundled();
    private static final long GIB = 1L << 30;

    private static Release release(String version) {
        return CATALOG.release(EtcdVersion.parse(version)).orElseThrow();
    }

    private static EtcdVersion v(String version) {
        return EtcdVersion.parse(version);
    }

    static Stream<Arguments> steps() {
        MinorUpgrade plain = new MinorUpgrade(v("3.4.23"), release("3.5.35"), Optional.empty(), Optional.empty());
        MinorUpgrade checked =
                new MinorUpgrade(v("3.5.35"), release("3.6.16"), Optional.of(release("3.5.35")), Optional.empty());
        return Stream.of(
                Arguments.of(
                        new PatchFloor(v("3.5.21"), release("3.5.35"), v("3.5.32")),
                        "3.5.35/etcd3",
                        List.of("etcd-3.5.35"),
                        false,
                        0,
                        1,
                        "nothing"),
                Arguments.of(plain, "3.5.35/etcd3", List.of("etcd-3.5.35"), false, 0, 1, "nothing"),
                Arguments.of(
                        checked,
                        "3.6.16/etcd3",
                        List.of("etcdutl-3.5.35", "etcd-3.5.35", "etcd-3.6.16"),
                        false,
                        0,
                        2,
                        "nothing"),
                Arguments.of(
                        plain.withSnapshotter(release("3.4.23")),
                        "3.5.35/etcd3",
                        List.of("etcd-3.4.23", "etcd-3.5.35"),
                        false,
                        0,
                        2,
                        "nothing"),
                Arguments.of(
                        MinorUpgrade.ofEtcd2(v("2.2.5"), release("2.3.8")),
                        "2.3.8/etcd2",
                        List.of("etcd-2.3.8"),
                        false,
                        0,
                        1,
                        "nothing"),
                Arguments.of(
                        new OnlineDowngrade(v("3.7.3"), release("3.7.3"), release("3.6.16")),
                        "3.6.16/etcd3",
                        List.of("etcd-3.7.3", "etcdctl-3.7.3", "etcd-3.6.16"),
                        false,
                        1,
                        2,
                        "a copy of the member dir as a backup"),
                Arguments.of(
                        new SnapshotDowngrade(v("3.5.35"), release("3.5.35"), release("3.4.23")),
                        "3.4.23/etcd3",
                        List.of("etcd-3.5.35", "etcdctl-3.5.35", "etcdctl-3.4.23", "etcd-3.4.23"),
                        true,
                        2,
                        2,
                        "the old member dir as a backup"),
                Arguments.of(
                        new ConvertToV3(v("3.4.23"), release("3.4.23")),
                        "3.4.23/etcd3",
                        List.of("etcd-3.4.23", "etcdctl-3.4.23", "etcdctl-3.4.23"),
                        true,
                        2,
                        3,
                        "the etcd2 member dir as a backup"),
                Arguments.of(
                        new RollbackToV2(v("3.4.23"), release("3.4.23"), release("2.3.8")),
                        "2.3.8/etcd2",
                        List.of("etcd-3.4.23", "etcd-2.3.8"),
                        true,
                        3,
                        2,
                        "the etcd3 member dir as a backup"));
    }

    @ParameterizedTest
    @MethodSource("steps")
    void factsOfEveryStep(
            Step step,
            String result,
            List<String> binaries,
            boolean replacesMemberDir,
            int memberCopies,
            int etcdStarts,
            String keeps) {
        assertEquals(result, step.result().toString(), "result");
        assertEquals(
                binaries,
                step.binaries().stream()
                        .map(b -> b.tool() + "-" + b.release().version())
                        .toList(),
                "binaries");
        assertEquals(replacesMemberDir, step.replacesMemberDir(), "replaces the member dir");
        assertEquals(DiskSpace.needed(memberCopies * GIB, etcdStarts), step.extraDisk(GIB), "extra disk for 1 GiB");
        assertEquals(keeps, step.keeps(), "keeps");
    }
}
