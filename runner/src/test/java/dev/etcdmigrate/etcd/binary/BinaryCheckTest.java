package dev.etcdmigrate.etcd.binary;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

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
}
