package dev.etcdmigrate.datadir;

import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.EtcdVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * An etcd data directory and the runner's own corner of it ({@code .etcd-migrate/}: lock, staging,
 * backups). The data dir itself is often a volume mount, so swaps happen on its {@code member/}
 * subdirectory, never on the data dir.
 */
public final class DataDir {

    public static final String VERSION_FILE = "version.txt";
    /** Entries that are not etcd data: ours, version.txt, and a fresh filesystem's lost+found. */
    private static final Set<String> NOT_DATA = Set.of(OwnDir.NAME, "lost+found", VERSION_FILE, VERSION_FILE + ".tmp");

    private final Path dir;

    public DataDir(Path dir) {
        this.dir = dir.toAbsolutePath().normalize();
    }

    public Path path() {
        return dir;
    }

    public Path member() {
        return dir.resolve("member");
    }

    public Path versionFile() {
        return dir.resolve(VERSION_FILE);
    }

    /** The runner's own corner, .etcd-migrate/: its layout lives in {@link OwnDir}. */
    public OwnDir own() {
        return OwnDir.of(dir);
    }

    public boolean exists() {
        return Files.isDirectory(dir);
    }

    /** A symbolic link as the data dir is refused: swaps and backups must stay on the real directory. */
    public void refuseSymbolicLink() throws IOException, UnusableDataDirException {
        if (Files.isSymbolicLink(dir)) {
            throw new UnusableDataDirException(
                    "data dir " + dir + " is a symbolic link to " + Files.readSymbolicLink(dir)
                            + "; point --data-dir / DATA_DIRECTORY at the real directory (nothing was changed)");
        }
    }

    /**
     * Every step writes here (the lock, staging, version.txt, etcd's WAL): a read-only mount, or an entry
     * this process cannot write, is refused before anything starts rather than failing half-way. (The
     * JDK's FileStore.isReadOnly misses a read-only bind mount; access(2) does not.)
     */
    public void refuseReadOnly() throws IOException, UnusableDataDirException {
        Optional<Path> unwritable;
        try (Stream<Path> entries = Files.walk(dir)) {
            unwritable = entries.filter(p -> !Files.isWritable(p)).findFirst();
        } catch (java.io.UncheckedIOException e) {
            throw e.getCause();
        }
        if (unwritable.isPresent()) {
            Path p = unwritable.get();
            throw new UnusableDataDirException(
                    (p.equals(dir) ? "data dir " + dir : p + " in data dir " + dir) + " is read-only for"
                            + " this process (a read-only mount, or its owner or mode): the migration writes its lock, staging and"
                            + " version.txt there and etcd its WAL; make it writable (nothing was changed)");
        }
    }

