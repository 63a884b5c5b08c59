package dev.etcdmigrate.provision;

import dev.etcdmigrate.catalog.Release;
import java.nio.file.Path;

/** One way to obtain a release's binaries. */
interface BinarySource {

    String name();

    /**
     * How this source makes the binaries (e.g. the Go build flags and platform), written into the
     * install stamp: a bin dir filled by an older recipe is provisioned again. Empty when the bytes
     * are taken as published (tarballs, packages).
     */
    default String recipe() {
        return "";
    }

    /**
     * Writes the release's tools (etcd, etcdctl, and etcdutl where the line has it) into {@code into}
     * under their plain names.
     *
     * @throws Skipped when this source does not apply or cannot be reached: the next source is tried
     * @throws ProvisionException when what it obtained must not be trusted (e.g. a checksum mismatch)
     */
    void fetch(Release release, Path into) throws Skipped, ProvisionException;

    /** Not applicable or not reachable; the reason is logged and the next source tried. */
    final class Skipped extends Exception {
        Skipped(String reason) {
            super(reason);
        }

        Skipped(String reason, Throwable cause) {
            super(reason, cause);
        }
    }
}
