package dev.etcdmigrate.etcd.binary;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.etcdmigrate.process.Children;
import dev.etcdmigrate.version.EtcdVersion;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BinaryCheckTest {

    @Test
    void questionsAreAskedAtOnce() throws Exception {
        // each question waits for all three to have started: asked one after another, none would return
        CountDownLatch started = new CountDownLatch(3);
        AtomicInteger answered = new AtomicInteger();
        BinaryCheck.Question q = () -> {
            started.countDown();
            if (!started.await(10, TimeUnit.SECONDS)) throw new IllegalStateException("asked one at a time");
            answered.incrementAndGet();
        };
        BinaryCheck.askAll(List.of(q, q, q));
        assertEquals(3, answered.get());
    }

    @Test
    void theFirstFailureInPlanOrderIsThrownWhateverFailedFirst() {
        CountDownLatch secondFailed = new CountDownLatch(1);
        BinaryCheck.Question first = () -> {
            secondFailed.await(10, TimeUnit.SECONDS);
            throw new BinaryCheck.WrongBinaryException("etcd-3.5.35 reports version 3.4.23");
        };
        BinaryCheck.Question second = () -> {
            try {
                throw new BinaryCheck.RejectedFlagException("etcd 3.6.16 rejects --enable-v2");
            } finally {
                secondFailed.countDown();
            }
        };
        BinaryCheck.WrongBinaryException thrown = assertThrows(
                BinaryCheck.WrongBinaryException.class, () -> BinaryCheck.askAll(List.of(first, () -> {}, second)));
        assertEquals("etcd-3.5.35 reports version 3.4.23", thrown.getMessage());
    }

    @Test
    void theKeyOfAnAnswerIsStableAndTellsInputsApart() {
        String a = BinaryCheck.digest("/bin/etcd-3.6.16|(dev=1,ino=2)|100|5|target --name\u0000m1");
        org.junit.jupiter.api.Assertions.assertEquals(
                a, BinaryCheck.digest("/bin/etcd-3.6.16|(dev=1,ino=2)|100|5|target --name\u0000m1"));
        org.junit.jupiter.api.Assertions.assertTrue(a.matches("[0-9a-f]{32}"), a);
        java.util.Set<String> keys = new java.util.HashSet<>();
        for (int i = 0; i < 10_000; i++) keys.add(BinaryCheck.digest("/bin/etcd-3.6.16|" + i + "|100|5|target"));
        org.junit.jupiter.api.Assertions.assertEquals(10_000, keys.size());
        org.junit.jupiter.api.Assertions.assertNotEquals(BinaryCheck.digest("ab"), BinaryCheck.digest("ba"));
    }

    @Test
    void theTargetsAnswerDependsOnEtcdsVariablesNotTheRunners() {
        org.junit.jupiter.api.Assertions.assertEquals(
                java.util.Map.of("ETCD_NAME", "m1", "ETCDCTL_API", "3"),
                BinaryCheck.answerEnvironment(java.util.Map.of(
                        "ETCD_NAME", "m1",
                        "ETCDCTL_API", "3",
                        "ETCD_MIGRATE_JAVA_OPTS", "-Xmx64m",
                        "HOME", "/root")));
    }

    @TempDir
    Path dir;

    /** A fake etcd that reports {@code version} and notes each run in {@code runs}. */
    private Path fakeEtcd(String name, String version) throws Exception {
        Path binary = dir.resolve(name);
        Files.writeString(
                binary,
                "#!/bin/sh\necho run >> " + dir.resolve(name + ".runs") + "\necho \"etcd Version: " + version + "\"\n");
        Files.setPosixFilePermissions(binary, PosixFilePermissions.fromString("rwx------"));
        return binary;
    }

    private long runs(Path binary) throws Exception {
        Path file = dir.resolve(binary.getFileName() + ".runs");
        return Files.exists(file) ? Files.readAllLines(file).size() : 0;
    }

    @Test
    void aQuestionStartedAheadIsAnsweredByItsOneProcess() throws Exception {
        Path etcd = fakeEtcd("etcd-3.5.35", "3.5.35");
        Children children = new Children(Duration.ofSeconds(5));
        BinaryCheck check = new BinaryCheck(children);
        List<String> args = List.of("--name", "m1");
        check.startAsking(etcd, EtcdVersion.parse("3.5.35"), args, Map.of());
        check.targetAccepts(etcd, EtcdVersion.parse("3.5.35"), Optional::empty, args, Map.of());
        check.awaitUnasked();
        assertEquals(1, runs(etcd));
        assertEquals(0, children.size());
        assertEquals(1, check.remembered().size());
    }

    @Test
    void aWrongBinaryStartedAheadIsRefusedWhereItIsAsked() throws Exception {
        Path etcd = fakeEtcd("etcd-3.5.35", "3.4.23");
        BinaryCheck check = new BinaryCheck(new Children(Duration.ofSeconds(5)));
        check.startAsking(etcd, EtcdVersion.parse("3.5.35"), List.of(), Map.of());
        assertThrows(
                BinaryCheck.WrongBinaryException.class,
                () -> check.targetAccepts(etcd, EtcdVersion.parse("3.5.35"), Optional::empty, List.of(), Map.of()));
        assertEquals(List.of(), check.remembered());
    }

    @Test
    void aBinaryReplacedAfterItsQuestionStartedIsAskedAgain() throws Exception {
        Path etcd = fakeEtcd("etcd-3.5.35", "3.5.35");
        BinaryCheck check = new BinaryCheck(new Children(Duration.ofSeconds(5)));
        check.startAsking(etcd, EtcdVersion.parse("3.5.35"), List.of(), Map.of());
        check.awaitUnasked();
        // another file under the name: a new inode, size and time
        Path other = fakeEtcd("other", "3.4.23");
        Files.setLastModifiedTime(
                other, FileTime.fromMillis(Files.getLastModifiedTime(etcd).toMillis() + 5_000));
        Files.move(other, etcd, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        assertThrows(
                BinaryCheck.WrongBinaryException.class,
                () -> check.targetAccepts(etcd, EtcdVersion.parse("3.5.35"), Optional::empty, List.of(), Map.of()));
    }

    @Test
    void aQuestionStartedAheadThatNoPlanAsksIsWaitedForAndKeepsNothing() throws Exception {
        Path etcd = fakeEtcd("etcd-3.6.16", "3.6.16");
        Children children = new Children(Duration.ofSeconds(5));
        BinaryCheck check = new BinaryCheck(children);
        check.startAsking(etcd, EtcdVersion.parse("3.6.16"), List.of("--name", "m1"), Map.of());
        check.awaitUnasked();
        assertEquals(1, runs(etcd));
        assertEquals(0, children.size());
        assertEquals(List.of(), check.remembered());
    }

    @Test
    void anAnswerRememberedFromAnEarlierStartRunsNoProcess() throws Exception {
        Path etcd = fakeEtcd("etcd-3.5.35", "3.5.35");
        BinaryCheck first = new BinaryCheck(new Children(Duration.ofSeconds(5)));
        first.targetAccepts(etcd, EtcdVersion.parse("3.5.35"), Optional::empty, List.of(), Map.of());
        BinaryCheck later = new BinaryCheck(new Children(Duration.ofSeconds(5))).remembering(first.remembered());
        later.startAsking(etcd, EtcdVersion.parse("3.5.35"), List.of(), Map.of());
        later.targetAccepts(etcd, EtcdVersion.parse("3.5.35"), Optional::empty, List.of(), Map.of());
        assertEquals(1, runs(etcd));
    }
}
