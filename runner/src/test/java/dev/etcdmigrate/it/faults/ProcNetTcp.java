package dev.etcdmigrate.it.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The Linux kernel's socket tables /proc/net/tcp and /proc/net/tcp6, parsed: which socket inode is
 * bound to which local address, and whether it listens (state 0A). The kernel prints each 32-bit
 * word of an address as a hex number in host byte order, so the bytes of 127.0.0.1 read 0100007F
 * on a little-endian machine.
 */
final class ProcNetTcp {

    /** TCP_LISTEN in the kernel's tcp_states.h, as /proc/net/tcp prints it. */
    static final String LISTEN = "0A";

    record Socket(long inode, InetAddress address, int port, boolean listening) {
        boolean loopback() {
            return address.isLoopbackAddress();
        }

        @Override
        public String toString() {
            return (address.getAddress().length == 16 ? "[" + address.getHostAddress() + "]" : address.getHostAddress())
                    + ":" + port;
        }
    }

    private ProcNetTcp() {}

    /** Every socket of both tables of this process's network namespace. */
    static List<Socket> read() {
        List<Socket> all = new ArrayList<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            try {
                all.addAll(parse(Files.readString(Path.of(table)), ByteOrder.nativeOrder()));
            } catch (NoSuchFileException e) {
                // no IPv6 in this kernel: nothing can listen there
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return all;
    }

    /** The rows of one table (its header line skipped), words read in the given byte order. */
    static List<Socket> parse(String table, ByteOrder order) {
        List<Socket> sockets = new ArrayList<>();
        for (String line : table.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 10 || !f[0].endsWith(":")) {
                continue; // the header, or a blank line
            }
            String[] local = f[1].split(":");
            sockets.add(new Socket(
                    Long.parseLong(f[9]),
                    address(local[0], order),
                    Integer.parseInt(local[1], 16),
                    f[3].equals(LISTEN)));
        }
        return sockets;
    }

    private static InetAddress address(String hex, ByteOrder order) {
        if (hex.length() != 8 && hex.length() != 32) {
            throw new IllegalArgumentException("not an address of /proc/net/tcp: " + hex);
        }
        ByteBuffer bytes = ByteBuffer.allocate(hex.length() / 2);
        for (int i = 0; i < hex.length(); i += 8) {
            int word = (int) Long.parseLong(hex.substring(i, i + 8), 16);
            // the word was printed as the native int holding the address bytes in network order
            bytes.put(ByteBuffer.allocate(4).order(order).putInt(word).array());
        }
        try {
            // a v4-mapped v6 address (::ffff:a.b.c.d) comes back as the IPv4 address it maps
            return InetAddress.getByAddress(bytes.array());
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(
                    "bad address length: " + HexFormat.of().formatHex(bytes.array()), e);
        }
    }
}
