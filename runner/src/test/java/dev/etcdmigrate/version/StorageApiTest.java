package dev.etcdmigrate.version;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StorageApiTest {

    @Test
    void parsesBothApisAndPrintsThemBack() {
        assertEquals(StorageApi.ETCD2, StorageApi.parse("etcd2"));
        assertEquals(StorageApi.ETCD3, StorageApi.parse("etcd3"));
        assertEquals("etcd2", StorageApi.ETCD2.toString());
        assertEquals("etcd3", StorageApi.ETCD3.toString());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "ETCD3", "Etcd3", "etcd", "etcd4", "v3", "3", " etcd3", "etcd3 ", "etcd3\n"})
    void rejectsEverythingElse(String text) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StorageApi.parse(text));
        assertTrue(e.getMessage().contains("'" + text + "'"), e.getMessage());
    }

    @Test
    void rejectsNull() {
        assertThrows(IllegalArgumentException.class, () -> StorageApi.parse(null));
    }
}
