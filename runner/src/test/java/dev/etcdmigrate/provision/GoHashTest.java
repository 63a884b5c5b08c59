package dev.etcdmigrate.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Go's h1 as the runner computes it. Expected values from coreutils, by dirhash's definition:
 * {@code for f in NAMES-SORTED; do printf '%s  %s\n' "$(sha256sum f)" "example.com/m@v1.0.0/f"; done | sha256sum | xxd -r -p | base64}.
 * (Against Go itself: a 3.6.16 provisioning compares 73 module directories with the go.sum Go wrote.)
 */
class GoHashTest {

    @Test
    void moduleDirectory(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("a.go"), "package a\n");
        Files.createDirectories(dir.resolve("sub"));
        Files.writeString(dir.resolve("sub/b.txt"), "b\n");
        assertEquals(
                "h1:afIbF5YUlfKMvL3R3kF3xdYLJYb6yndTVZEu9JX51hw=", GoHash.ofModuleDir(dir, "example.com/m@v1.0.0"));
        Files.writeString(dir.resolve("sub/b.txt"), "c\n");
        assertNotEquals(
                "h1:afIbF5YUlfKMvL3R3kF3xdYLJYb6yndTVZEu9JX51hw=",
                GoHash.ofModuleDir(dir, "example.com/m@v1.0.0"),
                "one changed byte");
    }

    @Test
    void goModFile(@TempDir Path dir) throws Exception {
        Path mod = Files.writeString(dir.resolve("x.mod"), "module example.com/m\n");
        assertEquals("h1:flS2VctbRrTv+sBE+VKgxx6hlkMGPVz9MGOmzMYFg3k=", GoHash.ofGoMod(mod));
    }
}
