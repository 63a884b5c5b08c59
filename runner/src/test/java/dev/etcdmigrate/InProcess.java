package dev.etcdmigrate;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Runs {@link Main} in the test's JVM (for suites that run it hundreds of times, where a process per run
 * would cost the JVM's start each time): its exit status, stdout and stderr. One run at a time (stdout is
 * the process's).
 */
public final class InProcess {

    public record Result(int exit, String out, String err) {}

    private InProcess() {}

    public static synchronized Result run(List<String> args, Map<String, String> environment) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        int exit;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            System.setOut(o);
            try {
                exit = Main.run(args, environment, e);
            } finally {
                System.setOut(stdout);
            }
        }
        return new Result(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