    /** True when it holds anything but our own files, version.txt or lost+found. */
    public boolean holdsData() throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.anyMatch(p -> !NOT_DATA.contains(p.getFileName().toString()));
        }
    }

    public void createOwnerOnly() throws IOException {
        Permissions.ownerOnlyDir(dir);
    }

    /** The recorded version, or empty when there is no version.txt; a malformed file is an error. */
    public Optional<DataVersion> readVersion() throws IOException, MalformedVersionFileException {
        Path file = versionFile();
        if (!Files.exists(file)) {
            return Optional.empty();
        }
        byte[] bytes = Files.readAllBytes(file);
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(java.nio.ByteBuffer.wrap(bytes))
                    .toString();
        } catch (java.nio.charset.CharacterCodingException e) {
            text = new String(bytes, StandardCharsets.ISO_8859_1); // not text: parse fails and shows it escaped
        }
        try {
            return Optional.of(DataVersion.parse(text));
        } catch (IllegalArgumentException e) {
            throw new MalformedVersionFileException(file + " is not a valid version file: " + e.getMessage()
                    + ". Fix: write the etcd version and storage that last ran on this data, e.g. `echo -n 3.5.35/etcd3 > "
                    + file + "`, or remove the file: the runner then reads the version from the data itself (and"
                    + " asks for --initial-version only where the data cannot say).");
        }
    }

    /**
     * Atomically replaces version.txt: temp file, fsync, rename, fsync the directory. Skips the write
     * when the content is unchanged, so a full disk can never leave it empty.
     */
    public boolean writeVersion(DataVersion version) throws IOException {
        Path file = versionFile();
        String text = version.format();
        if (Files.exists(file) && Files.readString(file, StandardCharsets.UTF_8).equals(text)) {
            return false;
        }
        AtomicFile.write(file, text);
        return true;
    }

    /** etcd3 keeps its MVCC store in member/snap/db; a data dir without it holds only the v2 store. */
    public StorageApi inferStorage() {
        return Files.isRegularFile(dir.resolve("member/snap/db")) ? StorageApi.ETCD3 : StorageApi.ETCD2;
    }

    /**
     * Removes .etcd-migrate/ when it holds only the runner's bookkeeping: a run that created it and then
     * was refused leaves the data dir as it found it. Backups or staging keep it.
     */
    public void removeOwnDirIfOnlyBookkeeping() throws IOException {
        if (own().holdsOnlyBookkeeping()) Trees.deleteRecursively(own().path());
    }

    /** Where backups go by default, and where a swapped-out member dir lands first (see {@link Backups}). */
    public Path backupsDir() {
        return own().backups();
    }

    public Path staging() {
        return own().staging();
    }

    /** Lists the entries of the data dir that are not ours, for messages. */
    public String describeContent() throws IOException {
        StringBuilder b = new StringBuilder();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path p : entries) {
                if (!NOT_DATA.contains(p.getFileName().toString())) {
                    b.append(b.isEmpty() ? "" : ", ").append(p.getFileName());
                }
            }
        }
        return b.toString();
    }

    /**
     * version.txt is a claim: checked against the member dir before any etcd starts. etcd3 data has its
     * MVCC backend (member/snap/db), which 2.x never writes; the WAL must be exactly where etcd will be
     * told to look, or etcd starts a new cluster's WAL over the old data.
     */
    public void checkAgainst(DataVersion recorded, Optional<Path> walDir, Predicate<EtcdVersion> hasV3Api)
            throws IOException, ContradictionException {
        Path member = member();
        if (!Files.isDirectory(member)) return; // nothing etcd wrote yet (or a pre-2.2 layout, which 2.2 converts)
        Path db = member.resolve("snap/db");
        boolean hasDb = Files.isRegularFile(db);
        if (recorded.storage() == StorageApi.ETCD3 && !hasDb) {
            throw new ContradictionException("version.txt says " + recorded + " but " + member + " has no v3 backend ("
                    + db
                    + " is missing): the member dir holds etcd2 (v2 store) data. Running etcd3 steps on it would serve an"
                    + " empty v3 keyspace. If the data is etcd2, write " + recorded.version()
                    + "/etcd2 into version.txt");
        }
        if (recorded.storage() == StorageApi.ETCD2 && hasDb && !hasV3Api.test(recorded.version())) {
            throw new ContradictionException("version.txt says " + recorded + " but " + member + " has a v3 backend ("
                    + db + "), which etcd " + recorded.version() + " never writes: an etcd 3.x wrote this data");
        }
        boolean inMember = hasWalFiles(member.resolve("wal"));
        boolean hasSnap = Files.isDirectory(member.resolve("snap"));
        if (walDir.isPresent()) {
            boolean outside = hasWalFiles(walDir.get());
            if (inMember && outside) {
                throw new ContradictionException(
                        "etcd's --wal-dir " + walDir.get() + " holds a WAL, and so does " + member.resolve("wal")
                                + ": two WALs for one member dir; keep the one etcd last wrote and remove the other");
            }
            if (inMember) {
                throw new ContradictionException(
                        "etcd's --wal-dir " + walDir.get() + " holds no WAL but " + member.resolve("wal")
                                + " does: with --wal-dir etcd would start a new cluster's WAL over the old data. Drop --wal-dir, or move"
                                + " the WAL files into " + walDir.get() + " while etcd is stopped");
            }
            if (!outside && hasSnap) {
                throw new ContradictionException("neither etcd's --wal-dir " + walDir.get() + " nor "
                        + member.resolve("wal") + " holds a WAL, but " + member.resolve("snap")
                        + " exists: the WAL is somewhere else; point --wal-dir at it");
            }
        } else if (!inMember && hasSnap) {
            throw new ContradictionException(
                    member + " has no WAL in " + member.resolve("wal") + " but has " + member.resolve("snap")
                            + ": the data was written with --wal-dir. Pass etcd's same --wal-dir after -- (or ETCD_WAL_DIR), or etcd"
                            + " would start a new cluster's WAL over the old data");
        }
    }

    private static boolean hasWalFiles(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) return false;
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.anyMatch(p -> p.getFileName().toString().endsWith(".wal"));
        }
    }

    /** The data contradicts version.txt or etcd's flags; refused (exit 3), nothing touched. */
    public static final class ContradictionException extends dev.etcdmigrate.error.RefusedException {
        public ContradictionException(String message) {
            super(message);
        }
    }

    /** The data dir cannot be worked on as given (e.g. a symbolic link); nothing was touched. */
    public static final class UnusableDataDirException extends dev.etcdmigrate.error.UsageException {
        public UnusableDataDirException(String message) {
            super(message);
        }
    }

    public static final class MalformedVersionFileException extends dev.etcdmigrate.error.UsageException {
        public MalformedVersionFileException(String message) {
            super(message);
        }
    }
}
