package dev.etcdmigrate.v2;

import java.io.ByteArrayOutputStream;
import java.io.IOException;

/** A v2 snapshot file laid out like etcd's (crc, raft snapshot with the store JSON and metadata index 9). */
public final class V2SnapshotFiles {

    private V2SnapshotFiles() {}

    public static byte[] snapshotFile(byte[] storeJson) throws IOException {
        ByteArrayOutputStream raft = new ByteArrayOutputStream();
        raft.write(0x0a);
        varint(raft, storeJson.length);
        raft.write(storeJson);
        raft.write(new byte[] {0x12, 0x02, 0x08, 0x09}); // metadata {index: 9}
        ByteArrayOutputStream file = new ByteArrayOutputStream();
        file.write(0x08);
        varint(file, 123456); // crc
        file.write(0x12);
        varint(file, raft.size());
        file.write(raft.toByteArray());
        return file.toByteArray();
    }

    private static void varint(ByteArrayOutputStream out, long v) {
        while ((v & ~0x7fL) != 0) {
            out.write((int) ((v & 0x7f) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }
}
