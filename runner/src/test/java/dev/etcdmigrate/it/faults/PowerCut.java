package dev.etcdmigrate.it.faults;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URLDecoder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What a power cut may leave of the operations {@link PowerCutFs} logged: the model.
 *
 * <p>Durability, as POSIX promises it and ext4/xfs in ordered mode give it (nothing more is assumed of
 * the runner; etcd's own directory entries, see {@link #STRICT_ETCD}):
 * a file's data (write, truncate, fallocate, chmod) is durable once that file was fsynced or
 * fdatasynced afterwards; a directory entry (create, mkdir, symlink, link, unlink, rmdir, rename) is
 * durable once its directory was fsynced afterwards (for a rename: the target's directory). Operations
 * not durable at the cut may each be lost, within what the file systems allow: directory operations are
 * journaled in order, so a crash keeps a prefix of the ones not yet durable; a file's data reaches the
 * disk in order too (ordered mode writes data before the size that exposes it), so a crash keeps a
 * prefix of each file's non-durable data operations, independently of the other files.
 *
 * <p>A crash state is built by replaying the kept operations on model inodes (a dropped create leaves its
 * later writes unreachable, a kept rename of an inode whose create was dropped still names that inode)
 * and writing the reachable tree into a directory.
 */
final class PowerCut {

    enum Kind {
        MKDIR,
        CREATE,
        SYMLINK,
        LINK,
        UNLINK,
        RMDIR,
        RENAME,
        CHMOD,
        TRUNCATE,
        WRITE,
        FALLOCATE,
        FSYNC,
        FSYNCDIR,
        OTHER
    }

    /** One logged line; inode ids are the model's (a backing inode number reused after unlink gets a new id). */
    record Op(
            int line,
            boolean byRunner,
            Kind kind,
            int inode,
            int parent,
            String name,
            int toParent,
            String toName,
            long a,
            long b,
            long c,
            String text) {
        boolean namespace() {
            return switch (kind) {
                case MKDIR, CREATE, SYMLINK, LINK, UNLINK, RMDIR, RENAME -> true;
                default -> false;
            };
        }

        boolean data() {
            return kind == Kind.WRITE || kind == Kind.TRUNCATE || kind == Kind.FALLOCATE || kind == Kind.CHMOD;
        }

        boolean sync() {
            return kind == Kind.FSYNC || kind == Kind.FSYNCDIR;
        }
    }

    /** How the non-durable operations are chosen. */
    sealed interface Policy {
        /** All non-durable operations lost: what the disk had promised and nothing more. */
        record DurableOnly() implements Policy {}
        /** Nothing lost: what a SIGKILL leaves. */
        record Everything() implements Policy {}
        /** A random prefix of the directory operations; per file all, none or a random prefix of its data. */
        record Seeded(long seed) implements Policy {}
    }

    /**
     * etcd's own directory entries get what ext4/xfs give them (the next sync of anything commits the
     * journal that holds them), the runner's only what POSIX promises: etcd fsyncs a new .snap file but
     * never member/snap/, and under strict POSIX a cut can lose that file while the WAL already names it
     * (the rerun's etcd then fails; see docs/power-loss.md). -Dpowercut.strictEtcd=true holds etcd to POSIX too.
     */
    static final boolean STRICT_ETCD = Boolean.getBoolean("powercut.strictEtcd");

    private final List<Op> ops;
    private final Path data;
    /** model inode id -> base path (relative) for inodes that existed at mount */
    private final Map<Integer, String> baseTree;

    private final Path base;
    private final int root;
    /** for each op: the line of the first sync after it that makes it durable, or MAX_VALUE */
    private final int[] durableAt;

    private PowerCut(List<Op> ops, Path data, Map<Integer, String> baseTree, Path base, int root) {
        this.ops = ops;
        this.data = data;
        this.baseTree = baseTree;
        this.base = base;
        this.root = root;
        this.durableAt = new int[ops.size()];
        Map<Integer, Integer> nextFileSync = new HashMap<>();
        Map<Integer, Integer> nextDirSync = new HashMap<>();
        int nextEtcdSync = Integer.MAX_VALUE;
        for (int i = ops.size() - 1; i >= 0; i--) {
            Op op = ops.get(i);
            durableAt[i] = Integer.MAX_VALUE;
            if (op.sync() && !op.byRunner()) nextEtcdSync = op.line();
            if (op.kind() == Kind.FSYNC) nextFileSync.put(op.inode(), op.line());
            if (op.kind() == Kind.FSYNCDIR) {
                nextDirSync.put(op.inode(), op.line());
                nextFileSync.put(op.inode(), op.line()); // a directory's own mode
            }
            if (op.data()) durableAt[i] = nextFileSync.getOrDefault(op.inode(), Integer.MAX_VALUE);
            if (op.namespace()) {
                durableAt[i] = nextDirSync.getOrDefault(
                        op.kind() == Kind.RENAME ? op.toParent() : op.parent(), Integer.MAX_VALUE);
                if (!op.byRunner() && !STRICT_ETCD) durableAt[i] = Math.min(durableAt[i], nextEtcdSync);
            }
        }
    }

    static PowerCut parse(List<String> lines, Path data, Map<Long, String> baseInodes, Path base) {
        Map<Long, Integer> current = new HashMap<>();
        Map<Integer, String> baseTree = new HashMap<>();
        int[] next = {0};
        for (var e : new TreeMap<>(baseInodes).entrySet()) {
            int id = next[0]++;
            current.put(e.getKey(), id);
            baseTree.put(id, e.getValue());
        }
        List<Op> ops = new ArrayList<>();
        int root = current.getOrDefault(-1L, -1);
        for (int i = 0; i < lines.size(); i++) {
            String text = lines.get(i);
            String[] f = text.split(" ");
            boolean runner = f[1].equals("R");
            String op = f[2];
            java.util.function.LongFunction<Integer> id = ino -> current.computeIfAbsent(ino, k -> next[0]++);
            Op parsed = switch (op) {
                case "root" -> {
                    root = id.apply(Long.parseLong(f[3]));
                    yield new Op(i, runner, Kind.OTHER, root, -1, null, -1, null, 0, 0, 0, text);
                }
                case "mkdir", "create", "symlink" -> {
                    int fresh = next[0]++;
                    current.put(Long.parseLong(f[3]), fresh);
                    Kind k = op.equals("mkdir") ? Kind.MKDIR : op.equals("create") ? Kind.CREATE : Kind.SYMLINK;
                    yield new Op(
                            i,
                            runner,
                            k,
                            fresh,
                            id.apply(Long.parseLong(f[4])),
                            name(f[5]),
                            -1,
                            null,
                            Long.parseLong(f[6], 8),
                            0,
                            0,
                            text);
                }
                case "link", "unlink", "rmdir" ->
                    onEntry(
                            i,
                            runner,
                            op.equals("link") ? Kind.LINK : op.equals("unlink") ? Kind.UNLINK : Kind.RMDIR,
                            id.apply(Long.parseLong(f[3])),
                            id.apply(Long.parseLong(f[4])),
                            name(f[5]),
                            text);
                case "rename" ->
                    new Op(
                            i,
                            runner,
                            Kind.RENAME,
                            id.apply(Long.parseLong(f[3])),
                            id.apply(Long.parseLong(f[4])),
                            name(f[5]),
                            id.apply(Long.parseLong(f[6])),
                            name(f[7]),
                            0,
                            0,
                            0,
                            text);
                case "chmod" ->
                    onInode(i, runner, Kind.CHMOD, id.apply(Long.parseLong(f[3])), Long.parseLong(f[4], 8), text);
                case "T" ->
                    onInode(i, runner, Kind.TRUNCATE, id.apply(Long.parseLong(f[3])), Long.parseLong(f[4]), text);
                case "fsync" ->
                    onInode(i, runner, Kind.FSYNC, id.apply(Long.parseLong(f[3])), Long.parseLong(f[4]), text);
                case "W", "F" ->
                    onInode(
                            i,
                            runner,
                            op.equals("W") ? Kind.WRITE : Kind.FALLOCATE,
                            id.apply(Long.parseLong(f[3])),
                            Long.parseLong(f[4]),
                            Long.parseLong(f[5]),
                            Long.parseLong(f[6]),
                            text);
                case "fsyncdir" -> onInode(i, runner, Kind.FSYNCDIR, id.apply(Long.parseLong(f[3])), 0, text);
                default -> new Op(i, runner, Kind.OTHER, -1, -1, null, -1, null, 0, 0, 0, text); // call, fault
            };
            ops.add(parsed);
        }
        return new PowerCut(ops, data, baseTree, base, root);
    }

    /** An operation on a directory entry (link, unlink, rmdir): no second name, no numbers. */
    private static Op onEntry(int line, boolean byRunner, Kind kind, int inode, int parent, String name, String text) {
        return new Op(line, byRunner, kind, inode, parent, name, -1, null, 0, 0, 0, text);
    }

    /** An operation on one inode's data, mode or sync: no directory entry. */
    private static Op onInode(int line, boolean byRunner, Kind kind, int inode, long a, long b, long c, String text) {
        return new Op(line, byRunner, kind, inode, -1, null, -1, null, a, b, c, text);
    }

    /** The same with one number (a mode, a size, fdatasync's flag). */
    private static Op onInode(int line, boolean byRunner, Kind kind, int inode, long a, String text) {
        return onInode(line, byRunner, kind, inode, a, 0, 0, text);
    }

    private static String name(String escaped) {
        return URLDecoder.decode(escaped.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    List<Op> ops() {
        return ops;
    }

    /** Lines after which a power cut is most telling: right after each fsync/fdatasync (of a file or directory). */
    List<Integer> durabilityPoints() {
        return ops.stream().filter(Op::sync).map(op -> op.line() + 1).toList();
    }

    /** Whether op i is durable when power is cut after the first {@code cut} lines. */
    boolean durable(int i, int cut) {
        return durableAt[i] < cut;
    }

    /** Writes the state a power cut after the first {@code cut} lines may leave, chosen by policy, into {@code into} (empty). */
    void materialize(int cut, Policy policy, Path into) throws IOException {
        Set<Integer> kept = choose(cut, policy);
        Map<Integer, Node> nodes = new HashMap<>();
        // the base: every inode present at mount, with its entries
        for (var e : baseTree.entrySet()) {
            Path p = base.resolve(e.getValue());
            Node n = new Node(
                    Files.isSymbolicLink(p) ? 'l' : Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS) ? 'd' : 'f',
                    Files.isSymbolicLink(p) ? 0777 : mode(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS)));
            n.base = p;
            nodes.put(e.getKey(), n);
        }
        for (var e : baseTree.entrySet()) {
            if (e.getValue().isEmpty()) continue;
            Path rel = Path.of(e.getValue());
            int parent = baseTree.entrySet().stream()
                    .filter(x -> x.getValue()
                            .equals(
                                    rel.getParent() == null
                                            ? ""
                                            : rel.getParent().toString()))
                    .findFirst()
                    .orElseThrow()
                    .getKey();
            nodes.get(parent).entries.put(rel.getFileName().toString(), e.getKey());
        }
        nodes.computeIfAbsent(root, k -> new Node('d', 0755));
        for (int i = 0; i < cut && i < ops.size(); i++) {
            if (!kept.contains(i)) continue;
            Op op = ops.get(i);
            switch (op.kind()) {
                case MKDIR, CREATE, SYMLINK -> {
                    nodes.put(
                            op.inode(),
                            new Node(op.kind() == Kind.MKDIR ? 'd' : op.kind() == Kind.CREATE ? 'f' : 'l', (int)
                                    op.a()));
                    dir(nodes, op.parent()).entries.put(op.name(), op.inode());
                }
                case LINK -> dir(nodes, op.parent()).entries.put(op.name(), op.inode());
                case UNLINK, RMDIR -> dir(nodes, op.parent()).entries.remove(op.name(), op.inode());
                case RENAME -> {
                    dir(nodes, op.parent()).entries.remove(op.name(), op.inode());
                    dir(nodes, op.toParent()).entries.put(op.toName(), op.inode());
                }
                case CHMOD -> node(nodes, op.inode()).mode = (int) op.a();
                case WRITE, TRUNCATE, FALLOCATE -> node(nodes, op.inode()).data.add(op);
                default -> {}
            }
        }
        Map<Integer, Path> written = new HashMap<>();
        List<Runnable> modes = new ArrayList<>();
        write(nodes, root, into, written, modes, new HashSet<>());
        for (int i = modes.size() - 1; i >= 0; i--) modes.get(i).run(); // deepest last-created first, the root last
    }

    /** Which operations the state keeps: two trials with equal keys build the same state. */
    java.util.BitSet keeps(int cut, Policy policy) {
        java.util.BitSet bits = new java.util.BitSet();
        choose(cut, policy).forEach(bits::set);
        return bits;
    }

    private Set<Integer> choose(int cut, Policy policy) {
        Set<Integer> kept = new HashSet<>();
        List<Integer> looseNamespace = new ArrayList<>();
        Map<Integer, List<Integer>> looseData = new LinkedHashMap<>();
        for (int i = 0; i < cut && i < ops.size(); i++) {
            Op op = ops.get(i);
            if (!op.namespace() && !op.data()) continue;
            if (durable(i, cut) || policy instanceof Policy.Everything) {
                kept.add(i);
            } else if (op.namespace()) {
                looseNamespace.add(i);
            } else {
                looseData.computeIfAbsent(op.inode(), k -> new ArrayList<>()).add(i);
            }
        }
        if (policy instanceof Policy.Seeded(long seed)) {
            Random random = new Random(seed);
            kept.addAll(looseNamespace.subList(0, random.nextInt(looseNamespace.size() + 1)));
            for (List<Integer> file : looseData.values()) {
                int choice = random.nextInt(3);
                int keep = choice == 0 ? file.size() : choice == 1 ? 0 : random.nextInt(file.size() + 1);
                kept.addAll(file.subList(0, keep));
            }
        }
        return kept;
    }

    private void write(
            Map<Integer, Node> nodes,
            int id,
            Path at,
            Map<Integer, Path> written,
            List<Runnable> modes,
            Set<Integer> onPath)
            throws IOException {
        Node n = nodes.get(id);
        if (written.containsKey(id) && n.type != 'd') {
            Files.createLink(at, written.get(id));
            return;
        }
        if (n.type == 'd') {
            if (!onPath.add(id)) return; // a directory renamed into itself cannot happen; be safe
            Files.createDirectories(at);
            for (var e : new TreeMap<>(n.entries).entrySet()) {
                if (nodes.containsKey(e.getValue()))
                    write(nodes, e.getValue(), at.resolve(e.getKey()), written, modes, onPath);
            }
            onPath.remove(id);
        } else if (n.type == 'l') {
            String target = n.base != null ? Files.readSymbolicLink(n.base).toString() : symlinkTarget(n);
            Files.createSymbolicLink(at, Path.of(target));
            written.put(id, at);
            return;
        } else {
            if (n.base != null) Files.copy(n.base, at, StandardCopyOption.COPY_ATTRIBUTES);
            else Files.createFile(at);
            applyData(n, at);
        }
        written.put(id, at);
        int mode = n.mode;
        modes.add(() -> {
            try {
                Files.setPosixFilePermissions(at, perms(mode));
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    private String symlinkTarget(Node n) throws IOException {
        for (Op op : n.data) {
            if (op.kind() == Kind.WRITE) return new String(payload(op), StandardCharsets.UTF_8);
        }
        return "";
    }

    private byte[] payload(Op op) throws IOException {
        if (op.c() < 0) return new byte[(int) op.b()];
        try (FileChannel ch = FileChannel.open(data, StandardOpenOption.READ)) {
            java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate((int) op.b());
            while (buf.hasRemaining() && ch.read(buf, op.c() + buf.position()) > 0) {}
            return buf.array();
        }
    }

    private void applyData(Node n, Path file) throws IOException {
        if (n.data.isEmpty()) return;
        try (RandomAccessFile out = new RandomAccessFile(file.toFile(), "rw");
                FileChannel in = FileChannel.open(data, StandardOpenOption.READ)) {
            FileChannel ch = out.getChannel();
            for (Op op : n.data) {
                switch (op.kind()) {
                    case TRUNCATE -> out.setLength(op.a());
                    case FALLOCATE -> {
                        boolean keepSize = (op.a() & 1) != 0; // FALLOC_FL_KEEP_SIZE
                        if (!keepSize && op.b() + op.c() > out.length()) out.setLength(op.b() + op.c());
                    }
                    case WRITE -> {
                        if (op.c() < 0) {
                            long end = op.a() + op.b();
                            long zeroUntil = Math.min(end, out.length());
                            for (long p = op.a(); p < zeroUntil; p += 65536) {
                                ch.write(java.nio.ByteBuffer.allocate((int) Math.min(65536, zeroUntil - p)), p);
                            }
                            if (end > out.length()) out.setLength(end);
                        } else {
                            long done = 0;
                            while (done < op.b())
                                done += in.transferTo(op.c() + done, op.b() - done, ch.position(op.a() + done));
                        }
                    }
                    default -> {}
                }
            }
        }
    }

    private static Node dir(Map<Integer, Node> nodes, int id) {
        return nodes.computeIfAbsent(id, k -> new Node('d', 0700));
    }

    private static Node node(Map<Integer, Node> nodes, int id) {
        return nodes.computeIfAbsent(id, k -> new Node('f', 0600));
    }

    private static int mode(Set<PosixFilePermission> perms) {
        int m = 0;
        for (PosixFilePermission p : perms) m |= 1 << (8 - p.ordinal());
        return m;
    }

    private static Set<PosixFilePermission> perms(int mode) {
        StringBuilder s = new StringBuilder();
        String rwx = "rwxrwxrwx";
        for (int i = 0; i < 9; i++) s.append((mode & (1 << (8 - i))) != 0 ? rwx.charAt(i) : '-');
        return PosixFilePermissions.fromString(s.toString());
    }

    private static final class Node {
        final char type;
        int mode;
        Path base;
        final Map<String, Integer> entries = new HashMap<>();
        final List<Op> data = new ArrayList<>();

        Node(char type, int mode) {
            this.type = type;
            this.mode = mode & 0777;
        }
    }

    /** Empties a directory (a crash state is built into it). */
    static void clear(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            Files.createDirectories(dir);
            return;
        }
        try (Stream<Path> entries = Files.list(dir)) {
            for (Path p : entries.toList()) {
                if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    setWritable(p);
                }
                dev.etcdmigrate.datadir.Trees.deleteRecursively(p);
            }
        }
    }

    private static void setWritable(Path dir) throws IOException {
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path p : walk.filter(x -> Files.isDirectory(x, LinkOption.NOFOLLOW_LINKS))
                    .toList()) {
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwx------"));
            }
        }
    }
}
