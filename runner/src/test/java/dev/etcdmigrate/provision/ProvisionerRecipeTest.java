package dev.etcdmigrate.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.process.ToolRunner;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The install stamp carries the source's recipe: a bin dir made by another recipe is provisioned again. */
class ProvisionerRecipeTest {

    @TempDir
    Path binDir;

    /** Writes shell scripts that answer like the release's tools; counts its fetches. */
    static final class ScriptSource implements BinarySource {
        final String recipe;
        final boolean pinned;
        int fetches;

        ScriptSource(String recipe) {
            this(recipe, false);
        }

        ScriptSource(String recipe, boolean pinned) {
            this.recipe = recipe;
            this.pinned = pinned;
        }

        @Override
        public boolean pinned() {
            return pinned;
        }

        @Override
        public String name() {
            return "scripts";
        }

        @Override
        public String recipe() {
            return recipe;
        }

        @Override
        public void fetch(Release release, Path into, Pins pins) throws Skipped {
            fetches++;
            try {
                for (String tool : release.toolNames()) {
                    Files.writeString(into.resolve(tool), script(release, tool));
                }
            } catch (java.io.IOException e) {
                throw new Skipped(e.getMessage(), e);
            }
        }
    }

    private Provisioner provisioner(BinarySource source) {
        return provisioner(source, "");
    }

    private Provisioner provisioner(BinarySource source, String pins) {
        Log log = Log.text(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        return new Provisioner(
                binDir,
                List.of(source),
                List.of(),
                new ToolRunner(log, new Children(Duration.ofSeconds(5))),
                log,
                release -> Pins.of(release.version(), "linux/amd64", pins));
    }

    private static String script(Release release, String tool) {
        return "#!/bin/sh\necho '" + tool + " Version: " + release.version() + "'\n";
    }

    private static String sha256(String text) throws Exception {
        return java.util.HexFormat.of()
                .formatHex(java.security.MessageDigest.getInstance("SHA-256")
                        .digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    /** A pins file naming each of the release's tools with the hash of its fake binary. */
    private static String matchingPins(Release release) throws Exception {
        StringBuilder pins = new StringBuilder();
        for (String tool : release.toolNames())
            pins.append("bin ")
                    .append(tool)
                    .append(" sha256:")
                    .append(sha256(script(release, tool)))
                    .append('\n');
        return pins.toString();
    }

    private void assertNothingInstalled() throws Exception {
        try (var left = Files.list(binDir)) {
            assertEquals(List.of(), left.map(p -> p.getFileName().toString()).toList(), "nothing installed");
        }
    }

    @Test
    void binariesThatMatchTheirPinsAreInstalledAndCounted() throws Exception {
        Release release = Catalog.bundled().releases().getLast();
        String pins = matchingPins(release);
        ScriptSource source = new ScriptSource("r", true);
        Pins checked = provisioner(source, pins).provision(release);
        assertEquals(release.toolNames().size(), checked.checked());
        for (String tool : release.toolNames()) {
            assertEquals(script(release, tool), Files.readString(binDir.resolve(tool + "-" + release.version())));
        }
        Pins again = provisioner(source, pins).provision(release);
        assertEquals(1, source.fetches, "a matching install is kept");
        assertEquals(release.toolNames().size(), again.checked(), "and its binaries checked again");
    }

    /** Installed binaries that are not the pinned ones (an older build) are built again and then match. */
    @Test
    void anInstallThatDiffersFromItsPinsIsProvisionedAgain() throws Exception {
        Release release = Catalog.bundled().releases().getLast();
        String pins = matchingPins(release);
        ScriptSource source = new ScriptSource("r", true);
        provisioner(source, pins).provision(release);
        Files.writeString(binDir.resolve("etcd-" + release.version()), script(release, "etcd") + "# an older build\n");
        Pins again = provisioner(source, pins).provision(release);
        assertEquals(2, source.fetches, "built again");
        assertEquals(release.toolNames().size(), again.checked(), "the new build's binaries, each once");
        assertEquals(script(release, "etcd"), Files.readString(binDir.resolve("etcd-" + release.version())));
    }

    @Test
    void aBinaryThatDiffersFromItsPinInstallsNothing() throws Exception {
        Release release = Catalog.bundled().releases().getLast();
        // etcdctl pinned to a hash no binary has
        String pins = matchingPins(release).replace(sha256(script(release, "etcdctl")), "0".repeat(64));
        ProvisionException e = org.junit.jupiter.api.Assertions.assertThrows(
                ProvisionException.class,
                () -> provisioner(new ScriptSource("r", true), pins).provision(release));
        org.junit.jupiter.api.Assertions.assertTrue(
                e.getMessage().contains("etcdctl")
                        && e.getMessage().contains("0".repeat(64))
                        && e.getMessage().contains(sha256(script(release, "etcdctl"))),
                e.getMessage());
        assertNothingInstalled();
    }

    @Test
    void aBinaryWithoutAPinInstallsNothing() throws Exception {
        Release release = Catalog.bundled().releases().getLast();
        org.junit.jupiter.api.Assertions.assertThrows(
                ProvisionException.class,
                () -> provisioner(new ScriptSource("r", true), "").provision(release));
        assertNothingInstalled();
    }

    @Test
    void sameRecipeIsKeptAnotherIsRebuilt() throws Exception {
        Release release = Catalog.bundled().releases().getLast();
        ScriptSource stripped = new ScriptSource("ldflags=-s -w");
        provisioner(stripped).provision(release);
        provisioner(stripped).provision(release);
        assertEquals(1, stripped.fetches, "an install by the same recipe is reused");
        assertEquals(
                "scripts\nrecipe: ldflags=-s -w\n",
                Files.readString(binDir.resolve(".provisioned/" + release.version())));

        ScriptSource other = new ScriptSource("ldflags=-s -w -X x");
        provisioner(other).provision(release);
        assertEquals(1, other.fetches, "an install by another recipe is provisioned again");
    }

    @Test
    void aStampFromBeforeRecipesIsRebuiltWhenTheSourceHasOne() throws Exception {
        Release release = Catalog.bundled().releases().getLast();
        ScriptSource old = new ScriptSource("");
        provisioner(old).provision(release);
        assertEquals("scripts\n", Files.readString(binDir.resolve(".provisioned/" + release.version())));
        provisioner(old).provision(release);
        assertEquals(1, old.fetches, "a recipe-less source keeps its recipe-less stamps (tarballs, Debian packages)");

        ScriptSource stripped = new ScriptSource("ldflags=-s -w");
        provisioner(stripped).provision(release);
        assertEquals(1, stripped.fetches, "an unstripped install from before recipes is rebuilt");
    }
}
