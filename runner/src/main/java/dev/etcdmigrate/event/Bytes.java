package dev.etcdmigrate.event;

/** Sizes as the messages print them. */
final class Bytes {
    private Bytes() {}

    /** Rounded up: a message about room needed never says less than needed. */
    static String mib(long bytes) {
        return (bytes + (1 << 20) - 1) / (1 << 20) + " MiB";
    }
}
