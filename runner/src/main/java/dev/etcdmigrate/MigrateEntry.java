package dev.etcdmigrate;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.CatalogSource;
import dev.etcdmigrate.cli.Flag;
import dev.etcdmigrate.cli.Help;
import dev.etcdmigrate.cli.MigrateFlags;
import dev.etcdmigrate.cli.OutputFlags;
import dev.etcdmigrate.cli.ParsedArgs;
import dev.etcdmigrate.config.RunConfig;
import dev.etcdmigrate.config.Topology;
import dev.etcdmigrate.decide.DataDirState;
import dev.etcdmigrate.decide.MembersFromData;
import dev.etcdmigrate.error.ExitStatus;
import dev.etcdmigrate.error.MigrateException;
import dev.etcdmigrate.etcd.binary.BinDir;
import dev.etcdmigrate.etcd.binary.BinaryCheck;
import dev.etcdmigrate.event.RunEvent;
import dev.etcdmigrate.exec.DataDirOwner;
import dev.etcdmigrate.exec.Execve;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.log.RunTally;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.run.Migration;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * {@code etcd-migrate [migrate]}, every restart's path: the run reported and tallied, the data dir taken as its
 * owner's, the members the data records applied (kubeadm's first node: its flag names only itself), the migration
 * run under its lock, then the target etcd exec'd in this process's place.
 */
final class MigrateEntry implements Command {

    /** migrate's flags and the output flags. */
    static final List<Flag> FLAGS = OutputFlags.with(MigrateFlags.FLAGS);

    @Override
    public String help() {
        return Help.migrate(FLAGS);
    }

    @Override
    public int run(List<String> args, Map<String, String> environment, Log log, Children children) throws Exception {
        ParsedArgs parsed = ParsedArgs.parse(FLAGS, args, environment).withoutPositional("migrate");
        RunConfig given = MigrateFlags.read(parsed);
        RunTally tally = RunTally.sinceProcessStart();
        log.emit(new RunEvent.RunStarted(
                "migrate",
                given.dataDir().toString(),
                given.target().toString(),
                given.binDir().toString()));
        log.subscribe(tally);
        try {
            return migrate(given, parsed, log, children, tally);
        } catch (MigrateException e) {
            log.emit(tally.summary(e.status() == ExitStatus.FAILED ? "failed" : "refused", e.exitCode()));
            throw e;
        } catch (Exception e) {
            log.emit(tally.summary("failed", ExitStatus.FAILED.code()));
            throw e;
        } finally {
            log.unsubscribe(tally);
        }
    }

    private static int migrate(RunConfig given, ParsedArgs args, Log log, Children children, RunTally tally)
            throws Exception {
        // linking execve (started by Main once the command was known) runs while the data is read and judged
        FutureTask<Execve> linking = given.noExec() ? null : Execve.linkAhead();
        DataDirOwner.become(given.dataDir(), log);
        // read once for both: the catalog depends on the flags, not on the members the data records
        Catalog[] read = new Catalog[1];
        CatalogSource catalog = () -> read[0] != null ? read[0] : (read[0] = RunCatalog.of(given));
        // the target's binary question and the walk of every db page run while the members are read from the WAL
        // (the question is judged under the lock, the walk's finding reused by the decision's read)
        BinaryCheck binaries = new Migration(given, catalog, log, children, args.environment()).askTargetAhead();
        DataDirState.checkDbAhead(given);
        RunConfig options = MembersFromData.resolve(given, log);
        tally.clusterMember(options.topology() instanceof Topology.Member);
        // the lock stays held until exec, which closes it; etcd's own WAL lock takes over
        try (Migration.Done done =
                new Migration(options, catalog, log, children, args.environment()).migrate(binaries)) {
            log.emit(tally.summary(tally.successOutcome(), ExitStatus.OK.code()));
            if (options.noExec()) {
                log.emit(new RunEvent.NoExec(
                        options.dataDir().toString(), options.target().toString()));
                return ExitStatus.OK.code();
            }
            Path etcd = new BinDir(options.binDir()).etcd(options.target().version());
            List<String> argv = new ArrayList<>();
            argv.add(etcd.toString());
            argv.addAll(done.etcdArgs()); // in the target line's spelling (EtcdWiring.argsFor)
            Execve execve = linked(linking);
            execve.defaultSignals(); // a SIGTERM from now on ends the process, as it would end etcd
            log.emit(new RunEvent.Exec(etcd.toString(), argv));
            log.flush();
            execve.exec(etcd, argv, args.environment());
            return ExitStatus.FAILED.code(); // not reached: exec either replaced this process or threw
        }
    }

    private static Execve linked(FutureTask<Execve> linking) throws Exception {
        try {
            return linking.get();
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }
}
