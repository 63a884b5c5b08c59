package dev.etcdmigrate.it.support;

import java.io.IOException;
import java.io.Writer;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.openssl.jcajce.JcaPKCS8Generator;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * A throwaway CA and peer certificates for 127.0.0.1, written as PEM files etcd reads (private keys
 * PKCS#8, mode 0600): peer TLS in tests without any certificate checked into the repository. Its name
 * matches no test-class pattern of surefire or failsafe, so neither ever takes it for a test.
 */
public final class ThrowawayCa {

    /** A certificate and its key, as files. */
    public record Pem(Path cert, Path key) {}

    private final Path dir;
    private final KeyPair caKeys;
    private final X509CertificateHolder ca;
    private long serial = 1;

    private ThrowawayCa(Path dir, KeyPair caKeys, X509CertificateHolder ca) {
        this.dir = dir;
        this.caKeys = caKeys;
        this.ca = ca;
    }

    /** A new CA in dir (ca.pem). */
    public static ThrowawayCa newCa(Path dir) throws Exception {
        KeyPair keys = ecKeys();
        X500Name name = new X500Name("CN=etcd-migrate test CA");
        X509CertificateHolder ca = new JcaX509v3CertificateBuilder(
                        name, BigInteger.ONE, notBefore(), notAfter(), name, keys.getPublic())
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(true))
                .addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign))
                .build(new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate()));
        ThrowawayCa certificates = new ThrowawayCa(dir, keys, ca);
        certificates.write(dir.resolve("ca.pem"), ca);
        return certificates;
    }

    public Path caFile() {
        return dir.resolve("ca.pem");
    }

    /** A certificate for a peer on 127.0.0.1, good for both ends of a peer connection. */
    public Pem issue(String name) throws Exception {
        return issue(name, "127.0.0.1");
    }

    /** The same for a host with another address (server and client use, SAN = that address). */
    public Pem issue(String name, String address) throws Exception {
        return issue(name, List.of(address), List.of("localhost"));
    }

    /** A server and client certificate whose SANs are these IP addresses and DNS names (kubeadm's etcd certificates). */
    public Pem issue(String name, List<String> addresses, List<String> dnsNames) throws Exception {
        return issue(name, addresses, dnsNames, notAfter());
    }

    /** The same, valid until {@code notAfter} (a certificate that expires while a test runs). */
    public Pem issue(String name, List<String> addresses, List<String> dnsNames, Date notAfter) throws Exception {
        List<GeneralName> sans = new ArrayList<>();
        for (String a : addresses) sans.add(new GeneralName(GeneralName.iPAddress, a));
        for (String d : dnsNames) sans.add(new GeneralName(GeneralName.dNSName, d));
        KeyPair keys = ecKeys();
        X509CertificateHolder cert = new JcaX509v3CertificateBuilder(
                        ca.getSubject(),
                        BigInteger.valueOf(++serial),
                        notBefore(),
                        notAfter,
                        new X500Name("CN=" + name),
                        keys.getPublic())
                .addExtension(Extension.basicConstraints, true, new BasicConstraints(false))
                .addExtension(
                        Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment))
                .addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(new KeyPurposeId[] {
                    KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth
                }))
                .addExtension(
                        Extension.subjectAlternativeName, false, new GeneralNames(sans.toArray(GeneralName[]::new)))
                .build(new JcaContentSignerBuilder("SHA256withECDSA").build(caKeys.getPrivate()));
        Pem pem = new Pem(dir.resolve(name + ".pem"), dir.resolve(name + "-key.pem"));
        write(pem.cert(), cert);
        write(pem.key(), new JcaPKCS8Generator(keys.getPrivate(), null));
        return pem;
    }

    private void write(Path file, Object pemObject) throws IOException {
        Files.deleteIfExists(file);
        Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        try (Writer out = Files.newBufferedWriter(file);
                JcaPEMWriter pem = new JcaPEMWriter(out)) {
            pem.writeObject(pemObject);
        }
    }

    private static KeyPair ecKeys() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(new ECGenParameterSpec("secp256r1"));
        return generator.generateKeyPair();
    }

    private static Date notBefore() {
        return Date.from(Instant.now().minus(Duration.ofHours(1)));
    }

    private static Date notAfter() {
        return Date.from(Instant.now().plus(Duration.ofDays(1)));
    }
}
