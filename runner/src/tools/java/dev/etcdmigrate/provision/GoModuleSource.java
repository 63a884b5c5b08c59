package dev.etcdmigrate.provision;

import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.process.ToolRunner;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Builds etcd from upstream source through the Go module proxy. etcd's own go.mod files carry
 * replace directives, so `go install MODULE@VERSION` refuses them; a throwaway wrapper module that
 * requires every etcd module at the same version (replace directives of dependencies are ignored)
 * builds each main package instead. CGO off and -trimpath for reproducible binaries; -s -w drops
 * the symbol table and DWARF (about a third of each binary), which nothing at run time reads.
 * Upstream's release build adds only -X .../api/v3/version.GitSHA from its git checkout; module zips
 * carry no git data, so that field stays at its default, as in an unstripped `go build`, and
 * {@code --version} reports what it did before. The compiler is the catalog's toolchain module, not
 * whatever Go this machine has, and every module the build reads is checked against the pins first
 * ({@link GoInputs}).
 */
final class GoModuleSource extends GoSource {

    private static final Duration BUILD_TIMEOUT = Duration.ofMinutes(30);

    GoModuleSource(GoInputs inputs, Path cacheDir, String goArch, ToolRunner tools) {
        super(inputs, cacheDir, goArch, tools);
    }

    @Override
    public String recipe() {
        return "go build -trimpath -ldflags=" + LDFLAGS + " GOARCH=" + goArch;
    }

    @Override
    public String name() {
        return "a source build through the Go module proxy";
    }

    @Override
    public void fetch(Release release, Path into, Pins pins) throws Skipped, ProvisionException {
        Release.GoModules spec = release.source(Release.GoModules.class)
                .orElseThrow(() -> new Skipped("the catalog has no Go module source for it"));
        Path work = cacheDir.resolve("go-build").resolve(release.version());
        String label = "go-" + release.version();
        inWorkDir(work, () -> {
            Path goRoot = inputs.toolchain(spec.toolchain(), pins, label);
            Path go = goRoot.resolve("bin/go");
            Files.createDirectories(work);
            Files.writeString(
                    work.resolve("go.mod"), "module etcd-migrate.invalid/build\n\ngo 1.23\n", StandardCharsets.UTF_8);
            Map<String, String> env = environment(pins, goRoot);
            List<String> get = new ArrayList<>(List.of(go.toString(), "get"));
            spec.modules().forEach(m -> get.add(m + "@" + spec.moduleVersion()));
            tools.run(label, get, env, work, BUILD_TIMEOUT);
            List<String> packages = mainPackages(release, spec.mains(), "Go module source");
            inputs.checkBuild(go, env, work, packages, pins, label);
            for (String tool : release.toolNames()) {
                pins.check("from", tool, "go:" + spec.mains().get(tool) + "@" + spec.moduleVersion());
            }
            // nothing is downloaded after the check
            env.put("GOPROXY", "off");
            env.put("GOFLAGS", "-mod=readonly");
            for (String tool : release.toolNames()) {
                tools.run(
                        label,
                        List.of(
                                go.toString(),
                                "build",
                                "-trimpath",
                                "-ldflags",
                                LDFLAGS,
                                "-o",
                                into.resolve(tool).toString(),
                                spec.mains().get(tool)),
                        env,
                        work,
                        BUILD_TIMEOUT);
            }
        });
    }
}
