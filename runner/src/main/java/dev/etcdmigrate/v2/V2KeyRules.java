package dev.etcdmigrate.v2;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * What a v3 key and value must be to live in the v2 store, checked while streaming the keyspace in
 * byte order: a clean absolute path (v2 cleans paths, so /a//b or /a/ would become another key), no
 * key that is also the directory of another (/a and /a/b), and UTF-8 text (the v2 API carries strings:
 * a protobuf-encoded Kubernetes object would not come back byte for byte).
 */
public final class V2KeyRules {

    /** Keys seen so far that are prefixes of the current key: in byte order, only these can be its parents. */
    private final Deque<String> prefixes = new ArrayDeque<>();

    /** The reason this key cannot be carried into v2, if any. */
    public Optional<String> check(byte[] keyBytes, byte[] value) {
        Optional<String> key = utf8(keyBytes);
        if (key.isEmpty()) return Optional.of("the key is not UTF-8 text");
        String k = key.get();
        if (!k.startsWith("/")) return Optional.of("the key does not start with /");
        if (k.length() == 1
                || k.endsWith("/")
                || k.contains("//")
                || k.contains("/./")
                || k.contains("/../")
                || k.endsWith("/.")
                || k.endsWith("/..")) {
            return Optional.of("v2 would clean the path into another key");
        }
        while (!prefixes.isEmpty() && !k.startsWith(prefixes.peekLast())) {
            prefixes.removeLast();
        }
        for (String p : prefixes) {
            if (k.startsWith(p + "/")) {
                prefixes.addLast(k);
                return Optional.of(
                        "it lies under " + p + ", which is a key itself (a v2 directory cannot hold a value)");
            }
        }
        prefixes.addLast(k);
        if (utf8(value).isEmpty()) return Optional.of("the value is not UTF-8 text (e.g. a protobuf-encoded object)");
        return Optional.empty();
    }

    private static Optional<String> utf8(byte[] bytes) {
        try {
            return Optional.of(StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString());
        } catch (CharacterCodingException e) {
            return Optional.empty();
        }
    }
}
