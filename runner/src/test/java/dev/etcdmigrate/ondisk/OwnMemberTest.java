package dev.etcdmigrate.ondisk;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The member's name and peer URLs from etcd's member JSON, without a JSON library (a start reads it every time). */
class OwnMemberTest {

    @Test
    void etcdsMemberJsonGivesTheNameAndPeers() {
        String json = "{\"id\":10276657743932975437,\"peerURLs\":[\"http://10.0.0.1:2380\",\"https://a:1\"],"
                + "\"name\":\"cp-1\",\"clientURLs\":[\"http://10.0.0.1:2379\"]}";
        assertEquals(Optional.of("cp-1"), OwnMember.field(json, "name"));
        assertEquals(List.of("http://10.0.0.1:2380", "https://a:1"), OwnMember.stringsOf(json, "peerURLs"));
    }

    @Test
    void onlyTheOutermostKeyCountsAndEscapesAreDecoded() {
        String json =
                "{\"peerURLs\":[\"x\\\"name\\\":\\\"no\"],\"nested\":{\"name\":\"no\"},\"name\":\"a\\u003cb\\\\c\"}";
        assertEquals(Optional.of("a<b\\c"), OwnMember.field(json, "name"));
        assertEquals(List.of("x\"name\":\"no"), OwnMember.stringsOf(json, "peerURLs"));
    }

    @Test
    void absentCutShortOrOfAnotherShapeIsEmpty() {
        assertEquals(Optional.empty(), OwnMember.field("{\"id\":1,\"peerURLs\":[]}", "name"));
        assertEquals(Optional.empty(), OwnMember.field("{\"name\":\"cut", "name"));
        assertEquals(Optional.empty(), OwnMember.field("{\"name\":7}", "name"));
        assertEquals(List.of(), OwnMember.stringsOf("{\"peerURLs\":[\"cut", "peerURLs"));
        assertEquals(Optional.empty(), OwnMember.field("", "name"));
    }
}
