package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class BackendStorageVersionTest {

    // st_dev 65024 is major 254 (0xfe), minor 0: the kernel prints fe:00
    private static final long DEV = 65024;

    @Test
    void findsTheFlockOnTheFilesDeviceAndInode() {
        List<String> locks = List.of(
                "1: POSIX  ADVISORY  WRITE 111 fe:00:42 0 EOF",
                "2: FLOCK  ADVISORY  WRITE 222 fe:01:42 0 EOF",
                "3: FLOCK  ADVISORY  WRITE 333 fe:00:43 0 EOF",
                "4: FLOCK  ADVISORY  WRITE 4242 fe:00:42 0 EOF");
        assertEquals(OptionalLong.of(4242), BackendStorageVersion.lockHolder(locks, DEV, 42));
    }

    @Test
    void waitersAndOtherFilesAreNotHolders() {
        List<String> locks = List.of(
                "1: FLOCK  ADVISORY  WRITE 10 fe:00:7 0 EOF",
                "1: -> FLOCK  ADVISORY  WRITE 11 fe:00:42 0 EOF",
                "garbage line");
        assertTrue(BackendStorageVersion.lockHolder(locks, DEV, 42).isEmpty());
        assertTrue(BackendStorageVersion.lockHolder(List.of(), DEV, 42).isEmpty());
    }
}
