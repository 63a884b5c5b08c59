package dev.etcdmigrate.etcd.server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Loopback ports free right now, for demos and tests that must not assume 2379/2380 are free.
 *
 * <p>Chosen outside the kernel's ephemeral range where there is room: a port from that range, once
 * released, can be handed to any outgoing connection as its local port before the etcd meant for it
 * binds it ("address already in use"); ports outside the range are never given out that way. Room is a
 * gap of at least 1000 ports below the range (from 15000) or above it (to 65535); with no gap, the
 * kernel's reserved ports (ip_local_reserved_ports: never handed out automatically, an explicit bind
 * works; {@code .ci/run} reserves a block when the machine has no gap); only then whatever the kernel
 * gives for port 0.
 */
public final class FreePorts {

    private static final Path EPHEMERAL_RANGE = Path.of("/proc/sys/net/ipv4/ip_local_port_range");
    private static final Path RESERVED_PORTS = Path.of("/proc/sys/net/ipv4/ip_local_reserved_ports");
    private static final int LOWEST = 15000;
    private static final int HIGHEST = 65535;
    private static final int ROOM = 1000;
    private static final int ATTEMPTS = 200;

    private FreePorts() {}

    public static ServerPorts pick() {
        Pool pool = Pool.of(read(EPHEMERAL_RANGE), read(RESERVED_PORTS));
        int client = pickOne(pool, -1);
        return new ServerPorts(client, pickOne(pool, client));
    }

    static int pickOne(Pool pool, int not) {
        if (pool.size() > 0) {
            for (int i = 0; i < ATTEMPTS; i++) {
                int port = pool.port(ThreadLocalRandom.current().nextInt(pool.size()));
                if (port != not && bindable(port)) {
                    return port;
                }
            }
        }
        // no room outside the range, or all tried were taken: let the kernel choose, never the port already picked
        for (int i = 0; ; i++) {
            try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                if (socket.getLocalPort() != not || i == ATTEMPTS) return socket.getLocalPort();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    /**
     * The file's text; empty when it cannot be read (not Linux, no /proc). Read as a stream: a /proc/sys file says
     * its size is 0, and JDK 25's Files.readString then returned only its first byte.
     */
    static String read(Path file) {
        try (java.io.InputStream in = Files.newInputStream(file)) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            return "";
        }
    }

    /**
     * The ports to choose from, as inclusive ranges: the gaps of {@value #ROOM}+ ports below and above the
     * ephemeral range; with neither, the reserved ports from {@value #LOWEST} up (below that live the
     * well-known services the reservation may be for); empty when there is nothing to choose from.
     */
    record Pool(List<int[]> ranges) {

        static Pool of(String ephemeralRange, String reservedPorts) {
            List<int[]> ranges = new ArrayList<>();
            int[] range = parseRange(ephemeralRange);
            if (range != null) {
                if (range[0] - LOWEST >= ROOM) ranges.add(new int[] {LOWEST, range[0] - 1});
                if (HIGHEST - range[1] >= ROOM) ranges.add(new int[] {range[1] + 1, HIGHEST});
            }
            if (ranges.isEmpty()) {
                for (int[] reserved : parseReserved(reservedPorts)) {
                    int from = Math.max(reserved[0], LOWEST);
                    int to = Math.min(reserved[1], HIGHEST);
                    if (from <= to) ranges.add(new int[] {from, to});
                }
            }
            return new Pool(List.copyOf(ranges));
        }

        int size() {
            int size = 0;
            for (int[] r : ranges) size += r[1] - r[0] + 1;
            return size;
        }

        /** The index-th port of the pool, 0 <= index < size(). */
        int port(int index) {
            for (int[] r : ranges) {
                int length = r[1] - r[0] + 1;
                if (index < length) return r[0] + index;
                index -= length;
            }
            throw new IndexOutOfBoundsException(index);
        }

        /** "32768\t60999" as {32768, 60999}; null when it is not two ports in order. */
        private static int[] parseRange(String text) {
            String[] parts = text.trim().split("\\s+");
            if (parts.length != 2) return null;
            try {
                int start = Integer.parseInt(parts[0]);
                int end = Integer.parseInt(parts[1]);
                return start >= 1 && start <= end && end <= HIGHEST ? new int[] {start, end} : null;
            } catch (NumberFormatException e) {
                return null;
            }
        }

        /** "8080,20000-24999" as {8080, 8080}, {20000, 24999}; an entry that is not a port or range is skipped. */
        private static List<int[]> parseReserved(String text) {
            List<int[]> reserved = new ArrayList<>();
            for (String entry : text.trim().split(",")) {
                String[] bounds = entry.trim().split("-", -1);
                try {
                    int from = Integer.parseInt(bounds[0].trim());
                    int to = bounds.length == 2 ? Integer.parseInt(bounds[1].trim()) : from;
                    if (bounds.length <= 2 && from >= 1 && from <= to && to <= HIGHEST)
                        reserved.add(new int[] {from, to});
                } catch (NumberFormatException e) {
                    // empty file or a malformed entry: nothing reserved there
                }
            }
            return reserved;
        }
    }
}
