package dev.etcdmigrate.etcd.binary;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.process.ChildEnvironment;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.version.EtcdVersion;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Binaries are what their names say, and the etcd the runner becomes accepts its flags - asked before
 * any step runs, not found out by a crash-looping pod. Each program reports its version; the target etcd
 * is asked with the operator's own arguments ({@code etcd <args> --version}: etcd parses its flags and
 * environment, then prints its version and exits, touching nothing). Answers are remembered by file
 * identity (and, for the target, by its arguments and ETCD_* variables) so a restart of an unchanged
 * pod runs no process at all. A question can be started ahead ({@link #startAsking}) while the data is read; its
 * answer is judged only where the question is asked, so a wrong binary is refused at the same point of the run.
 */
public final class BinaryCheck {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final Pattern VERSION = Pattern.compile("(?i)version:\\s*(\\d+\\.\\d+\\.\\d+)");
    private static final Pattern UNDEFINED = Pattern.compile("flag provided but not defined: -+([A-Za-z0-9-]+)");
    private static final Pattern INVALID = Pattern.compile("invalid value .* for flag -+([A-Za-z0-9-]+)");

    private final Children children;
    private final Map<String, String> known = new LinkedHashMap<>();
    /** The answers this run relied on: only these are kept, so the file never outgrows one plan. Sorted, and
     * synchronized: {@link #askAll} asks on several threads. */
    private final Map<String, String> used = Collections.synchronizedMap(new TreeMap<>());
    /** The processes asked this run, by the key of their question: a question started ahead is answered once. */
    private final Map<String, FutureTask<Output>> asking = new ConcurrentHashMap<>();

    public BinaryCheck(Children children) {
        this.children = children;
    }

    /** Earlier answers, as {@link #remembered()} wrote them; unreadable lines are ignored. */
    public BinaryCheck remembering(List<String> lines) {
        for (String line : lines) {
            String[] kv = line.split("\t", 2);
            if (kv.length == 2) known.put(kv[0], kv[1]);
        }
        return this;
    }

    /** What to keep for the next start: the successful answers this run relied on. */
    public List<String> remembered() {
        // a loop, not a stream: a sorted map's stream links a comparator lambda of the JDK's own at first use,
        // which the AOT cache does not hold
        List<String> lines = new ArrayList<>(used.size());
        for (Map.Entry<String, String> e : used.entrySet()) lines.add(e.getKey() + "\t" + e.getValue());
        return lines;
    }

    /** One question to a binary ({@link #expect}, {@link #targetAccepts}). */
    public interface Question {
        void ask() throws WrongBinaryException, RejectedFlagException, IOException, InterruptedException;
    }

    /**
     * Asks every question at once, each on its own thread: each is a process start of 20-50 ms and none
     * depends on another (one after the other they would be most of a first start's checks). The first failure
     * in the order given is thrown, so a refusal names the same binary whatever finished first.
     */
    public static void askAll(List<Question> questions)
            throws WrongBinaryException, RejectedFlagException, IOException, InterruptedException {
        if (questions.size() <= 1) {
            for (Question question : questions) question.ask(); // a restart's one remembered answer: no thread to start
            return;
        }
        List<Thread> threads = new ArrayList<>();
        Exception[] failures = new Exception[questions.size()];
        for (int i = 0; i < questions.size(); i++) {
            int at = i;
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    questions.get(at).ask();
                } catch (Exception e) {
                    failures[at] = e;
                }
            }));
        }
        for (Thread thread : threads) {
            thread.join(); // each question ends within its own TIMEOUT
        }
        for (Exception failure : failures) {
            switch (failure) {
                case null -> {}
                case WrongBinaryException e -> throw e;
                case RejectedFlagException e -> throw e;
                case IOException e -> throw e;
                case InterruptedException e -> throw e;
                case RuntimeException e -> throw e;
                default -> throw new IllegalStateException(failure);
            }
        }
    }

    /** Whether the file must be written: this run relied on other answers than it found there. */
    public boolean changed() {
        return !used.equals(known);
    }

    /** A bundled etcd, etcdctl or etcdutl reports the release's version. */
    public void expect(Path binary, String tool, Release release)
            throws WrongBinaryException, IOException, InterruptedException {
        String key = key(binary, tool);
        if (release.version().equals(known.get(key))) {
            used.put(key, release.version());
            return;
        }
        Output out = answer(key, () -> askVersion(binary, tool, release));
        Optional<String> reported = out.version();
        if (out.exit() != 0 || reported.isEmpty()) {
            throw new WrongBinaryException(binary + " did not report its version (exit " + out.exit() + ": "
                    + out.firstLines() + "); the bin dir must hold " + tool + " " + release.version()
                    + " under this name"
                    + " (nothing was changed)");
        }
        if (!reported.get().equals(release.version())) {
            throw new WrongBinaryException(binary + " reports version " + reported.get() + ", not " + release.version()
                    + ": the binary is not what its name says (a bad image build or a hand-copied file); the runner"
                    + " would record a step that version never ran (nothing was changed)");
        }
        remember(key, release.version());
    }

    /**
     * Starts {@link #expect}'s process now, unless an earlier start's answer stands; nothing is judged or kept until
     * {@link #expect} asks. A binary that cannot be read is left to {@link #expect} to report.
     */
    public void startAsking(Path binary, String tool, Release release) {
        try {
            String key = key(binary, tool);
            if (!release.version().equals(known.get(key))) start(key, () -> askVersion(binary, tool, release));
        } catch (IOException e) {
            // expect reads the file again and reports it
        }
    }

    private Output askVersion(Path binary, String tool, Release release) throws IOException, InterruptedException {
        if (tool.equals("etcdctl")) {
            // v3 etcdctl has a `version` command (3.0-3.3 with the line's ETCDCTL_API); v2 etcdctl only --version
            Output out = runScrubbed(binary, List.of("version"), release.line().etcdctlEnv());
            if (out.exit() != 0 || out.version().isEmpty()) out = runScrubbed(binary, List.of("--version"), Map.of());
            return out;
        }
        return runScrubbed(binary, List.of(tool.equals("etcd") ? "--version" : "version"), Map.of());
    }

    /**
     * The target etcd parses exactly the arguments and environment it will be exec'd with; a flag it
     * rejects is named, with the replacement the catalog knows for that line.
     */
    public void targetAccepts(
            Path binary,
            EtcdVersion target,
            java.util.function.Supplier<Optional<Release>> release,
            List<String> args,
            Map<String, String> environment)
            throws WrongBinaryException, RejectedFlagException, IOException, InterruptedException {
        String key = targetKey(binary, args, environment);
        if (target.toString().equals(known.get(key))) {
            used.put(key, target.toString());
            return;
        }
        Output out = answer(key, () -> askTarget(binary, args, environment));
        if (out.exit() != 0) {
            // the catalog is read only now: a restart that passes needs none of it
            throw new RejectedFlagException(rejection(
                    target, release.get().map(r -> r.line().flagReplacements()).orElse(Map.of()), args, out));
        }
        Optional<String> reported = out.version();
        if (reported.isEmpty() || !reported.get().equals(target.toString())) {
            throw new WrongBinaryException(binary + " reports version " + reported.orElse("none") + ", not " + target
                    + ": the binary is not what its name says (nothing was changed)");
        }
        remember(key, target.toString());
    }

    /**
     * Starts {@link #targetAccepts}'s process now, unless an earlier start's answer stands; nothing is judged or kept
     * until {@link #targetAccepts} asks with the same binary, arguments and environment.
     */
    public void startAsking(Path binary, EtcdVersion target, List<String> args, Map<String, String> environment) {
        try {
            String key = targetKey(binary, args, environment);
            if (!target.toString().equals(known.get(key))) start(key, () -> askTarget(binary, args, environment));
        } catch (IOException e) {
            // targetAccepts reads the file again and reports it
        }
    }

    /**
     * Waits for every process started ahead whose question was not asked (the plan under the lock needed other
     * binaries), so none outlives the checks: the runner may become etcd next, which would never reap it.
     */
    public void awaitUnasked() throws InterruptedException {
        for (FutureTask<Output> task : asking.values()) {
            try {
                task.get();
            } catch (ExecutionException e) {
                // an answer nobody asked for: its failure is no refusal
            }
        }
    }

    private Output askTarget(Path binary, List<String> args, Map<String, String> environment)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(args);
        command.add("--version");
        return run(binary, command, environment);
    }

    private static String targetKey(Path binary, List<String> args, Map<String, String> environment)
            throws IOException {
        return key(binary, "target " + String.join("\u0000", args) + "\u0000" + answerEnvironment(environment));
    }

    /** One process per question this run: started here unless {@link #start} already did. */
    private interface Asking {
        Output run() throws IOException, InterruptedException;
    }

    private FutureTask<Output> start(String key, Asking ask) {
        FutureTask<Output> task = new FutureTask<>(ask::run);
        FutureTask<Output> earlier = asking.putIfAbsent(key, task);
        if (earlier != null) return earlier;
        Thread.ofVirtual().name("ask-binary").start(task);
        return task;
    }

    private Output answer(String key, Asking ask) throws IOException, InterruptedException {
        try {
            return start(key, ask).get();
        } catch (ExecutionException e) {
            switch (e.getCause()) {
                case IOException io -> throw io;
                case InterruptedException interrupted -> throw interrupted;
                case RuntimeException unchecked -> throw unchecked;
                case Error error -> throw error;
                default -> throw new IOException(e.getCause());
            }
        }
    }

    static String rejection(EtcdVersion target, Map<String, String> replacements, List<String> args, Output out) {
        String first =
                out.lines().stream().filter(l -> !l.isBlank()).findFirst().orElse("no output");
        for (Pattern p : List.of(UNDEFINED, INVALID)) {
            for (String line : out.lines()) {
                Matcher m = p.matcher(line);
                if (m.find()) {
                    String flag = "--" + m.group(1);
                    String replacement = replacements.get(flag);
                    return "etcd " + target + " rejects " + flag + " given after -- (\"" + line.strip() + "\")"
                            + (replacement == null ? "" : ": on " + target.line() + " use " + replacement + " instead")
                            + ". It would crash-loop after the migration, so nothing was changed";
                }
            }
        }
        return "etcd " + target + " refuses the arguments after -- " + args + " (exit " + out.exit() + ": \""
                + first.strip() + "\"). It would crash-loop after the migration, so nothing was changed";
    }

    /**
     * The variables the target's answer depends on: etcd's own (ETCD_*, ETCDCTL_*), which the exec'd etcd reads too.
     * Not the runner's (ETCD_MIGRATE_*, e.g. its JVM options): the etcd ignores them, so a change asks nothing again.
     */
    static Map<String, String> answerEnvironment(Map<String, String> environment) {
        Map<String, String> etcdVariables = new TreeMap<>(environment);
        etcdVariables
                .keySet()
                .removeIf(k -> !ChildEnvironment.isEtcdVariable(k) || ChildEnvironment.isRunnerVariable(k));
        return etcdVariables;
    }

    private void remember(String key, String version) {
        used.put(key, version);
    }

    /** The binary's identity: its real path, inode, size and mtime, and what was asked of it. */
    private static String key(Path binary, String question) throws IOException {
        Path real = binary.toRealPath();
        BasicFileAttributes a = Files.readAttributes(real, BasicFileAttributes.class);
        String identity = real + "|" + a.fileKey() + "|" + a.size() + "|"
                + a.lastModifiedTime().toMillis() + "|" + question;
        return digest(identity);
    }

    /**
     * 128 bits of two FNV-1a passes (forwards and backwards over the UTF-8 bytes). Not SHA-256: MessageDigest
     * initialises Java's whole security framework (JCA), which a restart otherwise never needs. The key only
     * names an answer in the data dir's own owner-only file; an older file's SHA-256 keys are asked once more.
     */
    static String digest(String identity) {
        byte[] b = identity.getBytes(StandardCharsets.UTF_8);
        long forwards = 0xcbf29ce484222325L;
        long backwards = 0x84222325cbf29ce4L;
        for (int i = 0; i < b.length; i++) {
            forwards = (forwards ^ (b[i] & 0xff)) * 0x100000001b3L;
            backwards = (backwards ^ (b[b.length - 1 - i] & 0xff)) * 0x100000001b3L;
        }
        return HexFormat.of().toHexDigits(forwards) + HexFormat.of().toHexDigits(backwards);
    }

    record Output(int exit, List<String> lines) {
        Optional<String> version() {
            for (String line : lines) {
                Matcher m = VERSION.matcher(line);
                if (m.find()) return Optional.of(m.group(1));
            }
            return Optional.empty();
        }

        String firstLines() {
            return String.join(" | ", lines.subList(0, Math.min(3, lines.size())));
        }
    }

    /** A bundled tool runs with the runner's environment less every ETCD_* and ETCDCTL_* variable, like a step's. */
    private Output runScrubbed(Path binary, List<String> args, Map<String, String> extraEnv)
            throws IOException, InterruptedException {
        return run(binary, args, ChildEnvironment.scrubbed(System.getenv(), extraEnv));
    }

    private Output run(Path binary, List<String> args, Map<String, String> environment)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(binary.toString());
        command.addAll(args);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().clear();
        builder.environment().putAll(environment);
        Process process = builder.start();
        children.add(process);
        try {
            // read aside, so a program that never exits cannot block past the deadline
            byte[][] bytes = new byte[1][];
            Thread reader = Thread.ofVirtual().start(() -> {
                try (InputStream in = process.getInputStream()) {
                    bytes[0] = in.readNBytes(256 * 1024); // --version prints a few lines, a usage dump a few KiB
                } catch (IOException e) {
                    bytes[0] = new byte[0];
                }
            });
            if (!process.waitFor(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException(
                        binary + " " + String.join(" ", args) + " did not finish within " + TIMEOUT.toSeconds() + " s");
            }
            reader.join(TIMEOUT.toMillis());
            byte[] read = bytes[0] == null ? new byte[0] : bytes[0];
            return new Output(
                    process.exitValue(),
                    new String(read, StandardCharsets.UTF_8).lines().toList());
        } finally {
            if (process.isAlive()) process.destroyForcibly().waitFor();
            children.remove(process);
        }
    }

    /** A binary reports another version than its name says; a usage error (exit 2), nothing touched. */
    public static final class WrongBinaryException extends dev.etcdmigrate.error.UsageException {
        public WrongBinaryException(String message) {
            super(message);
        }
    }

    /** The target etcd refuses the arguments it would be exec'd with; a usage error (exit 2), nothing touched. */
    public static final class RejectedFlagException extends dev.etcdmigrate.error.UsageException {
        public RejectedFlagException(String message) {
            super(message);
        }
    }
}
