package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.version.MinorLine;
import dev.etcdmigrate.version.StorageApi;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The deciding half of detection as a table: records as a reader would find them (no file, no etcd) and
 * the storage, line, floor and whether the data pins its line. DataDetectionIT shows the same rules on data
 * every bundled release wrote.
 */
class DataDecisionTest {

    private static final Catalog CATALOG = Catalog.bundled();
    private static final Path DIR = Path.of("/data");
    private static final DbRead EMPTY_DB = DbRead.NONE;

    private static DbRead db(UnaryOperator<DbBuilder> f) {
        return f.apply(new DbBuilder()).build();
    }

    /** The records of a data dir: db (or none), snapshot, WAL. */
    private static DataRecords records(
            boolean hasDb, DbRead db, Optional<SnapshotRead> snap, Optional<WalSummary> wal) {
        return new DataRecords(
                DIR,
                Optional.empty(),
                DIR.resolve("member/wal"),
                true,
                hasDb,
                wal.isPresent(),
                db,
                snap.map(SnapshotRead::file),
                snap,
                wal.map(s -> new WalRead(Optional.of(s), List.of(), Optional.empty())),
                wal.map(WalSummary::segments).orElse(0),
                List.of());
    }

    private static WalSummary wal(long v2Writes, String... versions) {
        List<VersionSet> sets = Stream.of(versions)
                .map(v -> new VersionSet(4, v, "PUT /0/version"))
                .toList();
        return new WalSummary(
                1,
                OptionalLong.of(1),
                OptionalLong.of(2),
                OptionalLong.of(9),
                OptionalLong.empty(),
                sets,
                List.of(),
                v2Writes,
                List.of(),
                OptionalLong.empty(),
                0,
                List.of());
    }

    private static Optional<SnapshotRead> snap(long index, String version) {
        return Optional.of(new SnapshotRead(
                DIR.resolve("member/snap/0000000000000002-" + String.format("%016x", index) + ".snap"),
                index,
                Optional.of(version),
                List.of(),
                0,
                Optional.empty()));
    }

    static Stream<Arguments> table() {
        return Stream.of(
                Arguments.of(
                        "etcd2 layout: the WAL's PUT /0/version",
                        records(false, EMPTY_DB, Optional.empty(), Optional.of(wal(3, "2.3.0"))),
                        "etcd2 2.3 floor 2.3 pinned"),
                Arguments.of(
                        "a 3.5 member of a 3.4 cluster: meta keys above the cluster version",
                        records(true, db(b -> b.term().cluster("3.4.0", 15).v3()), Optional.empty(), Optional.empty()),
                        "etcd3 3.5 floor 3.4 pinned"),
                Arguments.of(
                        "3.6's storage version above a 3.5 cluster version",
                        records(
                                true,
                                db(b -> b.term()
                                        .cluster("3.5.0", 9)
                                        .storage("3.6.0")
                                        .v3()),
                                Optional.empty(),
                                Optional.empty()),
                        "etcd3 3.6 floor 3.6 pinned"),
                Arguments.of(
                        "a db recording nothing: only that a 3.x line ran",
                        records(true, db(b -> b.v3()), Optional.empty(), Optional.of(wal(0))),
                        "etcd3 3.0 floor 3.0 unpinned"),
                Arguments.of(
                        "a damaged db: the WAL's cluster version decides",
                        records(
                                true,
                                db(b -> b.failure("damaged: page 7")),
                                Optional.empty(),
                                Optional.of(wal(0, "3.5.0"))),
                        "etcd3 3.5 floor 3.5 pinned"),
                Arguments.of(
                        "a 3.x db without v3 keys beside v2 writes: etcd2 data",
                        records(true, db(b -> b.cluster("3.3.0", 9)), Optional.empty(), Optional.of(wal(3, "3.3.0"))),
                        "etcd2 3.3 floor 3.3 pinned"),
                Arguments.of(
                        "a snapshot past the db's applied index is newer",
                        records(true, db(b -> b.cluster("3.3.0", 50).v3()), snap(100, "3.4.0"), Optional.empty()),
                        "etcd3 3.4 floor 3.4 pinned"),
                Arguments.of(
                        "the db at or after the snapshot wins over it",
                        records(true, db(b -> b.cluster("3.4.0", 100).v3()), snap(100, "3.3.0"), Optional.empty()),
                        "etcd3 3.4 floor 3.4 pinned"),
                Arguments.of(
                        "a WAL entry after both wins",
                        records(
                                true,
                                db(b -> b.cluster("3.4.0", 3).v3()),
                                Optional.empty(),
                                Optional.of(wal(0, "3.5.0"))),
                        "etcd3 3.5 floor 3.5 pinned"),
                Arguments.of(
                        "nothing etcd wrote",
                        new DataRecords(
                                DIR,
                                Optional.empty(),
                                DIR,
                                false,
                                false,
                                false,
                                EMPTY_DB,
                                Optional.empty(),
                                Optional.empty(),
                                Optional.empty(),
                                0,
                                List.of()),
                        "none none floor none unpinned"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void decides(String name, DataRecords records, String expected) {
        DataDetection.Detection d = DataDecision.decide(records, CATALOG);
        String got =
                d.storage().map(s -> s == StorageApi.ETCD2 ? "etcd2" : "etcd3").orElse("none") + " "
                        + d.line().map(MinorLine::toString).orElse("none") + " floor "
                        + d.floor().map(MinorLine::toString).orElse("none") + " "
                        + (d.pinned() ? "pinned" : "unpinned");
        assertEquals(expected, got, d.evidenceText());
    }

    /** A db's records, built up. */
    private static final class DbBuilder {
        Optional<String> storage = Optional.empty();
        Optional<String> cluster = Optional.empty();
        long index = -1;
        boolean term;
        boolean v3;
        Optional<String> failure = Optional.empty();

        DbBuilder term() {
            term = true;
            return this;
        }

        DbBuilder cluster(String v, long at) {
            cluster = Optional.of(v);
            index = at;
            return this;
        }

        DbBuilder storage(String v) {
            storage = Optional.of(v);
            return this;
        }

        DbBuilder v3() {
            v3 = true;
            return this;
        }

        DbBuilder failure(String f) {
            failure = Optional.of(f);
            return this;
        }

        DbRead build() {
            return new DbRead(
                    storage,
                    index,
                    term,
                    term,
                    cluster,
                    Optional.empty(),
                    List.of(),
                    List.of(),
                    OptionalLong.empty(),
                    OptionalLong.empty(),
                    v3,
                    failure);
        }
    }
}
