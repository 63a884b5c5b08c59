package dev.etcdmigrate.version;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class DataVersionTest {

    @Test
    void parsesVersionAndStorage() {
        DataVersion v = DataVersion.parse("3.5.21/etcd3");
        assertEquals(EtcdVersion.parse("3.5.21"), v.version());
        assertEquals(StorageApi.ETCD3, v.storage());
        assertEquals(new DataVersion(new EtcdVersion(2, 2, 1), StorageApi.ETCD2), DataVersion.parse("2.2.1/etcd2"));
    }

    @Test
    void toleratesWhiteSpaceAroundTheLineAsKubernetesToolDid() {
        DataVersion v = DataVersion.parse("3.5.21/etcd3");
        for (String text : List.of(
                "3.5.21/etcd3\n",
                "3.5.21/etcd3\r\n",
                " 3.5.21/etcd3 ",
                "3.5.21/etcd3\n\n",
                "\t3.5.21/etcd3\r\n\r\n",
                "3.5.21/etcd3 \n")) {
            assertEquals(v, DataVersion.parse(text), text);
        }
    }

    @Test
    void whiteSpaceInsideTheLineOrASecondLineIsStillAnError() {
        for (String text : List.of("3.5.21 /etcd3", "3.5.21/ etcd3", "3.5.21/etcd3\nx", "3.5.21\n/etcd3", "")) {
            assertThrows(IllegalArgumentException.class, () -> DataVersion.parse(text), text);
        }
    }

    @Test
    void formatHasNoTrailingNewlineAndRoundTrips() {
        DataVersion v = DataVersion.of("3.6.16", StorageApi.ETCD3);
        assertEquals("3.6.16/etcd3", v.format());
        assertEquals("3.6.16/etcd3", v.toString());
        assertEquals(v, DataVersion.parse(v.format()));
    }

    static Stream<Arguments> garbage() {
        return Stream.of(
                Arguments.of("", "''"),
                Arguments.of("\n", "'\\n'"),
                Arguments.of("garbage", "'garbage'"),
                Arguments.of("v3.5.1/etcd3", "'v3.5.1/etcd3'"),
                Arguments.of("3.5/etcd3", "'3.5/etcd3'"),
                Arguments.of("3.5.1-rc.0/etcd3", "'3.5.1-rc.0/etcd3'"),
                Arguments.of("3.5.1/etcd3/", "'3.5.1/etcd3/'"),
                Arguments.of("3.5.1//etcd3", "'3.5.1//etcd3'"),
                Arguments.of("3.5.1/etcd3/x", "'3.5.1/etcd3/x'"),
                Arguments.of("3.5.1", "'3.5.1'"),
                Arguments.of("/etcd3", "'/etcd3'"),
                Arguments.of("3.5.1/", "'3.5.1/'"),
                Arguments.of("3.5.1/etcd4", "'3.5.1/etcd4'"),
                Arguments.of("3.5.1/ETCD3", "'3.5.1/ETCD3'"),
                Arguments.of("3.5.1 /etcd3", "'3.5.1 /etcd3'"),
                Arguments.of("3.5.1/etcd3\n3.4.2/etcd3", "'3.5.1/etcd3\\n3.4.2/etcd3'"),
                Arguments.of("3.5.1/etcd3\r\n3.4.2/etcd3", "'3.5.1/etcd3\\x0d\\n3.4.2/etcd3'"));
    }

    @ParameterizedTest
    @MethodSource("garbage")
    void rejectsGarbageAndSaysWhatItFound(String text, String quoted) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataVersion.parse(text));
        assertTrue(
                e.getMessage().contains("found " + quoted),
                "message should contain found " + quoted + ": " + e.getMessage());
        assertTrue(e.getMessage().contains("<version>/<etcd2|etcd3>"), e.getMessage());
    }

    @Test
    void hugeGarbageIsCutInTheMessage() {
        String text = "x".repeat(10_000);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataVersion.parse(text));
        assertTrue(e.getMessage().contains("'" + "x".repeat(64) + "...'"), e.getMessage());
        assertTrue(
                e.getMessage().length() < 400,
                "message length " + e.getMessage().length());
    }

    @Test
    void controlCharactersOutsideTheComponentsAreEscaped() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataVersion.parse("\u0000"));
        assertTrue(e.getMessage().contains("found '\\x00'"), e.getMessage());
        assertFalse(e.getMessage().chars().anyMatch(c -> c < 0x20), e.getMessage());
    }

    @Test
    void hugeGarbageWithASlashIsCutInTheMessage() {
        String text = "x".repeat(10_000) + "/etcd3";
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataVersion.parse(text));
        assertTrue(
                e.getMessage().length() < 400,
                "message length " + e.getMessage().length());
    }

    @ParameterizedTest
    @ValueSource(strings = {"3.5.1/etcd3\u0000", "\u001b[31m3.5.1/etcd3"})
    void controlCharactersInAComponentAreEscapedInTheMessage(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> DataVersion.parse(text));
        assertTrue(e.getMessage().contains("\\x"), e.getMessage());
        assertFalse(e.getMessage().chars().anyMatch(c -> c < 0x20), e.getMessage());
    }

    @Test
    void ofRejectsAMalformedVersion() {
        assertThrows(IllegalArgumentException.class, () -> DataVersion.of("3.5", StorageApi.ETCD3));
    }
}
