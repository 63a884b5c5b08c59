package dev.etcdmigrate.config;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerArgsCheckTest {

    @Test
    void readableFilesGivenInPairsPass(@TempDir Path dir) throws Exception {
        Path cert = Files.writeString(dir.resolve("peer.crt"), "c");
        Path key = Files.writeString(dir.resolve("peer.key"), "k");
        Path ca = Files.writeString(dir.resolve("ca.crt"), "a");
        assertEquals(
                List.of(),
                ServerArgsCheck.problems(List.of(
                        "--peer-cert-file=" + cert,
                        "--peer-key-file",
                        key.toString(),
                        "-peer-trusted-ca-file=" + ca,
                        "--peer-client-cert-auth",
                        "--snapshot-count=5")));
    }

    @Test
    void missingFilesAndDirectoriesAreNamedWithTheirFlag(@TempDir Path dir) {
        assertEquals(
                List.of(
                        "--peer-cert-file=/nonexistent/cert.pem: no such file",
                        "--peer-key-file=" + dir + ": not a regular file",
                        "--trusted-ca-file names no file"),
                ServerArgsCheck.problems(List.of(
                        "--peer-cert-file=/nonexistent/cert.pem",
                        "--peer-key-file",
                        dir.toString(),
                        "--trusted-ca-file=")));
        // Go's flag package takes the next word whatever it is, and refuses a flag without one
        assertEquals(
                List.of("--cert-file=--key-file: no such file", "--cert-file without --key-file"),
                ServerArgsCheck.problems(List.of("--cert-file", "--key-file")));
        assertEquals(
                List.of("flag needs an argument: -trusted-ca-file"),
                ServerArgsCheck.problems(List.of("-trusted-ca-file")));
        assertEquals(
                List.of("'stray' is not a flag, and etcd reads none after it"),
                ServerArgsCheck.problems(List.of("--peer-auto-tls", "stray", "--cert-file=/nonexistent")));
    }

    @Test
    void aCertificateWithoutItsKeyIsAProblem(@TempDir Path dir) throws Exception {
        Path cert = Files.writeString(dir.resolve("server.crt"), "c");
        assertEquals(
                List.of("--cert-file without --key-file"), ServerArgsCheck.problems(List.of("--cert-file=" + cert)));
        assertEquals(
                List.of("--peer-key-file without --peer-cert-file"),
                ServerArgsCheck.problems(List.of("--peer-key-file=" + cert)));
    }

    @Test
    void flagsThatNameNoFileAreLeftToEtcd() {
        assertEquals(List.of(), ServerArgsCheck.problems(List.of("--peer-auto-tls", "--log-level", "debug")));
    }
}
