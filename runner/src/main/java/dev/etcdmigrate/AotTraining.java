package dev.etcdmigrate;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.datadir.Permissions;
import dev.etcdmigrate.datadir.Trees;
import dev.etcdmigrate.exec.Execve;
import dev.etcdmigrate.plan.Planner;
import dev.etcdmigrate.version.DataVersion;
import dev.etcdmigrate.version.StorageApi;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;

/**
 * The training run behind the runner's AOT cache (JDK 25, -XX:AOTCacheOutput), made at build time:
 * it walks the no-op restart path (options, version.txt, the at-target check), links execve without
 * calling it, and plans with the catalog, so those classes come loaded and linked at start. It
 * touches only a temp dir and starts no process.
 */
public final class AotTraining {

    private AotTraining() {}

    public static void main(String[] args) throws Exception {
        Path work = Files.createTempDirectory("etcd-migrate-aot");
        try {
            Catalog catalog = Catalog.bundled();
            Release newest = catalog.releases().getLast();
            Path bin = Permissions.ownerOnlyDir(work.resolve("bin"));
            Files.createFile(bin.resolve("etcd-" + newest.version()), PosixFilePermissions.asFileAttribute(
                    PosixFilePermissions.fromString("rwx------")));
            Path data = Permissions.ownerOnlyDir(work.resolve("data"));
            // the layout the data dir checks expect of etcd3 data: a backend and a WAL
            Files.createDirectories(data.resolve("member/snap"));
            Files.createFile(data.resolve("member/snap/db"));
            Files.createDirectories(data.resolve("member/wal"));
            Files.createFile(data.resolve("member/wal/0000000000000000-0000000000000000.wal"));
            Files.writeString(data.resolve("version.txt"), newest.version() + "/etcd3");
            int code = Main.run(List.of("--data-dir", data.toString(), "--bin-dir", bin.toString(), "--target-version",
                    newest.version(), "--name", "training", "--no-exec"), Map.of(), new PrintStream(OutputStream.nullOutputStream()));
            if (code != 0) {
                throw new IllegalStateException("the training migration exited with " + code);
            }
            Execve.link();
            new Planner(catalog).plan(new DataVersion(catalog.releases().get(catalog.releases().size() - 2).etcdVersion(),
                    StorageApi.ETCD3), new DataVersion(newest.etcdVersion(), StorageApi.ETCD3));
        } finally {
            Trees.deleteRecursively(work);
        }
    }
}
