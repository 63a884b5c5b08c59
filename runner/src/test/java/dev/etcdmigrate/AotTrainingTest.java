package dev.etcdmigrate;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The AOT training's runs are checked, the JSON one too: one that fails stops the build. */
class AotTrainingTest {

    @Test
    void aTrainingRunInJsonLinesThatFailsStopsTheTraining(@TempDir Path dir) {
        List<String> refused =
                List.of("--data-dir", dir.resolve("data").toString(), "--bin-dir", dir.toString(), "--no-such-flag");
        IllegalStateException e = assertThrows(
                IllegalStateException.class,
                () -> AotTraining.runNoOp(
                        "the training migration in JSON lines", refused, Map.of("LOG_FORMAT", "json")));
        assertTrue(e.getMessage().contains("exited with 2, not 0"), e.getMessage());
    }

    /** The restarts of real data are each a whole no-op (exit 0): read without damage, the member found. */
    @Test
    void theRestartsOfRealEtcdDataRunToTheEnd(@TempDir Path dir) throws Exception {
        AotTraining.trainRestarts(dir);
    }
}
