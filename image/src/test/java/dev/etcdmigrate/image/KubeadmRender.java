package dev.etcdmigrate.image;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * kubeadm's etcd static pod for one node, as {@code kubeadm init phase etcd local --config /kubeadm.yaml --rootfs
 * ROOTFS} renders it: the one way KubeadmCheck, NodeCheck and ThreeNodeCheck render it. kubeadm chroots into ROOTFS,
 * so it reads /kubeadm.yaml and /patches there and writes the manifest and any certificates under ROOTFS.
 */
final class KubeadmRender {

    /**
     * A node's kubeadm configuration (v1beta4 InitConfiguration and ClusterConfiguration); {@code extraArgs}: etcd's
     * extraArgs in order, name to value.
     */
    record Node(
            String kubernetesVersion,
            String name,
            String advertiseAddress,
            Path certificatesDir,
            Path dataDir,
            Optional<String> etcdImageTag,
            Map<String, String> extraArgs) {

        static Node of(
                String kubernetesVersion, String name, String advertiseAddress, Path certificatesDir, Path dataDir) {
            return new Node(
                    kubernetesVersion, name, advertiseAddress, certificatesDir, dataDir, Optional.empty(), Map.of());
        }

        /** With ClusterConfiguration's etcd.local.imageTag. */
        Node imageTag(Optional<String> tag) {
            return new Node(kubernetesVersion, name, advertiseAddress, certificatesDir, dataDir, tag, extraArgs);
        }

        Node extraArg(String flag, String value) {
            Map<String, String> more = new LinkedHashMap<>(extraArgs);
            more.put(flag, value);
            return new Node(kubernetesVersion, name, advertiseAddress, certificatesDir, dataDir, etcdImageTag, more);
        }

        /** /kubeadm.yaml; {@code patched}: the InitConfiguration names /patches (kubeadm refuses --patches next to --config). */
        String yaml(boolean patched) {
            return """
                    apiVersion: kubeadm.k8s.io/v1beta4
                    kind: InitConfiguration
                    localAPIEndpoint:
                      advertiseAddress: %s
                      bindPort: 6443
                    nodeRegistration:
                      name: %s
                    %s
                    ---
                    apiVersion: kubeadm.k8s.io/v1beta4
                    kind: ClusterConfiguration
                    kubernetesVersion: %s
                    certificatesDir: %s
                    etcd:
                      local:
                        dataDir: %s
                    %s%s""".formatted(
                            advertiseAddress,
                            name,
                            patched ? "patches:\n  directory: /patches" : "",
                            kubernetesVersion,
                            certificatesDir,
                            dataDir,
                            etcdImageTag.map(t -> "    imageTag: " + t + "\n").orElse(""),
                            extraArgs.isEmpty()
                                    ? ""
                                    : "    extraArgs:\n"
                                            + extraArgs.entrySet().stream()
                                                    .map(a -> "    - {name: " + a.getKey() + ", value: \""
                                                            + a.getValue() + "\"}\n")
                                                    .collect(Collectors.joining()));
        }
    }

    private final Path kubeadm;
    private final Path rootfs;
    private boolean patched;
    private Node node;

    /** {@code kubeadm}: the binary (KubeadmCheck.kubeadm builds it); {@code rootfs}: where it renders. */
    KubeadmRender(Path kubeadm, Path rootfs) throws IOException {
        this.kubeadm = kubeadm;
        this.rootfs = Files.createDirectories(rootfs);
    }

    /** The files of one of the project's patch dirs (manifests/kubeadm/NAME, rendered) into ROOTFS/patches. */
    KubeadmRender patches(Path dir) throws IOException {
        Path into = Files.createDirectories(rootfs.resolve("patches"));
        try (Stream<Path> files = Files.list(dir)) {
            for (Path file : files.toList())
                Files.copy(file, into.resolve(file.getFileName()), StandardCopyOption.REPLACE_EXISTING);
        }
        patched = true;
        return this;
    }

    /** Writes ROOTFS/kubeadm.yaml for {@code node} (after any {@link #patches}). */
    KubeadmRender configure(Node node) throws IOException {
        this.node = node;
        Files.writeString(rootfs.resolve("kubeadm.yaml"), node.yaml(patched));
        return this;
    }

    /**
     * kubeadm's own etcd CA, server, peer and health-check certificates, so the TLS files the manifest names exist:
     * written inside ROOTFS, then moved to the node's certificates dir on the host (the path the manifest names).
     */
    void certificates() throws Exception {
        for (String cert : List.of("etcd-ca", "etcd-server", "etcd-peer", "etcd-healthcheck-client")) {
            kubeadm("init", "phase", "certs", cert);
        }
        Path pki = node.certificatesDir();
        Path written = rootfs.resolve(pki.toString().substring(1));
        assertTrue(
                Files.isRegularFile(written.resolve("etcd/peer.crt")),
                "kubeadm wrote no " + written.resolve("etcd/peer.crt"));
        Files.move(written, pki);
    }

    /** The etcd static pod's manifest kubeadm wrote (ROOTFS/etc/kubernetes/manifests/etcd.yaml). */
    Path etcdLocal() throws Exception {
        kubeadm("init", "phase", "etcd", "local");
        return rootfs.resolve("etc/kubernetes/manifests/etcd.yaml");
    }

    /** One kubeadm phase on this node's configuration (KubeadmCheck's process: only PATH and HOME); fails on non-zero. */
    private void kubeadm(String... phase) throws IOException, InterruptedException {
        if (node == null) throw new IllegalStateException("configure(node) first");
        List<String> command = new ArrayList<>(List.of(kubeadm.toString()));
        command.addAll(List.of(phase));
        command.addAll(List.of("--config", "/kubeadm.yaml", "--rootfs", rootfs.toString()));
        KubeadmCheck.Result result = KubeadmCheck.exec(command, Map.of(), 120);
        assertTrue(
                result.exit() == 0, String.join(" ", command) + " exited " + result.exit() + ":\n" + result.output());
    }
}
