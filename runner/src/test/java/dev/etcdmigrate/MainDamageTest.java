package dev.etcdmigrate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.etcdmigrate.it.support.RunnerArgs;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The termination message (what `kubectl describe pod` shows from /dev/termination-log) of a start on a
 * damaged db, through Main as the pod runs it. What it proves: Main's reason for a damaged member/snap/db
 * names the file, the page and what was expected, that nothing was changed, and the way back, on one line
 * in the file Kubernetes reads. What it does not: that a kubelet shows it (NodeCheck's pods do that for
 * other reasons), nor etcd's own panic on such a db (DamageExplanationTest, DamageFuzzIT's migrate runs).
 */
class MainDamageTest {

    @Test
    void aDamagedDbEndsTheRunWithTheFileAndTheWayBackInTheTerminationMessage(@TempDir Path dir) throws Exception {
        Path data = Files.createDirectories(dir.resolve("data"));
        Path db = Files.createDirectories(data.resolve("member/snap")).resolve("db");
        byte[] bytes = dev.etcdmigrate.ondisk.BboltFixtures.db36();
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong(2 * 4096, 0); // page 2 identifies as 0
        Files.write(db, bytes);
        Path termination = Files.writeString(dir.resolve("termination-log"), "");
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        List<String> args = new ArrayList<>(List.of("migrate"));
        args.addAll(RunnerArgs.flags(data, dir.resolve("bin"), "3.6.16", "m0"));
        args.addAll(List.of("--termination-log", termination.toString(), "--no-exec"));
        int exit = Main.run(args, Map.of(), new PrintStream(err, true, StandardCharsets.UTF_8));
        String message = Files.readString(termination);
        assertEquals(3, exit, err.toString(StandardCharsets.UTF_8));
        assertEquals(1, message.lines().count(), message);
        assertTrue(message.startsWith("etcd-migrate: refused: "), message);
        // the start's own refusal of a db its readers prove damaged: the finding named once
        assertTrue(
                message.contains("the data is damaged: member/snap/db (page 2): a page that identifies as 2, found 0"),
                message);
        assertEquals(
                message.indexOf("member/snap/db (page 2)"), message.lastIndexOf("member/snap/db (page 2)"), message);
        assertTrue(message.contains("The way back: the runner holds no backup of this member"), message);
        assertTrue(message.contains("etcdutl snapshot restore SNAPSHOT.db --name m0 --initial-cluster m0="), message);
        assertTrue(Files.notExists(data.resolve("version.txt")), "nothing written");
    }
}
