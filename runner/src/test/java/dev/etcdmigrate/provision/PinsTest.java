package dev.etcdmigrate.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PinsTest {

    private static final String TEXT = """
            # comment
            go example.com/m@v1.0.0 h1:AAAA
            go.mod example.com/m@v1.0.0 h1:BBBB
            bin etcd sha256:cccc
            """;

    @Test
    void aMatchingHashIsCountedADifferingOneNamesBoth() throws Exception {
        Pins pins = Pins.of("3.6.16", "linux/amd64", TEXT);
        pins.check("go", "example.com/m@v1.0.0", "h1:AAAA");
        assertEquals(1, pins.checked());
        ProvisionException e = assertThrows(ProvisionException.class, () -> pins.check("bin", "etcd", "sha256:dddd"));
        assertTrue(
                e.getMessage().contains("built binary etcd")
                        && e.getMessage().contains("expected sha256:cccc, got sha256:dddd"),
                e.getMessage());
        ProvisionException missing =
                assertThrows(ProvisionException.class, () -> pins.check("go", "example.com/other@v2.0.0", "h1:EEEE"));
        assertTrue(
                missing.getMessage().contains("example.com/other@v2.0.0 (h1:EEEE) is not pinned"),
                missing.getMessage());
    }

    @Test
    void badLinesAndTwicePinnedNamesAreRejected() {
        assertThrows(IllegalArgumentException.class, () -> Pins.parse("tarball x sha256:1\n", "f"));
        assertThrows(IllegalArgumentException.class, () -> Pins.parse("go a@v1 h1:x extra\n", "f"));
        assertThrows(IllegalArgumentException.class, () -> Pins.parse("bin etcd sha256:1\nbin etcd sha256:2\n", "f"));
    }

    @Test
    void withoutAPinsFileEveryInputIsRefused(@TempDir Path dir) throws Exception {
        Pins pins = Pins.load(Optional.of(dir), "3.6.16", "linux/amd64", false);
        ProvisionException e = assertThrows(ProvisionException.class, () -> pins.check("bin", "etcd", "sha256:1"));
        assertTrue(
                e.getMessage()
                        .contains(dir.resolve(Pins.fileName("3.6.16", "linux/amd64"))
                                .toString()),
                e.getMessage());
    }

    @Test
    void recordingWritesTheSeenHashesAndTheDiffAgainstTheOldOnes(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("3.6.16"));
        Files.writeString(dir.resolve(Pins.fileName("3.6.16", "linux/amd64")), TEXT);
        Pins pins = Pins.load(Optional.of(dir), "3.6.16", "linux/amd64", true);
        pins.check("go", "example.com/m@v1.0.0", "h1:AAAA");
        pins.check("go.mod", "example.com/m@v1.0.0", "h1:BBBB");
        pins.check("bin", "etcd", "sha256:ffff");
        assertEquals("- bin etcd sha256:cccc\n+ bin etcd sha256:ffff\n", pins.diff());
        assertTrue(
                pins.recordedText()
                        .endsWith(
                                "go example.com/m@v1.0.0 h1:AAAA\ngo.mod example.com/m@v1.0.0 h1:BBBB\nbin etcd sha256:ffff\n"),
                pins.recordedText());
        ProvisionException twice =
                assertThrows(ProvisionException.class, () -> pins.check("go", "example.com/m@v1.0.0", "h1:ZZZZ"));
        assertTrue(
                twice.getMessage().contains("example.com/m@v1.0.0")
                        && twice.getMessage().contains("h1:ZZZZ"),
                twice.getMessage());
    }

    /** A module cache copy that differs from go.sum: which hash is pinned, which was found where, how to refetch. */
    @Test
    void twoHashesOfAModuleSayWhichIsPinnedWhichWasFoundWhereAndHowToRefetch() throws Exception {
        Pins pins = Pins.of("3.6.16", "linux/amd64", TEXT);
        Path cache = Path.of("/cache/go/pkg/mod/example.com/m@v1.0.0");
        pins.check("go", "example.com/m@v1.0.0", "h1:AAAA", Pins.Source.of("/build/go.sum"));
        ProvisionException e = assertThrows(
                ProvisionException.class,
                () -> pins.check("go", "example.com/m@v1.0.0", "h1:ZZZZ", Pins.Source.dir("Go's module cache", cache)));
        String m = e.getMessage();
        assertTrue(m.contains("Go module example.com/m@v1.0.0 has two hashes"), m);
        assertTrue(m.contains("pinned h1:AAAA in (given) (and so says /build/go.sum)"), m);
        assertTrue(m.contains("found h1:ZZZZ in Go's module cache (" + cache + ")"), m);
        assertTrue(m.contains("rm -rf " + cache) && m.contains("provision` again"), m);
    }
}
