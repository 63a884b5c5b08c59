package dev.etcdmigrate;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.cli.MigrateFlags;
import dev.etcdmigrate.cli.OutputFlags;
import dev.etcdmigrate.etcd.binary.BinDir;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/** What {@code --version} prints (Main's answer before any command runs). */
final class VersionText {

    private VersionText() {}

    /**
     * `--version`: this runner's version and the etcd versions it bundles, each marked when its binary is
     * missing, then where each present binary came from (the pins in the jar) and whether it is that build.
     */
    static String of(List<String> args) {
        String version = Optional.ofNullable(Main.class.getPackage().getImplementationVersion())
                .orElse("development build");
        StringBuilder b = new StringBuilder("etcd-migrate " + version + "\n");
        Path binDir = Path.of(OutputFlags.flagValue(args, "bin-dir").orElse(MigrateFlags.DEFAULT_BIN_DIR))
                .toAbsolutePath();
        Catalog catalog = OutputFlags.flagValue(args, "catalog")
                .map(Path::of)
                .map(Catalog::load)
                .orElseGet(Catalog::bundled);
        boolean given = OutputFlags.flagValue(args, "bin-dir").isPresent();
        b.append("bundled etcd versions (bin dir ").append(binDir).append("):");
        BinDir bins = new BinDir(binDir);
        int missing = 0;
        for (var release : catalog.releases()) {
            b.append(' ').append(release.version());
            if (!bins.hasEtcd(release.etcdVersion())) {
                b.append(" (missing)");
                missing++;
            }
        }
        b.append('\n');
        if (missing > 0) {
            // say where it looked, and that another place can be named: the default is the image's
            b.append(missing == catalog.releases().size() ? "no etcd-<version> found" : missing + " missing")
                    .append(": looked for etcd-<version> in ")
                    .append(binDir)
                    .append(given ? " (--bin-dir)" : " (the default; --bin-dir DIR names another)")
                    .append('\n');
        }
        for (var release : catalog.releases()) {
            b.append(dev.etcdmigrate.catalog.Provenance.describe(release, binDir));
        }
        return b.toString();
    }
}
