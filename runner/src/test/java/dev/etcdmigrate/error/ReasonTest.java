package dev.etcdmigrate.error;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.ConnectException;
import org.junit.jupiter.api.Test;

class ReasonTest {

    @Test
    void neverARawNull() {
        assertEquals("ConnectException", Reason.of(new ConnectException()));
        assertEquals("IOException: refused", Reason.of(new IOException(null, new ConnectException("refused"))));
        assertEquals("timed out", Reason.of(new IOException("timed out")));
        assertEquals("no detail", Reason.of(null));
    }
}
