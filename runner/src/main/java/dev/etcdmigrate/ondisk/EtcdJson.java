package dev.etcdmigrate.ondisk;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** etcd's JSON values in its files (members, the downgrade info, conf change contexts): one that does not parse is damage. */
final class EtcdJson {

    private EtcdJson() {}

    /** Jackson's databind only where members or a downgrade are parsed: a migration's start loads none of it. */
    private static final class Holder {
        static final ObjectMapper MAPPER = new ObjectMapper();
    }

    static JsonNode parse(Path file, String where, byte[] value) throws DamagedFileException {
        try {
            return Holder.MAPPER.readTree(value);
        } catch (IOException e) {
            throw new DamagedFileException(new Damage(file, where, "a JSON value as etcd writes it"));
        }
    }

    static String utf8(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
