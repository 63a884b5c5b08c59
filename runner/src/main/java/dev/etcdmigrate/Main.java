package dev.etcdmigrate;

import dev.etcdmigrate.cli.Help;
import dev.etcdmigrate.cli.MigrateFlags;
import dev.etcdmigrate.cli.Nearest;
import dev.etcdmigrate.cli.OutputFlags;
import dev.etcdmigrate.cli.ToolCommand;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.FailedException;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.error.Reason;
import dev.etcdmigrate.error.UsageException;
import dev.etcdmigrate.event.RunEvent;
import dev.etcdmigrate.exec.Execve;
import dev.etcdmigrate.exec.TerminationLog;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Entry point: answers --help and --version, picks the {@link Command} its first word names (migrate when there is
 * none; a tool beside the runner, {@link ToolCommand}, for a word that is none of the runner's) and maps the one
 * exception root to the exit status.
 */
public final class Main {

    private Main() {}

    static final List<String> COMMANDS = List.of("migrate", "plan", "inspect", "status", "help");

    public static void main(String[] args) {
        System.exit(run(List.of(args), System.getenv(), System.err));
    }

    static int run(List<String> args, Map<String, String> environment, PrintStream err) {
        return run(args, environment, System.out, err);
    }

    /** {@code out} gets what a command prints as its answer (help, --version, plan, inspect, status); {@code err} the diary. */
    static int run(List<String> args, Map<String, String> environment, PrintStream out, PrintStream err) {
        List<String> before = args.contains("--") ? args.subList(0, args.indexOf("--")) : args;
        if (before.contains("--help")
                || before.contains("-h")
                || !args.isEmpty() && args.getFirst().equals("help")) {
            Optional<String> help = helpText(before);
            if (help.isPresent()) {
                out.print(help.get());
                return ExitStatus.OK.code();
            }
        } else if (before.contains("--version")) {
            out.print(VersionText.of(before));
            return ExitStatus.OK.code();
        }
        boolean named = !args.isEmpty() && !args.getFirst().startsWith("-");
        String word = named ? args.getFirst() : "migrate";
        if (word.equals("migrate") && !before.contains("--no-exec")) Execve.linkAhead(); // before the flags are read
        Log log;
        try {
            OutputFlags output = OutputFlags.read(before, environment);
            log = Log.of(output.format(), output.etcdOutput(), err);
        } catch (UsageException e) {
            return fail(Log.text(err), before, e);
        }
        try {
            // help reaches here only for a command it does not know, the one to refuse
            if (word.equals("help") && args.size() > 1) throw unknown(args.get(1));
            Command command = command(word, out).orElseThrow(() -> unknown(word));
            Children children = new Children(Duration.ofSeconds(10)).installShutdownHook();
            return command.run(named ? args.subList(1, args.size()) : args, environment, log, children);
        } catch (MigrateException e) {
            return fail(log, before, e);
        } catch (Exception e) {
            // not one of ours (a bug, or a library's unchecked failure): still a failed run with its reason
            return fail(log, before, new FailedException(Reason.of(e), e));
        } finally {
            log.flush();
        }
    }

    /** The command a word names; the tools' jar is looked into only for a word that is none of the runner's. */
    private static Optional<Command> command(String word, PrintStream out) {
        return switch (word) {
            case "migrate" -> Optional.of(new MigrateEntry());
            case "plan" -> Optional.of(new PlanEntry(out));
            case "inspect" -> Optional.of(new InspectEntry(out));
            case "status" -> Optional.of(new StatusEntry(out));
            default ->
                ToolCommand.installed().stream()
                        .filter(c -> c.name().equals(word))
                        .findFirst()
                        .map(ToolEntry::new);
        };
    }

    private static UsageException unknown(String word) {
        List<ToolCommand> tools = ToolCommand.installed();
        List<String> known = new ArrayList<>(COMMANDS);
        tools.forEach(c -> known.add(c.name()));
        return new UsageException("unknown command '" + word + "'"
                + Nearest.to(word, known).map(n -> ": did you mean " + n + "?").orElse("")
                + " (commands: " + String.join(", ", known) + "; see --help"
                + (tools.isEmpty()
                        ? "; provision and demo are not part of the image: run them from a source tree's"
                                + " runner/target/etcd-migrate"
                        : "")
                + "); nothing was changed");
    }

    /**
     * The help a command asks for: {@code COMMAND --help}, {@code COMMAND -h} or {@code help COMMAND} print that
     * command's own; {@code --help} or {@code help} alone the overview. Empty for an unknown command, which is then
     * refused as any unknown command is.
     */
    static Optional<String> helpText(List<String> before) {
        // the command is the first word, as in dispatch; flags first (--help alone) mean the overview
        String word = before.isEmpty() || before.getFirst().startsWith("-") ? "" : before.getFirst();
        if (word.equals("help")) word = before.size() > 1 && !before.get(1).startsWith("-") ? before.get(1) : "";
        if (word.isEmpty()) return Optional.of(Help.text(ToolCommand.installed()));
        return command(word, System.out).map(Command::help);
    }

    /** Reports why the run ends and leaves it where Kubernetes shows it (the container's termination message). */
    private static int fail(Log log, List<String> args, MigrateException e) {
        String reason = e.status() != ExitStatus.REFUSED
                ? e.getMessage()
                : "refused: " + e.getMessage()
                        + (e.getMessage().contains("nothing was changed") ? "" : " (nothing was changed)");
        log.emit(
                e.status() == ExitStatus.FAILED
                        ? new RunEvent.Failed(e.exitCode(), reason)
                        : new RunEvent.Refused(e.exitCode(), reason));
        TerminationLog.write(
                Path.of(OutputFlags.flagValue(args, "termination-log").orElse(MigrateFlags.DEFAULT_TERMINATION_LOG)),
                reason);
        return e.exitCode();
    }
}
