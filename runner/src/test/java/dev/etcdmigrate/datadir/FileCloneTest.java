package dev.etcdmigrate.datadir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** On a file system without clones (the build's ext4 or tmpfs) FileClone says so and leaves nothing; Trees copies. XFS: ReflinkBackupIT. */
class FileCloneTest {

    @Test
    void withoutCloneSupportNothingIsLeftAndTreesStillCopy(@TempDir Path dir) throws Exception {
        String type = Files.getFileStore(dir).type();
        org.junit.jupiter.api.Assumptions.assumeTrue(
                type.equals("ext4") || type.equals("tmpfs"), "needs a file system without clones, got " + type);
        assertFalse(FileClone.supported(dir));
        Path source = Files.createDirectories(dir.resolve("src/sub"));
        Files.write(source.resolve("f"), new byte[] {1, 2, 3});
        assertFalse(FileClone.clone(source.resolve("f"), dir.resolve("clone")));
        try (Stream<Path> left = Files.list(dir)) {
            assertEquals(1, left.count(), "only src/ is left");
        }
        Trees.copy(dir.resolve("src"), dir.resolve("copy"));
        assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(dir.resolve("copy/sub/f")));
    }
}
