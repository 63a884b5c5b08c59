package dev.etcdmigrate.provision;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** `provision`'s default cache dir is `~/.cache/etcd-migrate` as its help says and the scripts read it: ~ is $HOME. */
class ProvisionCacheDirTest {

    @Test
    void homeFromTheEnvironmentWinsOverThePasswdEntry() {
        assertEquals(
                Path.of("/tmp/ci-home/.cache/etcd-migrate"), ProvisionCommand.defaultCacheDir("/tmp/ci-home", "/root"));
    }

    @Test
    void withoutHomeThePasswdEntry() {
        assertEquals(Path.of("/root/.cache/etcd-migrate"), ProvisionCommand.defaultCacheDir(null, "/root"));
        assertEquals(Path.of("/root/.cache/etcd-migrate"), ProvisionCommand.defaultCacheDir(" ", "/root"));
    }
}
