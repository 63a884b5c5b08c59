package dev.etcdmigrate.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.etcdmigrate.log.Log;
import dev.etcdmigrate.catalog.Catalog;
import dev.etcdmigrate.catalog.Release;
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
        int fetches;

        ScriptSource(String recipe) {
            this.recipe = recipe;
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
        public void fetch(Release release, Path into) throws Skipped {
            fetches++;
            try {
                for (String tool : release.toolNames()) {
                    Files.writeString(into.resolve(tool), "#!/bin/sh\necho '" + tool + " Version: " + release.version() + "'\n");
                }
            } catch (java.io.IOException e) {
                throw new Skipped(e.getMessage(), e);
            }
        }
    }

    private Provisioner provisioner(BinarySource source) {
        Log log = Log.text(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        return new Provisioner(binDir, List.of(source), List.of(), new ToolRunner(log, new Children(Duration.ofSeconds(5))), log);
    }

    @Test
    void sameRecipeIsKeptAnotherIsRebuilt() throws Exception {
        Release release = Catalog.bundled().releases().getLast();
        ScriptSource stripped = new ScriptSource("ldflags=-s -w");
        provisioner(stripped).provision(release);
        provisioner(stripped).provision(release);
        assertEquals(1, stripped.fetches, "an install by the same recipe is reused");
        assertEquals("scripts\nrecipe: ldflags=-s -w\n", Files.readString(binDir.resolve(".provisioned/" + release.version())));

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
