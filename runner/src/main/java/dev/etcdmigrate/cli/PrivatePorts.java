package dev.etcdmigrate.cli;

import java.nio.file.Path;

/**
 * The private etcd's default loopback ports, as the Kubernetes etcd image chose them: a control plane's
 * second etcd (for Kubernetes events) keeps its data in a dir whose path names "event" and gets the next
 * ports, so both members of one host can migrate at the same time.
 */
record PrivatePorts(int client, int peer) {

    static final PrivatePorts MAIN = new PrivatePorts(18629, 2380);
    static final PrivatePorts EVENTS = new PrivatePorts(18631, 2381);
    static final String EVENTS_MARK = "event";

    static PrivatePorts forDataDir(Path dataDir) {
        return dataDir.toString().contains(EVENTS_MARK) ? EVENTS : MAIN;
    }

    /** The --port / --peer-port default as --help says it. */
    static String defaultText(int main, int events) {
        return main + ", or " + events + " when the data dir path contains '" + EVENTS_MARK + "'";
    }
}
